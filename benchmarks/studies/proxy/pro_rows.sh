#!/usr/bin/env bash
# PRO against MERT on the proxy bench (issue 44, part 2's optional optimizer): the same
# 100-best lists and models as ensemble_rows.sh, every system's weights tuned by PRO in numpy
# (Hopkins and May's tuning as ranking, moses_integration/nbest/pro_search.py) instead of MERT:
# Baseline, the forward sentence model, the two seeds, and all ten features, where MERT gave less
# than the two seeds alone. Run sentence_rows.sh, cslm_rows.sh and ensemble_rows.sh first with
# the same WORK: the models' scores are read back from WORK/scores.
#
#   benchmarks/studies/proxy/pro_rows.sh WORK NBEST OUT SCORED
#   benchmarks/studies/proxy/pro_rows.sh WORK 100 benchmarks/studies/proxy/results/pro WORK/scored.gz
set -euo pipefail
[ $# -eq 4 ] || { sed -n '2,10p' "$0"; exit 2; }
work=$1 nbest=$2 out=$3 scored=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"

OMP_NUM_THREADS=1 python3 "$here/proxy_bench.py" run --table "$scored" --nbest-size "$nbest" --cache-dir "$work/scores" \
    --optimizer pro --column fwdpw=8 --column inv=6 \
    --sentence-model sfwd="$work/sent-forward.pt" --sentence-model sfwd2="$work/sent-forward-seed2.pt" \
    --sentence-model sbwd="$work/sent-inverse.pt" --lm cslm="$work/cslm.pt" \
    --system +sfwd=sfwd,sfwdpw --system +sfwd+sfwd2=sfwd,sfwdpw,sfwd2,sfwd2pw \
    --system +fwdpw+inv+sfwd+sfwd2+sbwd+cslm=fwdpw,inv,sfwd,sfwdpw,sfwd2,sfwd2pw,sbwd,sbwdpw,cslm,cslmpw \
    --replicates 3 --out "$out"
