#!/usr/bin/env bash
# Phrase-model recipes on the proxy bench (issue 44, study part a), shrunk to fit a session: each
# recipe trains the forward model on the whole bible table on one thread (two recipes at a time)
# for at most SECONDS, the default model's training time; its column per target word then takes
# the place of the default's in the best phrase system so far (+fwdpw+inv: per-word forward and
# inverse log p), and the proxy bench sets each beside that system on the same lists.
#
#   benchmarks/studies/proxy/recipes.sh WORK SECONDS OUT SCORED NAME='FLAGS' ...
#   benchmarks/studies/proxy/recipes.sh WORK 1500 benchmarks/studies/proxy/results/recipes WORK/scored.gz \
#       dropout='--dropout 0.3' smoothing='--label-smoothing 0.1'
#
# SCORED is the proxy's pairs scored by the default models as docs/proxy-study.md makes it
# (score columns 5 fwd, 6 inv, 8 fwd per word, 11 scores a line). WORK gets each recipe's model,
# its training log and the pairs scored again; OUT gets models.tsv (each recipe's best held-out
# and honest perplexity, updates, seconds) and the proxy bench's result files.
set -euo pipefail
[ $# -ge 5 ] || { sed -n '2,15p' "$0"; exit 2; }
work=$1 seconds=$2 out=$3 scored=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=training_row.sh
source "$here/training_row.sh"
table=$here/../../../../shared/data/bible-en-fr/model/phrase-table.gz
mkdir -p "$work" "$out"

names=() running=0
for recipe in "$@"; do
    name=${recipe%%=*} flags=${recipe#*=}
    names+=("$name")
    # shellcheck disable=SC2086  # the flags are words
    OMP_NUM_THREADS=1 rescore train "$table" -o "$work/$name.pt" --max-time "$seconds" \
        --cache-dir "$work/$name.cache" --force $flags 2> "$work/$name.train.log" &
    running=$((running + 1))
    if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n; running=$((running - 1)); done

printf 'recipe\tupdates\tbest held-out perplexity\tat update\thonest perplexity\tseconds\n' > "$out/models.tsv"
for name in "${names[@]}"; do
    training_row "$name" "$work/$name.train.log" >> "$out/models.tsv"
done

models=() columns=(--column fwdpw=8 --column inv=6) systems=(--system +fwdpw+inv=fwdpw,inv)
for name in "${names[@]}"; do models+=(--model "$work/$name.pt"); done
OMP_NUM_THREADS=2 rescore score "$scored" "${models[@]}" --per-word --precision fp32 -o "$work/scored-recipes.gz" --force
index=$((11 + ${#names[@]} + 1))  # the per-word columns follow the new log p ones
for name in "${names[@]}"; do
    columns+=(--column "${name}pw=$index") systems+=(--system "+${name}pw+inv=${name}pw,inv")
    index=$((index + 1))
done
OMP_NUM_THREADS=2 python3 "$here/proxy_bench.py" run --table "$work/scored-recipes.gz" "${columns[@]}" "${systems[@]}" \
    --replicates 3 --out "$out"
