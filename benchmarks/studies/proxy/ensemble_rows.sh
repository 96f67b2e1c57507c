#!/usr/bin/env bash
# Ensemble rows on the proxy bench (issue 44, part 6), beside sentence_rows.sh's and
# cslm_rows.sh's models: two more forward sentence Transformers, the first's recipe and minutes
# with other seeds (`--seed 2`, `--seed 3`), then the stored lists' first NBEST hypotheses
# reranked with a second seed alone (how far one seed is from another), with the seeds as
# features of their own (the log-linear ensemble `moses rerank` makes of several
# --rerank-model), with their mixture as one (the ensemble of `rescore score --ensemble`), and
# with everything. Run sentence_rows.sh and cslm_rows.sh first with the same WORK: their models'
# scores are read back from WORK/scores.
#
#   benchmarks/studies/proxy/ensemble_rows.sh WORK MINUTES NBEST OUT SCORED
#   benchmarks/studies/proxy/ensemble_rows.sh WORK 40 100 benchmarks/studies/proxy/results/ensemble WORK/scored.gz
set -euo pipefail
[ $# -eq 5 ] || { sed -n '2,12p' "$0"; exit 2; }
work=$1 minutes=$2 nbest=$3 out=$4 scored=$5
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=training_row.sh
source "$here/training_row.sh"
corpus=$here/../../../../shared/data/bible-en-fr/corpus
mkdir -p "$work" "$out"

for seed in 2 3; do
    [ -f "$work/sent-forward-seed$seed.pt" ] && continue
    OMP_NUM_THREADS=1 rescore train --parallel "$corpus/train.en.gz" "$corpus/train.fr.gz" \
        --direction forward --valid-src "$corpus/dev.en.gz" --valid-tgt "$corpus/dev.fr.gz" \
        --valid-every 250 --dropout 0 --average 0 --max-time $((minutes * 60)) --seed $seed \
        -o "$work/sent-forward-seed$seed.pt" 2> "$work/sent-forward-seed$seed.train.log"
done

printf 'model\tupdates\tbest dev perplexity\tat update\tseconds\n' > "$out/models.tsv"
for model in forward forward-seed2 forward-seed3; do
    sentence_model_row "$model" "$work/sent-$model.train.log" >> "$out/models.tsv"
done

OMP_NUM_THREADS=1 python3 "$here/proxy_bench.py" run --table "$scored" --nbest-size "$nbest" --cache-dir "$work/scores" \
    --column fwdpw=8 --column inv=6 \
    --sentence-model sfwd="$work/sent-forward.pt" --sentence-model sfwd2="$work/sent-forward-seed2.pt" \
    --sentence-model sfwd3="$work/sent-forward-seed3.pt" \
    --sentence-model sbwd="$work/sent-inverse.pt" --lm cslm="$work/cslm.pt" \
    --mixture smix=sfwd,sfwd2 --mixture smix3=sfwd,sfwd2,sfwd3 \
    --system +sfwd=sfwd,sfwdpw --system +sfwd2=sfwd2,sfwd2pw \
    --system +sfwd+sfwd2=sfwd,sfwdpw,sfwd2,sfwd2pw --system +smix=smix,smixpw \
    --system +sfwd+sfwd2+sfwd3=sfwd,sfwdpw,sfwd2,sfwd2pw,sfwd3,sfwd3pw --system +smix3=smix3,smix3pw \
    --system +smix+sbwd=smix,smixpw,sbwd,sbwdpw \
    --system +fwdpw+inv+sfwd+sfwd2+sbwd+cslm=fwdpw,inv,sfwd,sfwdpw,sfwd2,sfwd2pw,sbwd,sbwdpw,cslm,cslmpw \
    --replicates 3 --out "$out"
