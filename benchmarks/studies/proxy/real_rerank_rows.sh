#!/usr/bin/env bash
# Real Moses for the proxy's sentence-level rows (issue 44, part 6): each of Baseline retuned's
# three MERT replicates (their weights, committed in results/real-wide-replicates, so no MERT
# runs here) decodes the bench's dev (421 verses) and test (802) NBEST-best lists, and `moses
# rerank` reranks them with the models of each NAME=MODEL[,MODEL...]: their log p and log p per
# word, weights tuned by mert with seed r on replicate r's dev lists. A MODEL is a sentence model
# (rescore train --parallel), or lm:FILE, a target language model (the CSLM: rescore train --lm). Each row's
# reranked test outputs are tested against Baseline retuned's (real_wide_table.py: both
# references, AR, Holm over the rows), as the proxy tests its reranked rows against its own
# retuned Baseline; the proxy reranks the one stored list, here each replicate reranks its own.
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/proxy/real_rerank_rows.sh \
#         ../shared/data/bible-en-fr BENCH_WORK OUT NAME=MODEL[,MODEL...]...
#     ... real_rerank_rows.sh ../shared/data/bible-en-fr WORK/bench \
#         benchmarks/studies/proxy/results/real-rerank sfwd=WORK/sent-forward.pt cslm=lm:WORK/cslm.pt
#
# BENCH_WORK is real_wide_rows.sh's WORK (built here when absent). OUT gets real_wide_rows.sh's
# files for baseline-retuned, row baseline+NAME's test outputs in decoding/, each replicate's
# reranking results and weights (rerank/RUN.NAME.*), first-best.tsv (how many test verses' first
# hypothesis in the decoded list differs from the replicate's 1-best decoding: 0 when the lists
# are the decoder's own) and times.tsv. SEEDS (default 1 2 3), NBEST (default 100), THREADS
# (default 2). Resumable: the lists are decoded once per replicate, for the first row, and a
# rerun continues each `moses rerank` from its finished steps.
#
# SYSTEMS="ROW..." (default baseline-retuned): the tuned systems whose replicates decode and
# rerank, each a real_wide_rows.sh row whose replicates' tuned weights are committed in
# results/real-wide-replicates or in WEIGHTS=DIR[:DIR...]. A baseline+NAME system needs
# BENCH_WORK/NAME.phrase-table.gz (main_job_real_rows.sh cuts it). Baseline retuned's rows are
# named baseline+NAME, another system's SYSTEM+NAME. Cho et al.'s Table 1 reranks +RNN's and
# +RNN+WP's lists with the CSLM (+CSLM+RNN, +CSLM+RNN+WP) beside Baseline's (+CSLM):
#
#     SYSTEMS="baseline-retuned baseline+default baseline+default+wp" \
#     WEIGHTS=benchmarks/studies/proxy/results/real-amd ... real_rerank_rows.sh ../shared/data/bible-en-fr \
#         WORK/bench benchmarks/studies/proxy/results/real-table1 cslm=lm:WORK/cslm.pt
set -euo pipefail
usage="usage: $0 BIBLE_EN_FR_DIR BENCH_WORK OUT NAME=MODEL[,MODEL...]..."
data="$(realpath "${1:?$usage}")"
mkdir -p "${2:?$usage}" "${3:?$usage}/rerank"
bench="$(realpath "$2")" out="$(realpath "$3")"
shift 3
[[ $# -gt 0 ]] || { echo "$usage" >&2; exit 2; }
for spec in "$@"; do
    [[ $spec == ?*=?* && ${spec%%=*} != *[.+=/]* ]] \
        || { echo "$spec: expected NAME=MODEL[,MODEL...], NAME without '.', '+', '=' or '/'" >&2; exit 2; }
done
here="$(dirname "$(realpath "$0")")"
: "${MOSES_HOME:?set MOSES_HOME to the mosesdecoder directory holding bin/moses and scripts/}"
read -r -a seeds <<< "${SEEDS:-1 2 3}"
read -r -a systems <<< "${SYSTEMS:-baseline-retuned}"
for system in "${systems[@]}"; do
    [[ $system == baseline-retuned || ($system == baseline+?* && -s $bench/${system#baseline+}.phrase-table.gz) ]] \
        || { echo "$system: not baseline-retuned, or a baseline+NAME without $bench/NAME.phrase-table.gz (main_job_real_rows.sh cuts it)" >&2; exit 2; }
done
flags="-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400"

# Each system: each seed's committed weights (its ini: BENCH_WORK/RUN.tuned) and its test 1-best
WEIGHTS="$here/results/real-wide-replicates${WEIGHTS:+:$WEIGHTS}" SEEDS="${seeds[*]}" \
    "$here/real_wide_rows.sh" "$data" "$bench" "$out" "${systems[@]}"
source "$here/../../helpers/bible_bench.sh"  # step (its times go to BENCH_WORK/times.tsv)
work=$bench sys=$bench/sys
rerank_once() { local done=$1; shift; "$@"; touch "$done"; }  # DONE COMMAND...: step's output is DONE

printf 'replicate\ttest verses\tfirst hypothesis differs from the 1-best decoding\n' > "$out/first-best.tsv"
for system in "${systems[@]}"; do
    for seed in "${seeds[@]}"; do
        if [[ $seed == 1 ]]; then run=$system; else run=$system.seed$seed; fi
        lists=()  # after the first row: the lists it decoded
        for spec in "$@"; do
            name=${spec%%=*} models=()
            IFS=, read -r -a paths <<< "${spec#*=}"
            for path in "${paths[@]}"; do
                if [[ $path == lm:* ]]; then models+=(--lm "$(realpath "${path#lm:}")")
                else models+=(--model "$(realpath "$path")"); fi
            done
            dir="$bench/rerank/$run/$name"
            [[ -n ${first:-} ]] && lists=(--dev-nbest "$first/dev.decoder.nbest" --test-nbest "$first/test.decoder.nbest")
            step "$run: reranked with $name" "$dir/done" rerank_once "$dir/done" \
                rescore moses rerank --ini "$(cat "$bench/$run.tuned")" --base-dir "$sys" --no-filter "${models[@]}" "${lists[@]}" \
                --dev "$sys/corpus/dev.en.gz" "$sys/corpus/dev.fr.gz" --dev-ref "$sys/corpus/dev.ref-darby.fr.gz" \
                --test "$data/corpus/test.en.gz" "$data/corpus/test.fr.gz" --test-ref "$data/corpus/test.ref-darby.fr.gz" \
                --nbest-size "${NBEST:-100}" --decoder-flags "$flags" --seeds 1 --seed "$seed" --out-dir "$dir" \
                --moses-dir "$MOSES_HOME" --threads "${THREADS:-2}"
            first=${first:-$dir}
            row="${system/#baseline-retuned/baseline}+$name${run#"$system"}"
            cp "$dir/seed$seed/test.reranked" "$bench/decoding/$row.hyp"
            gzip -9nc "$dir/seed$seed/test.reranked" > "$out/decoding/$row.hyp.gz"
            cp "$dir/seed$seed/weights.json" "$out/rerank/$run.$name.weights.json"
            sed "s#$bench/#WORK/#g" "$dir/results.md" > "$out/rerank/$run.$name.results.md"
        done
        differs=$(awk 'NR == FNR { first[FNR] = $0; next } { sub(/ +$/, ""); sub(/ +$/, "", first[FNR]) }
                       first[FNR] != $0 { n++ } END { print n + 0 }' "$first/test.1best" "$bench/decoding/$run.hyp")
        printf '%s\t%s\t%s\n' "$run" "$(wc -l < "$first/test.1best")" "$differs" >> "$out/first-best.tsv"
        unset first
    done
done

python3 "$here/real_wide_table.py" "$bench/decoding" "$data" "$out"
grep -F "${systems[@]/#/-e}" -e ': reranked with ' "$bench/times.tsv" > "$out/times.tsv"
