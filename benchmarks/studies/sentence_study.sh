#!/usr/bin/env bash
# Issue 30's study (docs/sentence-models.md): the sentence model's recipe on the bible corpus,
# one ingredient removed per row, and the full recipe trained on to early stopping, as one
# resumable run: a finished step is skipped, an interrupted training continues from its
# checkpoint (at most CHECKPOINT updates lost), so after an interruption the same command goes on.
#
#     benchmarks/studies/sentence_study.sh ../shared/data/bible-en-fr WORK
#
# Every row trains ROW_UPDATES updates (default 2000) with the same seed and is scored on the
# dev set (beam 5, both references); the full recipe's row is the first ROW_UPDATES updates of
# the final model's own run. WORK/rows.tsv gets one line per row, WORK/final.tsv the final
# model's dev and test scores, WORK/times.tsv each step's wall time. ROWS picks rows (default
# all, "full" included; STAGE=rows ROWS=constant-lr trains that row alone); STAGE=final runs
# only the final model, STAGE=rows only the rows (so that a second core trains them beside the
# final model), STAGE=long trains LONG_ROWS on to the final budget.
# FINAL_UPDATES caps the final model's training (default: none, early stopping or 60 epochs),
# the issue's budget being about 6 hours of this machine.
set -euo pipefail
data="$(realpath "${1:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR}")"
mkdir -p "${2:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR}"/rows "$2/logs"
work="$(realpath "$2")"
corpus="$data/corpus"
row_updates="${ROW_UPDATES:-2000}"
export OMP_NUM_THREADS="${THREADS:-2}"

source "$(dirname "$0")/../helpers/bible_bench.sh"  # step, resumable

common=(--parallel "$corpus/train.en.gz" "$corpus/train.fr.gz" --arch transformer --preset small
        --valid-src "$corpus/dev.en.gz" --valid-tgt "$corpus/dev.fr.gz" --valid-every 250
        --checkpoint-every 250 --precision bf16 --seed 1)
# The recipe (fairseq's small-data Transformer, scaled to this corpus and machine).
subwords=(--subwords bpe --subword-size 8000)
recipe=(--dropout 0.3 --label-smoothing 0.1 --weight-decay 1e-4
        --lr-schedule inverse-sqrt --warmup-updates 1000 --learning-rate 1e-3 --batch-tokens 4000
        --average 5 --patience 8)
# Each row: the recipe with one ingredient taken out (a later option overrides an earlier one;
# no-subwords also leaves out the subwords' size, which word models refuse).
declare -A rows=(
    [no-subwords]="--subwords none"
    [no-dropout]="--dropout 0"
    [no-label-smoothing]="--label-smoothing 0"
    [no-weight-decay]="--weight-decay 0"
    [constant-lr]="--lr-schedule constant"
    [no-average]="--average 0"
    [rnnsearch]="--arch rnnsearch --layer-norm"
)
# Other values of an ingredient, trained only when ROWS or LONG_ROWS names them.
declare -A variants=(
    [dropout-0.1]="--dropout 0.1"
)

# train MODEL ARGS...: `resumable`, its output also in WORK/logs; MODEL.done marks a finished
# run (the checkpoint stays for more).
train() {
    local model="$1" log="$work/logs/$(basename "$1" .pt).log"
    resumable "$@" 2>&1 | tee -a "$log" || return 1
    touch "$model.done"
}

# score MODEL SET OUT.tsv NAME: translate corpus/SET.en, append NAME, BLEU and chrF against both
# references, and the training's last summary line to OUT.tsv.
score() {
    local model="$1" set="$2" out="$3" name="$4" hyp="$work/logs/$4.$2.fr"
    rescore translate "$model" --input "$corpus/$set.en.gz" --beam 5 -o "$hyp" --force || return 1
    python - "$hyp" "$corpus/$set.fr.gz" "$corpus/$set.ref-darby.fr.gz" "$name" "$set" >> "$out" <<'EOF'
import sys
from pathlib import Path
from moses_integration.evaluation.scores import evaluate_file
hyp, refs, name, which = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:4]], sys.argv[4], sys.argv[5]
result = evaluate_file(hyp, refs)
print(f"{name}\t{which}\t{result.bleu:.2f}\t{result.chrf:.2f}")
EOF
}

