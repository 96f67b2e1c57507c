#!/usr/bin/env bash
# Cho et al. (2014) Table 1 on the bible bench (docs/moses.md, "Table 1"): Baseline, +RNN,
# +RNN+WP, each tuned 3 times by MERT, and the CSLM's rows (+CSLM, +CSLM+RNN, +CSLM+RNN+WP:
# those systems' n-best lists reranked with the CSLM), as one resumable run: every step whose
# output exists is skipped, and the ablation skips finished replicates and continues a half-done
# MERT run, so after an interruption the same command goes on. Each step's wall time is appended
# to WORK/times.tsv. Needs a built Moses (MOSES_HOME); about 4 hours of a 2-core machine.
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/table1_study.sh ../shared/data/bible-en-fr WORK [CSLM]
#
# CSLM: a trained target LM (rescore train --lm); without it the script trains one with the
# recipe of docs/moses.md, "The CSLM" (STAGE=tune: only the tuned systems, no CSLM rows).
#
# DECODING=1 also gives the paper's rows with the CSLM in the decoder's search: the CSLM exported
# to WORK/cslm.nplm (rescore export-nplm) and added to Baseline, +RNN and +RNN+WP as Moses'
# NeuralLM, +CSLM(dec), +CSLM(dec)+RNN and +CSLM(dec)+RNN+WP, each tuned 3 times from that
# system's tuned weights (moses ablation --nplm). Needs a Moses built --with-nplm (the ablation's
# preflight says so in one line if not). DECODING="+CSLM(dec)+RNN ..." gives only those rows.
# RERANK_MODEL=sentence.pt (rescore train --parallel) adds +rerank and +RNN+rerank: Baseline's
# and +RNN's lists reranked with that sentence model (docs/sentence-models.md);
# RERANK_SYSTEMS="+RNN" reranks only those systems' lists (default "Baseline +RNN").
# The finished systems and rows are reused; with STAGE=tune, the reranked rows are left out (the
# CSLM must exist then). Decoding with the NeuralLM is about 7.4x slower (benchmarks/RESULTS.md):
# about 80-100 min per MERT run of 10 iterations instead of 15-25, so about 13-15 hours of a
# 2-core machine for the three rows, about 5 for one.
set -euo pipefail
data="$(realpath "${1:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR [CSLM]}")"
mkdir -p "${2:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR [CSLM]}"
work="$(realpath "$2")"
cslm="${3:-$work/cslm.pt}"
: "${MOSES_HOME:?set MOSES_HOME to the mosesdecoder directory holding bin/moses and scripts/}"
threads="${THREADS:-2}"

source "$(dirname "$0")/../helpers/bible_bench.sh"  # step, resumable, bench_system

# The RNN: the paper's forward model on the whole 2.2M-pair table, defaults, early stopping.
train_fwd() { OMP_NUM_THREADS=1 resumable "$work/fwd.pt" "$data/model/phrase-table.gz" --max-time 3600; }
step "train fwd" "$work/fwd.pt" train_fwd

# The bench: dev every other verse of the 842, test all 802, the tables filtered to them.
bench_system

# The RNN's column, then the word penalty (words outside the network's shortlist).
step "score" "$sys/model/phrase-table.rnn.gz" env OMP_NUM_THREADS="$threads" \
    rescore score "$sys/model/phrase-table.gz" --model "$work/fwd.pt" --unk-penalty -o "$sys/model/phrase-table.rnn.gz"

# The CSLM (docs/moses.md, "The CSLM"), unless one was given.
train_cslm() { OMP_NUM_THREADS="$threads" resumable "$cslm" --lm "$data/corpus/train.fr.gz" ${CSLM_OPTIONS:-}; }
[[ "${STAGE:-}" == tune ]] || step "train cslm" "$cslm" train_cslm

ablation() {
    rescore moses ablation model/moses.ini --rescored-table model/phrase-table.rnn.gz --new-columns rnn,wp \
        --dev corpus/dev.en.gz corpus/dev.fr.gz --dev-ref corpus/dev.ref-darby.fr.gz \
        --test "$data/corpus/test.en.gz" "$data/corpus/test.fr.gz" --test-ref "$data/corpus/test.ref-darby.fr.gz" \
        --out-dir "$work/ablation" --max-iterations 10 \
        --decoder-flags "-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400" \
        --threads "$threads" --moses-dir "$MOSES_HOME" --replicates 3 --system +RNN --system +RNN+WP "$@"
}
# The CSLM in NPLM's format, for the decoding rows.
more_rows=()
if [[ -n "${DECODING:-}" ]]; then
    step "export nplm" "$work/cslm.nplm" rescore export-nplm "$cslm" -o "$work/cslm.nplm"
    more_rows=(--nplm "$work/cslm.nplm")
    if [[ "$DECODING" != 1 ]]; then for row in $DECODING; do more_rows+=(--system "$row"); done; fi
fi
# A sentence model (issue 30) reranking Baseline's and +RNN's lists beside the CSLM's rows.
if [[ -n "${RERANK_MODEL:-}" ]]; then
    more_rows+=(--rerank-model "$(realpath "$RERANK_MODEL")")
    for system in ${RERANK_SYSTEMS:-Baseline +RNN}; do more_rows+=(--rerank-system "$system"); done
fi
cd "$sys"
SECONDS=0
if [[ "${STAGE:-}" == tune ]]; then ablation ${more_rows[@]+"${more_rows[@]}"}; else ablation --lm "$cslm" ${more_rows[@]+"${more_rows[@]}"}; fi
printf 'ablation (this call)\t%d\n' "$SECONDS" >> "$work/times.tsv"
