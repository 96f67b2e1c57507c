#!/usr/bin/env bash
# Sentence-level rows on the proxy bench (issue 44, part 6), shrunk to fit a session: a forward
# and a backward (target -> source, `--direction inverse`) sentence Transformer, each trained for
# MINUTES on one thread with `rescore train --parallel`'s recipe without dropout or averaging
# (the recipe's ablation: what learns fastest in its first 2,000 updates), then the stored lists'
# first NBEST hypotheses reranked with them: each model as `moses rerank` adds it (log p and log p
# per word of the side it predicts), the two together (noisy-channel reranking), and beside the
# best phrase columns (+fwdpw+inv).
#
#   benchmarks/studies/proxy/sentence_rows.sh WORK MINUTES NBEST OUT SCORED
#   benchmarks/studies/proxy/sentence_rows.sh WORK 40 100 benchmarks/studies/proxy/results/sentence WORK/scored.gz
#
# SCORED is the proxy's pairs scored by the default phrase models as docs/proxy-study.md makes it
# (score columns 6 inv, 8 fwd per word). WORK gets the models and their training logs; OUT gets
# models.tsv (each model's updates, best dev perplexity, seconds) and the proxy bench's files.
set -euo pipefail
[ $# -eq 5 ] || { sed -n '2,15p' "$0"; exit 2; }
work=$1 minutes=$2 nbest=$3 out=$4 scored=$5
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=training_row.sh
source "$here/training_row.sh"
corpus=$here/../../../../shared/data/bible-en-fr/corpus
mkdir -p "$work" "$out"

for direction in forward inverse; do
    [ -f "$work/sent-$direction.pt" ] && continue
    OMP_NUM_THREADS=1 rescore train --parallel "$corpus/train.en.gz" "$corpus/train.fr.gz" \
        --direction "$direction" --valid-src "$corpus/dev.en.gz" --valid-tgt "$corpus/dev.fr.gz" \
        --valid-every 250 --dropout 0 --average 0 --max-time $((minutes * 60)) \
        -o "$work/sent-$direction.pt" 2> "$work/sent-$direction.train.log"
done

printf 'model\tupdates\tbest dev perplexity\tat update\tseconds\n' > "$out/models.tsv"
for direction in forward inverse; do
    sentence_model_row "$direction" "$work/sent-$direction.train.log" >> "$out/models.tsv"
done

OMP_NUM_THREADS=1 python3 "$here/proxy_bench.py" run --table "$scored" --nbest-size "$nbest" --cache-dir "$work/scores" \
    --column fwdpw=8 --column inv=6 \
    --sentence-model sfwd="$work/sent-forward.pt" --sentence-model sbwd="$work/sent-inverse.pt" \
    --system +fwdpw+inv=fwdpw,inv \
    --system +sfwd=sfwd,sfwdpw --system +sbwd=sbwd,sbwdpw --system +sfwd+sbwd=sfwd,sfwdpw,sbwd,sbwdpw \
    --system +fwdpw+inv+sfwd=fwdpw,inv,sfwd,sfwdpw \
    --system +fwdpw+inv+sfwd+sbwd=fwdpw,inv,sfwd,sfwdpw,sbwd,sbwdpw \
    --replicates 3 --out "$out"
