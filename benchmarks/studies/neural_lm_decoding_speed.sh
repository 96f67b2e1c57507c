#!/usr/bin/env bash
# How much slower Moses decodes with the CSLM in its search (Moses' NeuralLM, an NPLM export):
# the first N dev verses of a system, with and without the feature, one thread, alternated
# twice; prints the sum of Moses' "Translation took" and the whole run's wall time.
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/neural_lm_decoding_speed.sh SYS_DIR CSLM WORK [N]
#
# SYS_DIR holds model/moses.ini (paths relative to SYS_DIR) and corpus/dev.en.gz, as
# benchmarks/studies/table1_study.sh's WORK/sys does. Moses must be built --with-nplm.
set -euo pipefail
sys="$(realpath "${1:?usage: $0 SYS_DIR CSLM WORK [N]}")"; cslm="$(realpath "${2:?CSLM}")"
mkdir -p "${3:?WORK}"; work="$(realpath "$3")"; verses="${4:-50}"
: "${MOSES_HOME:?set MOSES_HOME to the mosesdecoder directory holding bin/moses}"
[[ -e "$work/cslm.nplm" ]] || rescore export-nplm "$cslm" -o "$work/cslm.nplm"
zcat "$sys/corpus/dev.en.gz" | head -n "$verses" > "$work/dev.en"
rescore moses add-feature "$sys/model/moses.ini" --nplm "$work/cslm.nplm" -o "$work/moses.cslm.ini" \
    --base-dir "$sys" --force
flags=(-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400 -threads 1)
cd "$sys"
for round in 1 2; do
    for ini in "$sys/model/moses.ini" "$work/moses.cslm.ini"; do
        name="$(basename "$ini" .ini).$round"
        start=$(date +%s.%N)
        "$MOSES_HOME/bin/moses" -f "$ini" "${flags[@]}" < "$work/dev.en" > "$work/$name.out" 2> "$work/$name.log"
        wall=$(echo "$(date +%s.%N) - $start" | bc)
        decoding=$(grep -o 'Translation took [0-9.]* seconds' "$work/$name.log" | awk '{s += $3} END {print s}')
        echo "$name: decoding $decoding s, wall $wall s"
    done
done
