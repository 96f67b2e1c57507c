#!/usr/bin/env bash
# A recipe's seeds trained to their own stop (issue 44, study part d): what start_probe.sh's
# 2,000 updates suggest, settled where the runs end. The forward model on the whole bible table
# with each SEED, one thread each, JOBS at a time, with the options given in place of the default
# recipe's, until early stopping ends it; then each model's per-word column on the proxy bench
# (2 replicates, as stability.sh's, so its Δ compares with that page's rows).
#
#   [SEEDS='1 2 3'] [JOBS=2] [PROXY=no] benchmarks/studies/proxy/to_its_stop.sh WORK OUT NAME [OPTION...]
#   benchmarks/studies/proxy/to_its_stop.sh WORK benchmarks/studies/proxy/results/to-its-stop lr3e-3 --learning-rate 3e-3
#
# start_probe.sh trains them (UPDATES `stop`) and writes OUT/models.tsv (a row per seed; one already
# there is not trained again); OUT also gets each run's training log and the proxy bench's result
# files (systems +NAME-sSEED). WORK keeps the models and the bench's pairs. TABLE: another phrase
# table in place of the bible one; PROXY=no: train and list the runs only.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,14p' "$0"; exit 2; }
work=$1 out=$2 name=$3; shift 3
options=("$@")
read -r -a seeds <<< "${SEEDS:-1 2 3}"
here=$(cd "$(dirname "$0")" && pwd)
table=${TABLE:-$here/../../../../shared/data/bible-en-fr/model/phrase-table.gz}
"$here/start_probe.sh" "$work" stop "$out" "$name" "${options[@]}"
for seed in "${seeds[@]}"; do  # the logs without this machine's paths
    sed -e "s#$work/#WORK/#g" -e "s#$table#TABLE#g" "$work/$name-s$seed.train.log" > "$out/$name-s$seed.train.log"
done
[ "${PROXY:-yes}" != no ] || exit 0

[ -f "$work/pairs.gz" ] || python3 "$here/proxy_bench.py" pairs -o "$work/pairs.gz"
models=() columns=() systems=() index=5
for seed in "${seeds[@]}"; do models+=(--model "$work/$name-s$seed.pt"); done
OMP_NUM_THREADS=2 rescore score "$work/pairs.gz" "${models[@]}" --per-word --precision fp32 \
    -o "$work/$name.scored.gz" --force
for seed in "${seeds[@]}"; do  # the per-word columns follow the log p ones
    columns+=(--column "$name-s$seed=$((index + ${#seeds[@]}))") systems+=(--system "+$name-s$seed=$name-s$seed")
    index=$((index + 1))
done
OMP_NUM_THREADS=1 python3 "$here/proxy_bench.py" run --table "$work/$name.scored.gz" "${columns[@]}" \
    "${systems[@]}" --replicates 2 --out "$out"