full="$work/full.pt"
row_model() { echo "$work/rows/$1.pt"; }

# train_row MODEL NAME ARGS...: `train` with row NAME's recipe (no-subwords also leaves out the
# subwords' size, which word models refuse), then ARGS.
train_row() {
    local model="$1" name="$2" row_subwords=("${subwords[@]}"); shift 2
    [[ "$name" == no-subwords ]] && row_subwords=()
    # shellcheck disable=SC2086  # a row's options are words
    train "$model" "${common[@]}" "${row_subwords[@]}" "${recipe[@]}" ${rows[$name]:-${variants[$name]}} "$@"
}

# The full row: the final model's run starts with it, and STAGE=rows trains it when ROWS names it.
selected_rows="${ROWS:-full ${!rows[*]}}"
first_updates() { train "$full" "${common[@]}" "${subwords[@]}" "${recipe[@]}" --max-updates "$row_updates" && cp "$full" "$(row_model full)"; }
if [[ "${STAGE:-}" != long ]] && [[ "${STAGE:-}" != rows || " $selected_rows " == *" full "* ]]; then
    step "full: first $row_updates updates" "$(row_model full)" first_updates
    [[ -e "$work/rows/full.scored" ]] || { score "$(row_model full)" dev "$work/rows.tsv" full && touch "$work/rows/full.scored"; }
fi

final() {
    train "$full" "${common[@]}" "${subwords[@]}" "${recipe[@]}" --max-updates "${FINAL_UPDATES:-1000000}" --max-epochs 60 &&
        cp "$full" "$work/final.pt"
}
if [[ "${STAGE:-}" != rows && "${STAGE:-}" != long ]]; then
    step "full: final model" "$work/final.pt" final
    for set in dev test; do
        [[ -e "$work/final.$set.scored" ]] || { score "$work/final.pt" "$set" "$work/final.tsv" final && touch "$work/final.$set.scored"; }
    done
fi
[[ "${STAGE:-}" == final ]] && exit 0

# STAGE=long: the rows named in LONG_ROWS trained on to the final model's budget (FINAL_UPDATES,
# default 11000, and its 60-epoch bound), each continuing from a copy of its row's checkpoint,
# and scored on dev and test into WORK/long.tsv beside final.tsv: a row that wins at 2,000
# updates (no-dropout) may lose once the recipe's regularization pays.
if [[ "${STAGE:-}" == long ]]; then
    for name in ${LONG_ROWS:?"LONG_ROWS names the rows to train on (e.g. no-dropout)"}; do
        model="$work/rows/$name-long.pt"
        # From the row's checkpoint where it exists (the schedule does not depend on the bound).
        row_checkpoint="$(row_model "$name").checkpoint"
        [[ -e "$model.checkpoint" || -e "$model.done" || ! -e "$row_checkpoint" ]] || cp "$row_checkpoint" "$model.checkpoint"
        [[ -e "$model.done" ]] || step "$name: ${FINAL_UPDATES:-11000} updates" "$model.done" \
            train_row "$model" "$name" --max-updates "${FINAL_UPDATES:-11000}" --max-epochs 60
        for set in dev test; do
            [[ -e "$model.$set.scored" ]] || { score "$model" "$set" "$work/long.tsv" "$name" && touch "$model.$set.scored"; }
        done
    done
    exit 0
fi

for name in $selected_rows; do
    [[ "$name" == full ]] && continue
    model="$(row_model "$name")"
    [[ -e "$model.done" ]] || step "$name: $row_updates updates" "$model.done" \
        train_row "$model" "$name" --max-updates "$row_updates"
    [[ -e "$model.scored" ]] || { score "$model" dev "$work/rows.tsv" "$name" && touch "$model.scored"; }
done
