#!/usr/bin/env bash
# The speed row of the proxy study (issue 44, study part c): the main job (`rescore TABLE`) on the
# whole bible table with other options, timed by benchmarks/drivers/main_job.py on 2 threads, then its
# model's column per target word in place of the default's in the best phrase system so far
# (+fwdpw+inv), on the proxy bench beside that system.
#
#   [PROXY=no] benchmarks/studies/proxy/main_job_row.sh WORK NAME OUT SCORED -- RESCORE OPTIONS
#   benchmarks/studies/proxy/main_job_row.sh WORK tiny benchmarks/studies/proxy/results/speed WORK/scored.gz \
#       -- --preset tiny --max-time 420
#
# SCORED is the proxy's pairs scored by the default models as docs/proxy-study.md makes it (score
# columns 6 inv, 8 fwd per word, 11 scores a line). The main job runs as main_job_columns.sh runs
# it (PROXY=no): WORK/NAME gets its files (a main-job.json already there is kept, not run again),
# OUT/NAME/main-job.json its figures (the phases' times, peak memory, perplexities). OUT/NAME gets
# the proxy bench's result files; PROXY=no: the main job only.
set -euo pipefail
[ $# -ge 5 ] && [ "$5" = "--" ] || { sed -n '2,15p' "$0"; exit 2; }
work=$1 name=$2 out=$3 scored=$4
shift 5
here=$(cd "$(dirname "$0")" && pwd)
# the job itself, timed, its figures in OUT/NAME/main-job.json without machine paths
PROXY=no bash "$here/main_job_columns.sh" "$work" "$out" "$name" -- "$@"
[ "${PROXY:-yes}" != no ] || exit 0
model="$work/$name/job/out.model.pt"

OMP_NUM_THREADS=2 rescore score "$scored" --model "$model" --per-word --precision fp32 \
    -o "$work/$name/scored.gz" --force
OMP_NUM_THREADS=2 python3 "$here/proxy_bench.py" run --table "$work/$name/scored.gz" \
    --column fwdpw=8 --column inv=6 --column "${name}pw=13" \
    --system +fwdpw+inv=fwdpw,inv --system "+${name}pw+inv=${name}pw,inv" --replicates 3 --out "$out/$name"
