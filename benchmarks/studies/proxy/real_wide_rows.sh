#!/usr/bin/env bash
# Real Moses for the proxy's wide rows (issue 44, part 4): Baseline without one of its features
# (the language model LM0, the direct phrase probability p(e|f), the lexicalized reordering
# model, the distortion cost, the word penalty), each retuned by real MERT, one replicate, on
# the phrase-feature study's bench (421 dev verses with both references, at most 10
# iterations, cube pruning, 2 threads, warm start from the fixture's tuned weights), one MERT
# replicate a seed (SEEDS, default 1).
# Each row's test translation is compared with the Baseline's: the fixture's tuned system,
# whose test 1-best the stored n-best lists hold (nbest/test.1best.gz: the same ini, flags and
# Moses commit), so Baseline is not decoded again. Resumable: every finished step is skipped
# and a half-done MERT run continues. Needs a built Moses (MOSES_HOME); 5 to 30 minutes a row
# on 2 cores.
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/proxy/real_wide_rows.sh \
#         ../shared/data/bible-en-fr WORK benchmarks/studies/proxy/results/real-wide [ROW...]
#
# ROW: baseline-lm0, baseline-pef, baseline-lr, baseline-dist, baseline-wp, and
# baseline-retuned: Baseline itself retuned the same way, MERT's own shift (default: all, in
# that order); baseline+NAME: Baseline with more phrase-table columns, the columns of
# WORK/NAME.phrase-table.gz after the filtered table's own (WORK/sys/model/phrase-table.gz with
# the new columns appended, e.g. by `rescore score ... --per-word` and a cut), named by NAME's
# parts (baseline+fwdpw+inv: fwdpw, then inv), their weights started as `moses add-feature`
# starts them, so a phrase model's real row is tuned beside the same retuned Baseline. SEEDS='1 2 3': MERT's seeds, one replicate each; seed 1's files take the row's
# name (ROW.ini, ROW.hyp), seed N's ROW.seedN. Writes OUT/results.tsv and OUT/results.md
# (real_wide_table.py) from the rows decoded so far, each replicate's tuned weights and mert's
# best points, and its test output (OUT/decoding/RUN.hyp.gz). WEIGHTS=DIR[:DIR...]: a replicate
# whose tuned weights one of the DIRs holds (RUN.weights.txt, as this script writes them; the
# first DIR that has them) is not tuned again: its ini is the row's with those weights, and only
# its test is decoded, so a later run's rows can be compared with an earlier run's Baseline, and
# an earlier run's tuned systems reranked or decoded again.
set -euo pipefail
data="$(realpath "${1:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR OUT_DIR [ROW...]}")"
mkdir -p "${2:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR OUT_DIR [ROW...]}" "${3:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR OUT_DIR [ROW...]}"
mkdir -p "$3/decoding"
work="$(realpath "$2")"
out="$(realpath "$3")"
shift 3
if [[ $# -gt 0 ]]; then rows=("$@"); else rows=(baseline-lm0 baseline-pef baseline-lr baseline-dist baseline-wp baseline-retuned); fi
: "${MOSES_HOME:?set MOSES_HOME to the mosesdecoder directory holding bin/moses and scripts/}"
threads="${THREADS:-2}"
read -r -a seeds <<< "${SEEDS:-1}"
flags="-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400"
here="$(dirname "$(realpath "$0")")"

source "$here/../../helpers/bible_bench.sh"  # step, bench_system
bench_system
cd "$sys"

# without FEATURE_LINE WEIGHT_NAME INI: the tuned Baseline without one feature: its line in
# [feature] (e.g. `KENLM name=LM0 ...`, or a bare `Distortion`) and its weights (`LM0= ...`).
without() {
    grep -v -E -e "^$1( |\$)" -e "^$2= " model/moses.ini > "$3.tmp"
    [[ $(grep -c -E -e "^$1( |\$)" -e "^$2= " model/moses.ini) == 2 ]] \
        || { echo "model/moses.ini has no single feature line $1 with weights $2" >&2; exit 1; }
    mv "$3.tmp" "$3"
}
without_lm0() { without "KENLM name=LM0" LM0 "$1"; }
without_lr() { without "LexicalReordering name=LexicalReordering0" LexicalReordering0 "$1"; }
without_dist() { without Distortion Distortion0 "$1"; }
without_wp() { without WordPenalty WordPenalty0 "$1"; }
unchanged() { cp model/moses.ini "$1"; }
with_columns() {  # NAME INI (NAME: the new columns' names joined by +)
    rescore moses add-feature model/moses.ini --table "$work/$1.phrase-table.gz" --new-columns "${1//+/,}" \
        --base-dir "$sys" --moses-dir "$MOSES_HOME" -o "$2" --force
}

# without_pef INI: the tuned Baseline with a table of three columns, p(e|f) (the third of
# φ(f|e) lex(f|e) φ(e|f) lex(e|f)) left out, and its weight with it.
without_pef() {
    zcat model/phrase-table.gz \
        | awk -F ' [|][|][|] ' -v OFS=' ||| ' '{ split($3, s, " "); $3 = s[1] " " s[2] " " s[4]; print }' \
        | gzip > model/phrase-table.no-pef.gz
    sed -e '/^PhraseDictionaryMemory /s/num-features=4/num-features=3/' \
        -e '/^PhraseDictionaryMemory /s#path=model/phrase-table.gz#path=model/phrase-table.no-pef.gz#' \
        -e 's/^TranslationModel0= \([^ ]*\) \([^ ]*\) [^ ]* \([^ ]*\)$/TranslationModel0= \1 \2 \3/' \
        model/moses.ini > "$1.tmp"
    grep -q 'num-features=3 .*phrase-table.no-pef.gz' "$1.tmp" \
        && grep -Eq '^TranslationModel0= [^ ]+ [^ ]+ [^ ]+$' "$1.tmp" \
        || { echo "could not drop p(e|f) from $1.tmp" >&2; exit 1; }
    mv "$1.tmp" "$1"
}

# committed_file NAME: the first WEIGHTS directory's NAME, if one holds it (else nothing).
committed_file() {
    local dir dirs
    IFS=: read -r -a dirs <<< "${WEIGHTS:-}"
    for dir in "${dirs[@]}"; do
        [[ -n $dir && -s $dir/$1 ]] && { echo "$dir/$1"; return; }
    done
    return 0
}

# tuned_from WEIGHTS ROW RUN: RUN's tuned ini without rerunning MERT: the row's ini up to its
# [weight] section, then WEIGHTS (a tuned ini's [weight] section to its end).
tuned_from() {
    local ini="$work/$2.ini" tuned="$work/$3.weights.ini"
    grep -qx '\[weight\]' "$1" || { echo "$1 holds no [weight] section" >&2; exit 1; }
    grep -qx '\[weight\]' "$ini" || { echo "$ini has no [weight] section" >&2; exit 1; }
    { sed '/^\[weight\]$/,$d' "$ini"; cat "$1"; } > "$tuned"
    echo "$tuned" > "$work/$3.tuned"
}

for row in "${rows[@]}"; do
    case "$row" in
        baseline-lm0) make_ini=without_lm0 ;;
        baseline-pef) make_ini=without_pef ;;
        baseline-lr) make_ini=without_lr ;;
        baseline-dist) make_ini=without_dist ;;
        baseline-wp) make_ini=without_wp ;;
        baseline-retuned) make_ini=unchanged ;;
        baseline+?*) make_ini="with_columns ${row#baseline+}" ;;
        *) echo "unknown row $row (baseline-lm0, baseline-pef, baseline-lr, baseline-dist, baseline-wp, baseline-retuned, baseline+NAME)" >&2; exit 2 ;;
    esac
    step "$row: ini" "$work/$row.ini" $make_ini "$work/$row.ini"
    for seed in "${seeds[@]}"; do
        if [[ $seed == 1 ]]; then run=$row; else run=$row.seed$seed; fi
        given=$(committed_file "$run.weights.txt")
        if [[ -n $given ]]; then
            step "$run: tuned weights from WEIGHTS/$run.weights.txt" "$work/$run.tuned" tuned_from "$given" "$row" "$run"
        fi
        step "$run: tune" "$work/$run.tuned" sh -c "rescore moses tune '$work/$row.ini' \
            --dev corpus/dev.en.gz corpus/dev.fr.gz --dev-ref corpus/dev.ref-darby.fr.gz \
            --work-dir '$work/tuning-$run' --seed $seed --max-iterations 10 --decoder-flags '$flags' \
            --base-dir '$sys' --moses-dir '$MOSES_HOME' --threads $threads > '$work/$run.tuned.tmp' \
            && mv '$work/$run.tuned.tmp' '$work/$run.tuned'"
        step "$run: test" "$work/decoding/$run.hyp" \
            rescore moses evaluate --system "$run=$(cat "$work/$run.tuned")" \
                --test "$data/corpus/test.en.gz" "$data/corpus/test.fr.gz" \
                --test-ref "$data/corpus/test.ref-darby.fr.gz" --out-dir "$work/decoding" \
                --decoder-flags "$flags" --base-dir "$sys" --moses-dir "$MOSES_HOME" --threads "$threads"
        sed -n '/^\[weight\]/,$p' "$(cat "$work/$run.tuned")" > "$out/$run.weights.txt"  # no machine paths
        gzip -9nc "$work/decoding/$run.hyp" > "$out/decoding/$run.hyp.gz"  # later rows are tested against it
        if [[ -d $work/tuning-$run ]]; then
            grep -h 'Best point' "$work/tuning-$run"/run*.mert.log > "$out/$run.mert-best-points.txt" || true
        else
            points=$(committed_file "$run.mert-best-points.txt")
            [[ -z $points || $out/$run.mert-best-points.txt -ef $points ]] || cp "$points" "$out/"
        fi
    done
done

python3 "$here/real_wide_table.py" "$work/decoding" "$data" "$out"
