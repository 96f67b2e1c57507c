#!/usr/bin/env bash
# The next GPU lease's one run (issue 33; about 3 minutes on an H200): why one scoring process
# feeds the GPU at 2.5% of its bf16 peak (benchmarks/RESULTS.md, "Speed III, part 5").
#
#   1. torch.profiler over one `rescore_table` (benchmarks/drivers/gpu_profile.py): the GPU's busy share
#      of the wall clock, and the operators by CPU and by GPU time;
#   2. py-spy over `rescore score` (new path, bf16, `paper`): each thread's and worker's time,
#      idle included, placed in rescorer's code (benchmarks/helpers/spy_summary.py).
#
# The device machine has torch but no registry: carry the wheels it lacks in .whl (ignored by
# git through .git/info/exclude), fetched here with
#
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#       --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 -d .whl sacremoses isal zstandard py-spy
#
# and run there, from the repository root, as `bash benchmarks/drivers/gpu_session.sh` with .whl carried.
# Output: stdout, and the files in $OUT (the profiler's trace, py-spy's raw stacks).
set -uo pipefail
out="${OUT:-/tmp/gpu-session}"
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 PATH="/tmp/site/bin:$PATH"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

echo "== torch.profiler: paper, bf16, 200,000 lines"
timeout 150 python3 benchmarks/drivers/gpu_profile.py --preset paper --lines 200000 --trace "$out/trace.json"

echo "== py-spy: paper, bf16, 800,000 lines, the new path"
work=/tmp/gpu-session-work
mkdir -p "$work"
python3 -c "
import benchmarks.drivers.gpu_pipeline as g, pathlib
work = pathlib.Path('$work')
g.make_model('paper', g.build_table(g.EXAMPLE_TABLE, 800000, work / 'table.gz'), work / 'paper.pt')"
timeout 120 py-spy record --subprocesses --idle --threads -r 50 --format raw -o "$out/spy.txt" -- \
    python3 -m rescorer score "$work/table.gz" --model "$work/paper.pt" -o "$work/out.gz" --device cuda \
    --precision bf16 --force
python3 benchmarks/helpers/spy_summary.py "$out/spy.txt" --top 10
