"""1 rank against 2 ranks (torchrun, one thread each), end to end, in one run.

`rescore score SLICE.gz --model M -o OUT.gz` on a gzipped slice of the real table (every k-th
line, so that phrase lengths are those of the whole table), once as one process and once as
`torchrun --standalone --nproc-per-node 2 -m rescorer score ...`, alternately, for the `small`
and `paper` presets (randomly initialised with the table's shortlists: speed does not depend on
the weights). Wall time includes starting Python and torch, reading, scoring, writing the units
and assembling the output. The speed-up is the median of the per-round ratios, since the
machine is shared; the two outputs are checked to hold the same lines.

    python3 benchmarks/drivers/ranks.py [--lines 50000] [--rounds 3] [--presets small,paper]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.helpers import ours  # noqa: E402
from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR  # noqa: E402


def table_slice(table: Path, lines: int, directory: Path) -> Path:
    """Every k-th line of the table, gzipped: `lines` real lines spread over the whole table."""
    path = directory / f"slice-{lines}.gz"
    if path.exists():
        return path
    with gzip.open(table, "rb") as source:
        every = source.read().split(b"\n")[:-1]
    step = max(1, len(every) // lines)
    path.write_bytes(gzip.compress(b"\n".join(every[::step][:lines]) + b"\n"))
    return path


def run(command: list, env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def one_and_two(table: Path, model: Path, unit_lines: int, work: Path) -> tuple[float, float]:
    """Wall seconds of one rank and of two ranks on the same table, and a check of equality."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    score = ["-q", "score", str(table), "--model", str(model), "--unit-lines", str(unit_lines), "--force"]
    one = run([sys.executable, "-m", "rescorer", *score, "-o", str(work / "one.gz")], env)
    two = run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
               "-m", "rescorer", *score, "-o", str(work / "two.gz")], env)
    if gzip.decompress((work / "one.gz").read_bytes()) != gzip.decompress((work / "two.gz").read_bytes()):
        raise RuntimeError("1 rank and 2 ranks wrote different tables")
    return one, two


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--unit-lines", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--presets", default="small,paper")
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "ranks.json")
    args = parser.parse_args()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    vocabs = ours.load_shortlists(args.table, RESULTS_DIR)
    table = table_slice(args.table, args.lines, RESULTS_DIR)
    presets = args.presets.split(",")
    models = {preset: ours.save_bundle(ours.make_bundle(preset, *vocabs), RESULTS_DIR / f"model-{preset}-random.pt")
              for preset in presets}
    runs = {preset: [] for preset in presets}
    with tempfile.TemporaryDirectory(dir=RESULTS_DIR) as work:
        for round_ in range(args.rounds):
            for preset in presets:
                one, two = one_and_two(table, models[preset], args.unit_lines, Path(work))
                runs[preset].append({"one_rank_s": one, "two_ranks_s": two, "speedup": one / two})
                print(f"round {round_ + 1}, {preset}: 1 rank {one:.1f} s, 2 ranks {two:.1f} s, "
                      f"{one / two:.2f}x", flush=True)
    print(f"\n{args.lines:,} lines of {args.table.name} (every k-th line), units of {args.unit_lines:,} "
          f"lines, one thread per rank, {os.cpu_count()} cores; medians of {args.rounds} rounds")
    print(f"{'preset':8} {'1 rank (s)':>11} {'2 ranks (s)':>12} {'speed-up':>9} {'lines/s, 2 ranks':>17}")
    summary = {}
    for preset in presets:
        one = statistics.median(run["one_rank_s"] for run in runs[preset])
        two = statistics.median(run["two_ranks_s"] for run in runs[preset])
        speedup = statistics.median(run["speedup"] for run in runs[preset])
        summary[preset] = {"one_rank_s": one, "two_ranks_s": two, "speedup": speedup, "runs": runs[preset]}
        print(f"{preset:8} {one:11.1f} {two:12.1f} {speedup:8.2f}x {args.lines / two:17,.0f}")
    args.json.write_text(json.dumps({"lines": args.lines, "unit_lines": args.unit_lines,
                                     "table": str(args.table), "presets": summary}, indent=1))


if __name__ == "__main__":
    main()
