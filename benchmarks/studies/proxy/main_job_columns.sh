#!/usr/bin/env bash
# The main job at the adopted default and its faster variants (issue 44, study part c): `rescore
# TABLE` on the whole bible table, timed by benchmarks/drivers/main_job.py on 2 threads, then the
# per-word column of every main job in OUT so far, each alone on the proxy bench (3 replicates),
# in one run so that they share the Baseline's replicates.
#
#   [TABLE=...] [PROXY=no] benchmarks/studies/proxy/main_job_columns.sh WORK OUT NAME [-- RESCORE OPTIONS]
#   benchmarks/studies/proxy/main_job_columns.sh WORK benchmarks/studies/proxy/results/main-job default
#   benchmarks/studies/proxy/main_job_columns.sh WORK benchmarks/studies/proxy/results/main-job tiny15k \
#       -- --preset tiny --shortlist-size 15000 --max-time 420
#
# WORK/NAME gets the main job's files (a main-job.json already there is kept, not run again);
# OUT/NAME/main-job.json its figures, with WORK/ and DATA/ for this machine's folders. OUT gets the
# proxy bench's result files (systems +NAMEpw, the names in sorted order). PROXY=no: the main job only.
set -euo pipefail
[ $# -ge 3 ] && { [ $# -eq 3 ] || [ "$4" = "--" ]; } || { sed -n '2,14p' "$0"; exit 2; }
work=$1 out=$2 name=$3
shift 3; [ $# -eq 0 ] || shift
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/../../../../shared/data/bible-en-fr" 2>/dev/null && pwd || echo DATA)
table=${TABLE:-$data/model/phrase-table.gz}
mkdir -p "$work/$name" "$out/$name"
work=$(cd "$work" && pwd)

if [ ! -f "$work/$name/main-job.json" ]; then
    OMP_NUM_THREADS=2 python3 "$here/../../drivers/main_job.py" --table "$table" --work "$work/$name/job" \
        --json-out "$work/$name/main-job.json" -- "$@"
fi
sed -e "s#$work/#WORK/#g" -e "s#$data/#DATA/#g" "$work/$name/main-job.json" > "$out/$name/main-job.json"
[ "${PROXY:-yes}" != no ] || exit 0

[ -f "$work/pairs.gz" ] || python3 "$here/proxy_bench.py" pairs -o "$work/pairs.gz"
models=() columns=() systems=() names=()
for job in "$out"/*/main-job.json; do names+=("$(basename "$(dirname "$job")")"); done
for index in "${!names[@]}"; do  # the per-word columns follow the log p ones, after the table's 5 scores
    models+=(--model "$work/${names[$index]}/job/out.model.pt")
    columns+=(--column "${names[$index]}pw=$((5 + ${#names[@]} + index))")
    systems+=(--system "+${names[$index]}pw=${names[$index]}pw")
done
OMP_NUM_THREADS=2 rescore score "$work/pairs.gz" "${models[@]}" --per-word --precision fp32 \
    -o "$work/main-jobs.scored.gz" --force
OMP_NUM_THREADS=2 python3 "$here/proxy_bench.py" run --table "$work/main-jobs.scored.gz" "${columns[@]}" \
    "${systems[@]}" --replicates 3 --out "$out"
