#!/usr/bin/env bash
# The sentence Transformer as the phrase scorer (issue 44, study part a), shrunk to fit a session:
# a forward and an inverse sentence model (`rescore train --parallel`'s recipe without dropout or
# averaging, as sentence_rows.sh trains them), each stopped at UPDATES updates on one thread, the
# two at once; then both score every phrase pair the stored lists use, as `rescore score` scores a
# table with any model (log p and log p per target word), and the proxy bench sums each column over
# a hypothesis's phrase pairs, in each direction, per word, and in the best phrase system's shape
# (forward per word with inverse). REFERENCE, a phrase model of the default recipe, joins as `fwd`.
#
#   benchmarks/studies/proxy/sentence_phrase_rows.sh WORK UPDATES OUT PAIRS [REFERENCE.pt]
#   benchmarks/studies/proxy/sentence_phrase_rows.sh WORK 1750 benchmarks/studies/proxy/results/sentence-phrase \
#       WORK/pairs.gz WORK/s1-t2.pt
#
# PAIRS is `proxy_bench.py pairs`' output. WORK gets the models (one already there is not trained
# again), their training logs and the scored pairs; OUT gets models.tsv (each sentence model's
# updates, best dev perplexity, seconds), the training logs and the proxy bench's result files.
set -euo pipefail
[ $# -eq 4 ] || [ $# -eq 5 ] || { sed -n '2,16p' "$0"; exit 2; }
work=$1 updates=$2 out=$3 pairs=$4 reference=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=training_row.sh
source "$here/training_row.sh"
data=$(cd "$here/../../../../shared/data/bible-en-fr" && pwd)
mkdir -p "$work" "$out"

train() {  # direction
    [ -f "$work/sent-$1.pt" ] && return
    OMP_NUM_THREADS=1 rescore train --parallel "$data/corpus/train.en.gz" "$data/corpus/train.fr.gz" \
        --direction "$1" --valid-src "$data/corpus/dev.en.gz" --valid-tgt "$data/corpus/dev.fr.gz" \
        --valid-every 250 --dropout 0 --average 0 --max-updates "$updates" \
        -o "$work/sent-$1.pt" 2> "$work/sent-$1.train.log"
}
train forward & train inverse & wait

printf 'model\tupdates\tbest dev perplexity\tat update\tseconds\n' > "$out/models.tsv"
for direction in forward inverse; do
    sentence_model_row "$direction" "$work/sent-$direction.train.log" >> "$out/models.tsv"
    # the logs without this machine's paths
    sed "s#$data#DATA#g; s#$work/##g" "$work/sent-$direction.train.log" > "$out/sent-$direction.train.log"
done

models=(--model "$work/sent-forward.pt" --model "$work/sent-inverse.pt")
[ -z "$reference" ] || models+=(--model "$reference")
OMP_NUM_THREADS=2 rescore score "$pairs" "${models[@]}" --per-word --precision fp32 \
    -o "$work/scored-sentence-phrase.gz" --force
count=$((${#models[@]} / 2))  # scores 1-4 are the table's, then each model's log p, then each one per word
columns=(--column sentfwd=5 --column sentinv=6 --column sentfwdpw=$((5 + count)) --column sentinvpw=$((6 + count)))
systems=(--system +sentfwd=sentfwd --system +sentfwdpw=sentfwdpw --system +sentinv=sentinv
         --system +sentinvpw=sentinvpw --system +sentfwdpw+sentinv=sentfwdpw,sentinv
         --system +sentfwd+sentinv+pw=sentfwd,sentfwdpw,sentinv,sentinvpw)
if [ -n "$reference" ]; then
    columns+=(--column fwdpw=$((7 + count)))
    systems+=(--system +fwdpw=fwdpw --system +fwdpw+sentinv=fwdpw,sentinv)
fi
OMP_NUM_THREADS=2 python3 "$here/proxy_bench.py" run --table "$work/scored-sentence-phrase.gz" \
    "${columns[@]}" "${systems[@]}" --replicates 3 --out "$out"
