#!/usr/bin/env bash
# The phrase-feature study of docs/phrase-feature-study.md, second ablation and combination:
# the options the literature tried (word penalty, per-word column, pair weights by count, a
# two-model ensemble), then the best combination chosen on dev, then Baseline and that
# combination reranked by a sentence model (docs/moses.md), on the real bible-en-fr system, as
# one resumable run. Every step whose output exists is skipped, and the ablation itself
# skips finished replicates and continues a half-done MERT run, so after an interruption the
# same command goes on. Each step's wall time is appended
# to WORK/times.tsv. Needs a built Moses (MOSES_HOME) and about 8 hours of a 2-core machine:
# the two trainings about 50 min side by side, scoring 8 min, each replicate about 50 min, then
# the combination: the inverse model's training about 45 min and its ablation about 50 min;
# last the sentence model (about 1 h 30 min) and the reranking of 6 tuned systems (about 1 h).
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/phrase_feature_study.sh ../shared/data/bible-en-fr WORK
set -euo pipefail
data="$(realpath "${1:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR}")"
mkdir -p "${2:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR}"
work="$(realpath "$2")"
: "${MOSES_HOME:?set MOSES_HOME to the mosesdecoder directory holding bin/moses and scripts/}"
threads="${THREADS:-2}"

source "$(dirname "$0")/../helpers/bible_bench.sh"  # step, bench_system

# The models, on the whole 2.2M-pair table: one thread each, early stopping decides.
train() { OMP_NUM_THREADS=1 rescore train "$data/model/phrase-table.gz" --max-time 3600 "$@"; }
step "train fwd" "$work/fwd.pt" train -o "$work/fwd.pt" & forward=$!
step "train fwdcount" "$work/fwdcount.pt" train -o "$work/fwdcount.pt" --pair-weights log-count & counted=$!
wait $forward && wait $counted

# The bench: dev every other verse of the 842, test all 802, the tables filtered to them.
bench_system

# The new columns: the two models' mixture, then each model, each per target word, the penalty.
score() { OMP_NUM_THREADS="$threads" rescore score "$@"; }
step "score ensemble" "$work/ensemble.phrase-table.gz" \
    score "$sys/model/phrase-table.gz" --model "$work/fwd.pt" --model "$work/fwdcount.pt" \
        --ensemble -o "$work/ensemble.phrase-table.gz"
step "score models" "$sys/model/phrase-table.rnn.gz" \
    score "$work/ensemble.phrase-table.gz" --model "$work/fwd.pt" --model "$work/fwdcount.pt" \
        --per-word --unk-penalty -o "$sys/model/phrase-table.rnn.gz"

# ablation TABLE COLUMNS OUT_DIR ARGS...: the bench every ablation here shares (the dev and
# test sets with both references, at most 10 MERT iterations, cube pruning).
ablation() {
    local table="$1" columns="$2" out_dir="$3"; shift 3
    rescore moses ablation model/moses.ini --rescored-table "$table" --new-columns "$columns" \
        --dev corpus/dev.en.gz corpus/dev.fr.gz --dev-ref corpus/dev.ref-darby.fr.gz \
        --test "$data/corpus/test.en.gz" "$data/corpus/test.fr.gz" --test-ref "$data/corpus/test.ref-darby.fr.gz" \
        --out-dir "$out_dir" --max-iterations 10 \
        --decoder-flags "-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400" \
        --threads "$threads" --moses-dir "$MOSES_HOME" "$@"
}

# Baseline, the paper's +RNN+WP and each option alone, 3 MERT replicates; STUDY_SYSTEMS adds
# more (e.g. STUDY_SYSTEMS="--system +fwdcount+fwdpw").
cd "$sys"
SECONDS=0
ablation model/phrase-table.rnn.gz ens,fwd,fwdcount,fwdpw,fwdcountpw,wp "$work/ablation" --replicates 3 \
    --system +fwd+WP --system +fwdpw --system +fwdcount --system +ens ${STUDY_SYSTEMS:-}
printf 'ablation (this call)\t%d\n' "$SECONDS" >> "$work/times.tsv"

# The combination: the per-word forward column beside the inverse model's column, raw or per
# word (the columns MERT kept a weight for). Its own table and out-dir; its Baseline replicates
# are the ablation's above, copied: the same bench and seeds tune the same Baseline. Both
# candidates run replicate 1, the one with the better dev BLEU runs all three.
step "train inv" "$work/inv.pt" train -o "$work/inv.pt" --direction inverse
step "score both directions" "$sys/model/phrase-table.both.gz" \
    score "$sys/model/phrase-table.gz" --model "$work/fwd.pt" --model "$work/inv.pt" --per-word \
        -o "$sys/model/phrase-table.both.gz"
combo="$work/ablation-combo"
mkdir -p "$combo"
[[ -e "$combo/baseline" ]] || cp -r "$work/ablation/baseline" "$combo/baseline"
combination() { ablation model/phrase-table.both.gz fwd,inv,fwdpw,invpw "$combo" "$@"; }
SECONDS=0
combination --replicates 1 --system +fwdpw+inv --system +fwdpw+invpw
best=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "dev_bleu") dev = i; next }
                $1 != "Baseline" && $dev > top { top = $dev; name = $1 } END { print name }' \
    "$combo/replicates.csv")
echo "== the combination chosen on dev (replicate 1): $best" >&2
combination --replicates 3 --system "$best"
printf 'combination (this call)\t%d\n' "$SECONDS" >> "$work/times.tsv"

# Sentence-level reranking (docs/moses.md): a forward rnnsearch trained on the parallel corpus
# reranks the n-best lists of Baseline and of the combination, each replicate's own tuned
# system, giving the rows +rerank and +<combination>+rerank.
# (the word-level model measured here: --parallel's defaults before the sentence recipe, spelled out)
sentence_train() {
    OMP_NUM_THREADS=1 rescore train --parallel "$data/corpus/train.en.gz" "$data/corpus/train.fr.gz" \
        -o "$work/sentence-fwd.pt" --arch rnnsearch --valid-pairs 1000 --valid-every 100 --max-epochs 15 \
        --max-time 5400 --subwords none --dropout 0 --label-smoothing 0 --weight-decay 0 --lr-schedule constant \
        --learning-rate 6e-3 --warmup-updates 100 --batch-tokens 3000 --average 0 --patience 4
}
step "train sentence fwd" "$work/sentence-fwd.pt" sentence_train
SECONDS=0
combination --replicates 3 --system "$best" --rerank-model "$work/sentence-fwd.pt"
printf 'reranking (this call)\t%d\n' "$SECONDS" >> "$work/times.tsv"
