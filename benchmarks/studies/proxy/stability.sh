#!/usr/bin/env bash
# The default recipe's stability (issue 44, study part d), shrunk to fit a session: the forward
# model trained on the whole bible table with seeds 1, 2 and 3, on 2 threads and on 1, each run
# stopped at the same update count; then each model's column per target word on the proxy bench.
# A bad start shows as one run's held-out perplexity far above the others' at the same update.
#
#   [SEEDS='1 2 3'] benchmarks/studies/proxy/stability.sh WORK UPDATES OUT [REFERENCE.pt]
#   benchmarks/studies/proxy/stability.sh WORK 2000 benchmarks/studies/proxy/results/stability WORK/fwd.pt
#
# WORK holds the models, their logs and the scored pairs (a model already there is not trained
# again; each run encodes the table into a cache of its own, as two runs cannot share one). OUT gets
# models.tsv (each run's best held-out and honest perplexity, seconds, and how far its weights are
# from the same seed's 2-thread run's: 0.0 is the same model to the bit) and the proxy bench's
# result files; REFERENCE, a model trained to the end, joins the proxy run as `+full`. SEEDS: the
# seeds to train, each on 2 threads and on 1.
set -euo pipefail
[ $# -eq 3 ] || [ $# -eq 4 ] || { sed -n '2,15p' "$0"; exit 2; }
work=$1 updates=$2 out=$3 reference=${4:-}
read -r -a seeds <<< "${SEEDS:-1 2 3}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=training_row.sh
source "$here/training_row.sh"
table=$here/../../../../shared/data/bible-en-fr/model/phrase-table.gz
mkdir -p "$work" "$out"

train() {  # seed threads
    [ -f "$work/s$1-t$2.pt" ] && return
    OMP_NUM_THREADS=$2 rescore train "$table" -o "$work/s$1-t$2.pt" --seed "$1" --max-updates "$updates" \
        --cache-dir "$work/s$1-t$2.cache" --force 2> "$work/s$1-t$2.train.log"
    rm -r "$work/s$1-t$2.cache" "$work/s$1-t$2.pt.checkpoint"
}
export -f train; export work updates table
for seed in "${seeds[@]}"; do train "$seed" 2; done                 # both cores each
printf '%s\n' "${seeds[@]}" | xargs -P 2 -I{} bash -c 'train {} 1'  # one core each, two at a time

printf 'seed\tthreads\tupdates\tbest held-out perplexity\tat update\thonest perplexity\tseconds\t'"\
max |weight - the 2-thread run's|\n" > "$out/models.tsv"
for threads in 2 1; do
    for seed in "${seeds[@]}"; do
        row=$(training_row "$seed\t$threads" "$work/s$seed-t$threads.train.log")
        difference=$(python3 "$here/same_weights.py" "$work/s$seed-t$threads.pt" "$work/s$seed-t2.pt")
        printf '%s\t%s\n' "$row" "$difference" >> "$out/models.tsv"
    done
done

[ -f "$work/pairs.gz" ] || python3 "$here/proxy_bench.py" pairs -o "$work/pairs.gz"
runs=() models=() columns=() systems=() index=5
for threads in 2 1; do for seed in "${seeds[@]}"; do runs+=("s$seed-t$threads"); done; done
for run in "${runs[@]}"; do models+=(--model "$work/$run.pt"); done
[ -z "$reference" ] || { runs+=(full); models+=(--model "$reference"); }
OMP_NUM_THREADS=2 rescore score "$work/pairs.gz" "${models[@]}" --per-word --precision fp32 -o "$work/scored.gz" --force
for run in "${runs[@]}"; do  # the per-word columns follow the log p ones
    columns+=(--column "$run=$((index + ${#runs[@]}))") systems+=(--system "+$run=$run")
    index=$((index + 1))
done
OMP_NUM_THREADS=1 python3 "$here/proxy_bench.py" run --table "$work/scored.gz" "${columns[@]}" "${systems[@]}" \
    --replicates 2 --out "$out"
