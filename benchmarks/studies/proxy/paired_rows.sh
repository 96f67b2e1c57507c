#!/usr/bin/env bash
# The default's own columns on the proxy and on real Moses, paired (issue 44, part 4 and the
# study's confirmation by real MERT): the default forward and inverse models trained on the whole
# table (one thread each, two at a time), their columns over the bench's filtered table, the
# proxy bench on those columns (3 replicates), then each phrase system retuned by real MERT
# beside the same retuned Baseline (real_wide_rows.sh's baseline+NAME rows, 3 seeds).
#
#     MOSES_HOME=/path/to/mosesdecoder benchmarks/studies/proxy/paired_rows.sh \
#         ../shared/data/bible-en-fr WORK benchmarks/studies/proxy/results [ROW...]
#
# WORK is real_wide_rows.sh's (its WORK/sys, filtered table and Baseline retuned are reused).
# ROW: baseline+fwdpw+inv, baseline+RNN, baseline+RNN+wp, baseline+fwdpw (default: all, in that
# order). Writes RESULTS/paired-proxy (the proxy's files, the models' training and scoring logs)
# and adds the rows to RESULTS/real-wide-replicates. Resumable: every finished step is skipped.
# About 40 minutes of training, 2 of scoring, 6 of proxy, then 3 MERT runs of 5-20 minutes a row.
set -euo pipefail
data="$(realpath "${1:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR RESULTS_DIR [ROW...]}")"
work="$(realpath "${2:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR RESULTS_DIR [ROW...]}")"
results="$(realpath "${3:?usage: $0 BIBLE_EN_FR_DIR WORK_DIR RESULTS_DIR [ROW...]}")"
shift 3
if [[ $# -gt 0 ]]; then rows=("$@"); else rows=(baseline+fwdpw+inv baseline+RNN baseline+RNN+wp baseline+fwdpw); fi
here="$(dirname "$(realpath "$0")")"
models="$work/models" out="$results/paired-proxy"
mkdir -p "$models" "$out"
[[ -s $work/sys/model/phrase-table.gz ]] || { echo "$work/sys: run real_wide_rows.sh first (it builds the bench)" >&2; exit 1; }

# the default models, two one-thread trainings at a time
for side in fwd:forward inv:inverse; do
    name=${side%%:*}
    [[ -s $models/$name.pt ]] || OMP_NUM_THREADS=1 rescore train "$data/model/phrase-table.gz" -o "$models/$name.pt" \
        --direction "${side#*:}" > "$models/$name.train.log" 2>&1 &
done
wait

# their columns over the filtered table: 5 fwd, 6 inv, 7 fwd per word, 8 inv per word, 9 the word penalty
scored="$models/scored.gz"
[[ -s $scored ]] || rescore score "$work/sys/model/phrase-table.gz" --model "$models/fwd.pt" --model "$models/inv.pt" \
    --per-word --unk-penalty --precision fp32 -o "$scored" > "$models/scored.log" 2>&1
for log in fwd.train.log inv.train.log scored.log; do  # no machine paths in the result files
    sed -e "s#$data#DATA#g" -e "s#$work#WORK#g" "$models/$log" > "$out/$log"
done

# each row's table: the filtered table's four columns, then the row's columns of the scored table
source "$here/../../helpers/bible_bench.sh"  # cut_table
cut_table "$scored" "$work/fwdpw+inv.phrase-table.gz" 7 6
cut_table "$scored" "$work/RNN.phrase-table.gz" 5
cut_table "$scored" "$work/RNN+wp.phrase-table.gz" 5 9
cut_table "$scored" "$work/fwdpw.phrase-table.gz" 7

[[ -s $out/results.tsv ]] || python3 "$here/proxy_bench.py" run --table "$scored" \
    --column fwd=5 --column inv=6 --column fwdpw=7 --column invpw=8 --column wp=9 \
    --system +RNN=fwd --system +RNN+WP=fwd,wp --system +fwd+inv=fwd,inv --system +fwdpw=fwdpw \
    --system +fwdpw+inv=fwdpw,inv --replicates 3 --out "$out"

SEEDS='1 2 3' "$here/real_wide_rows.sh" "$data" "$work" "$results/real-wide-replicates" "${rows[@]}"
