#!/usr/bin/env bash
# The CSLM's rows on the proxy bench (issue 44, part 6), beside sentence_rows.sh's models: a
# target language model (`rescore train --lm` on the bible's French side, its `small` preset)
# trained for MINUTES on one thread, then the stored lists' first NBEST hypotheses reranked with
# it alone (Cho et al.'s +CSLM), with the best phrase columns (their +CSLM+RNN) and with the
# sentence models. Run sentence_rows.sh first with the same WORK: its models' scores are read
# back from WORK/scores.
#
#   benchmarks/studies/proxy/cslm_rows.sh WORK MINUTES NBEST OUT SCORED
#   benchmarks/studies/proxy/cslm_rows.sh WORK 24 100 benchmarks/studies/proxy/results/cslm WORK/scored.gz
set -euo pipefail
[ $# -eq 5 ] || { sed -n '2,10p' "$0"; exit 2; }
work=$1 minutes=$2 nbest=$3 out=$4 scored=$5
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/../../../../shared/data/bible-en-fr/corpus
mkdir -p "$work" "$out"

if [ ! -f "$work/cslm.pt" ]; then
    OMP_NUM_THREADS=1 rescore train --lm "$corpus/train.fr.gz" --max-time $((minutes * 60)) \
        -o "$work/cslm.pt" 2> "$work/cslm.train.log"
fi

OMP_NUM_THREADS=1 python3 "$here/proxy_bench.py" run --table "$scored" --nbest-size "$nbest" --cache-dir "$work/scores" \
    --column fwdpw=8 --column inv=6 \
    --sentence-model sfwd="$work/sent-forward.pt" --sentence-model sbwd="$work/sent-inverse.pt" --lm cslm="$work/cslm.pt" \
    --system +cslm=cslm,cslmpw --system +fwdpw+inv+cslm=fwdpw,inv,cslm,cslmpw \
    --system +sfwd=sfwd,sfwdpw --system +sfwd+cslm=sfwd,sfwdpw,cslm,cslmpw \
    --system +fwdpw+inv+sfwd+sbwd+cslm=fwdpw,inv,sfwd,sfwdpw,sbwd,sbwdpw,cslm,cslmpw \
    --replicates 3 --out "$out"
