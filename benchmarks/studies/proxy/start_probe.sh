#!/usr/bin/env bash
# A bad start, probed (issue 44, study part d): the forward model trained on the whole bible table
# with each SEED, one thread each, JOBS at a time, stopped at UPDATES (`stop`: where early stopping
# ends it, to_its_stop.sh's runs), with the options given in place of the default recipe's (the
# default's own runs are stability.sh's). A seed that starts badly shows as a held-out
# perplexity far above the other seeds' at the same update; a recipe that removes the luck
# brings it down to theirs without raising the others'.
#
#   [SEEDS='1 2 3'] [JOBS=2] benchmarks/studies/proxy/start_probe.sh WORK UPDATES OUT NAME [OPTION...]
#   SEEDS=3 benchmarks/studies/proxy/start_probe.sh WORK 2000 benchmarks/studies/proxy/results/start-probe warmup1000 --warmup-updates 1000
#
# Appends one row per seed to OUT/models.tsv (recipe, its options, seed, then training_row.sh's
# figures); a row already there is not trained again. WORK keeps each run's model and log.
# TABLE: another phrase table in place of the bible one.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,14p' "$0"; exit 2; }
work=$1 updates=$2 out=$3 name=$4; shift 4
options=("$@")
read -r -a seeds <<< "${SEEDS:-1 2 3}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=training_row.sh
source "$here/training_row.sh"
table=${TABLE:-$here/../../../../shared/data/bible-en-fr/model/phrase-table.gz}
mkdir -p "$work" "$out"
[ -f "$out/models.tsv" ] || printf 'recipe\toptions\tseed\tupdates\tbest held-out perplexity\tat update\thonest perplexity\tseconds\n' > "$out/models.tsv"

train() {  # seed
    local run=$work/$name-s$1 bound=(--max-updates "$updates")
    [ "$updates" != stop ] || bound=()
    [ -f "$run.pt" ] || {
        OMP_NUM_THREADS=1 rescore train "$table" -o "$run.pt" --seed "$1" "${bound[@]}" \
            --cache-dir "$run.cache" --force "${options[@]}" 2> "$run.train.log"
        rm -r "$run.cache" "$run.pt.checkpoint"
    }
}
export -f train; export work updates table name
todo=() trained=$updates
[ "$updates" != stop ] || trained='[0-9][0-9]*'  # a row at whatever update the run stopped
for seed in "${seeds[@]}"; do
    grep -q "^$name	.*	$seed	$trained	" "$out/models.tsv" || todo+=("$seed")
done
[ ${#todo[@]} -eq 0 ] || printf '%s\n' "${todo[@]}" | xargs -P "${JOBS:-2}" -I{} bash -c "$(declare -p options); train {}"
for seed in "${todo[@]}"; do
    training_row "$name\t${options[*]:--}\t$seed" "$work/$name-s$seed.train.log" >> "$out/models.tsv"
done
