#!/usr/bin/env bash
# The main jobs' columns on real Moses (issue 44: the study's choice confirmed by real MERT): for
# each main job NAME (main_job_columns.sh's WORK/NAME/job/out.model.pt), its log p per target
# word over the bench's filtered table; for NAME+raw its log p (the paper's +RNN); for NAME+wp its
# log p and its word penalty (the paper's +RNN+WP); for NAME+inv its log p and the log p(f|e) of
# the inverse main job NAME-inverse (WORK/NAME-inverse: `-- --direction inverse`); for NAME+inv+wp
# those two and the word penalty (both +inv forms cut from one scoring of the two models). Then
# Baseline with those columns, retuned by real MERT (3 seeds), beside Baseline retuned, whose
# seeds are not tuned again: their tuned weights, committed in results/real-wide-replicates, are
# decoded (real_wide_rows.sh's WEIGHTS), so the new rows and the earlier ones share one Baseline.
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/proxy/main_job_real_rows.sh \
#         ../shared/data/bible-en-fr BENCH_WORK MAIN_JOB_WORK OUT NAME[+raw|+wp|+inv|+inv+wp]...
#     ... main_job_real_rows.sh ../shared/data/bible-en-fr WORK/bench WORK/main-job \
#         benchmarks/studies/proxy/results/real-amd default tiny15k-lr6e-3 default+wp default+raw
#
# BENCH_WORK is real_wide_rows.sh's WORK (built here when absent); OUT gets its result files (rows
# baseline-retuned, baseline+NAMEpw, baseline+NAME, baseline+NAME+wp, baseline+NAME+inv[+wp]; their test outputs in
# decoding/) and each scoring log.
# SEEDS: MERT's seeds (default 1 2 3). WEIGHTS=DIR[:DIR...]: more committed weights (a row's
# replicates an earlier run tuned, e.g. results/real-amd, are decoded from them, not tuned again). Resumable: every finished step is skipped, and a NAME added
# later joins the rows already decoded. About 4 minutes of scoring, 3 test decodings of the
# Baseline, then 3 MERT runs of 5-20 minutes and their decodings for each NAME.
set -euo pipefail
usage="usage: $0 BIBLE_EN_FR_DIR BENCH_WORK MAIN_JOB_WORK OUT NAME[+raw|+wp|+inv|+inv+wp]..."
data="$(realpath "${1:?$usage}")"
mkdir -p "${2:?$usage}" "${4:?$usage}"
bench="$(realpath "$2")" jobs="$(realpath "${3:?$usage}")" out="$(realpath "$4")"
shift 4
[[ $# -gt 0 ]] || { echo "$usage" >&2; exit 2; }
here="$(dirname "$(realpath "$0")")"
committed="$here/results/real-wide-replicates"

# the bench (WORK/sys) first, built as real_wide_rows.sh builds it, so the columns can be scored over it
source "$here/../../helpers/bible_bench.sh"  # bench_system, cut_table
[[ -s $bench/sys/model/phrase-table.gz ]] || (data="$data" work="$bench" && bench_system)

rows=(baseline-retuned)
for system in "$@"; do  # see the forms above; +inv adds the inverse main job NAME-inverse's log p
    name=${system%%+*} penalty=() variant=""
    models=(--model "$jobs/$name/job/out.model.pt")
    case ${system#"$name"} in
        "") picks=6 row="baseline+${name}pw" ;;
        +raw) picks=5 row="baseline+$name" ;;
        +wp) penalty=(--unk-penalty) variant=.wp picks="5 7" row="baseline+$name+wp" ;;
        +inv) picks="5 6" row="baseline+$name+inv" ;;
        +inv+wp) picks="5 6 9" row="baseline+$name+inv+wp" ;;
        *) echo "unknown form $system (NAME, NAME+raw, NAME+wp, NAME+inv, NAME+inv+wp)" >&2; exit 2 ;;
    esac
    if [[ $system == *+inv* ]]; then  # one scoring serves both +inv forms
        models+=(--model "$jobs/$name-inverse/job/out.model.pt") penalty=(--unk-penalty) variant=.inv
    fi
    rows+=("$row")
    # scored: the filtered table's 4 scores, then each model's log p, each per word (then the penalty)
    scored="$bench/$name$variant.scored.gz" table="$bench/${row#baseline+}.phrase-table.gz"
    [[ -s $scored ]] || { rescore score "$bench/sys/model/phrase-table.gz" "${models[@]}" \
        --per-word "${penalty[@]}" --precision fp32 -o "$scored.tmp.gz" > "${scored%.gz}.log" 2>&1 \
        && mv "$scored.tmp.gz" "$scored"; }
    sed -e "s#$bench/#WORK/#g" -e "s#$jobs/#MAIN_JOB_WORK/#g" "${scored%.gz}.log" > "$out/$(basename "${scored%.gz}").log"
    cut_table "$scored" "$table" $picks
done

WEIGHTS="$committed${WEIGHTS:+:$WEIGHTS}" SEEDS="${SEEDS:-1 2 3}" "$here/real_wide_rows.sh" "$data" "$bench" "$out" "${rows[@]}"
