"""Where one scoring process's time goes on a GPU: how long the GPU computes and how long it
waits for the host, in one run of about a minute.

benchmarks/drivers/gpu_pipeline.py measured (RESULTS.md, "Speed III, part 5") that one process with
host workers scores 120-135k pairs/s on an H200, 2.5% of the card's bf16 peak, where the host
stages alone allow about 500k. This says why: `rescore_table` (the CLI's scoring path, host
workers on) runs under torch.profiler on a table of `--lines` lines (the bundled slice
repeated) with a random `cho2014` model of `--preset`, and prints

- the wall time, the GPU's busy time (its kernels' summed durations) and their ratio;
- the operators that take the model process's CPU time (self time, all its threads), and
  those that take the GPU's;
- with `--trace FILE`, a Chrome trace (chrome://tracing, ui.perfetto.dev) of the whole run.

    python3 benchmarks/drivers/gpu_profile.py [--lines 200000] [--preset paper] [--precision bf16] [--trace OUT.json]

`--device cpu` is a dry run of this script (no GPU time to report). The operators do not show
the Python between them (unpickling the workers' chunks, formatting): benchmarks/drivers/gpu_session.sh
runs this and a py-spy profile of the same path (benchmarks/helpers/spy_summary.py) in one lease.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from benchmarks.drivers.gpu_pipeline import EXAMPLE_TABLE, build_table, make_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--host-workers", type=int, default=None, help="[default: the device's]")
    parser.add_argument("--trace", type=Path, help="write a Chrome trace of the run here")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device: this benchmark needs a GPU (--device cpu: a dry run)")

    from rescorer.models.model_files import load_model
    from rescorer.scoring.settings import ScoreSettings
    from rescorer.scoring.table_rescoring import rescore_table

    with tempfile.TemporaryDirectory(prefix="gpu-profile-") as work:
        table, model_path = Path(work) / "table.gz", Path(work) / "model.pt"
        rows = build_table(EXAMPLE_TABLE, args.lines, table)
        make_model(args.preset, rows, model_path)
        bundle = load_model(model_path, torch.device(args.device))
        settings = ScoreSettings(force=True, precision=args.precision, host_workers=args.host_workers)
        rescore_table(table, Path(work) / "warm.gz", bundle, settings)  # CUDA context, kernels, workers' imports
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device == "cuda" else [])
        with profile(activities=activities) as profiler:
            started = time.perf_counter()
            summary = rescore_table(table, Path(work) / "out.gz", bundle, settings)
            if args.device == "cuda":
                torch.cuda.synchronize()
            wall = time.perf_counter() - started
    events = profiler.key_averages()
    gpu_busy = sum(event.self_device_time_total for event in events) / 1e6
    print(f"{args.lines:,} lines, {args.preset}, {args.precision}, {args.device}: {summary.pairs_per_second:,.0f} "
          f"pairs/s, wall {wall:.2f} s, GPU busy {gpu_busy:.2f} s ({gpu_busy / wall:.0%} of the wall)")
    print(events.table(sort_by="self_cpu_time_total", row_limit=args.top, max_name_column_width=60))
    if args.device == "cuda":
        print(events.table(sort_by="self_device_time_total", row_limit=args.top, max_name_column_width=60))
    if args.trace:
        profiler.export_chrome_trace(str(args.trace))
        print(f"trace: {args.trace}")


if __name__ == "__main__":
    main()
