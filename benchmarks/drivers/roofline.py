"""This machine's fp32 matrix-multiply rate, on the shapes the encoder-decoder uses.

The roofline's peak is the best median rate over the model-like shapes with many rows
(a whole batch of positions at once); the few-row shapes show what a per-step recurrent
product gets. Run alone: ``python benchmarks/drivers/roofline.py [--threads 1,2]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Sequence

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: rescorer, benchmarks
from benchmarks.helpers.timing import median, time_repeated  # noqa: E402

__all__ = ["measure_matmul", "MODEL_SHAPES"]

# (rows, inner, cols): rows = positions in a batch; named after the product they stand for.
MODEL_SHAPES: Dict[str, tuple] = {
    "input proj   4096x500 @ 500x3000": (4096, 500, 3000),
    "recurrent    4096x1000 @ 1000x3000": (4096, 1000, 3000),
    "output G_l   4096x500 @ 500x15000": (4096, 500, 15000),
    "recurrent/step 256x1000 @ 1000x3000": (256, 1000, 3000),
    "recurrent/step 64x1000 @ 1000x3000": (64, 1000, 3000),
}
PEAK_SHAPES = ("input proj   4096x500 @ 500x3000", "recurrent    4096x1000 @ 1000x3000",
               "output G_l   4096x500 @ 500x15000")


def _rate(rows: int, inner: int, cols: int, dtype: torch.dtype, repeats: int, min_time: float) -> float:
    a = torch.randn(rows, inner).to(dtype)
    b = torch.randn(inner, cols).to(dtype)
    out = torch.empty(rows, cols, dtype=dtype)
    seconds = time_repeated(lambda: torch.mm(a, b, out=out), repeats=repeats, min_time=min_time)
    return 2 * rows * inner * cols / median(seconds) / 1e9


def measure_matmul(threads: Sequence[int] = (1, 2), dtypes: Sequence[str] = ("float32",),
                   repeats: int = 5, min_time: float = 0.3) -> Dict[str, dict]:
    """GFLOP/s per shape, thread count and dtype; ``peak`` is the best of PEAK_SHAPES."""
    saved = torch.get_num_threads()
    results: Dict[str, dict] = {}
    try:
        for dtype_name in dtypes:
            dtype = getattr(torch, dtype_name)
            for n in threads:
                torch.set_num_threads(n)
                shapes = {name: _rate(*shape, dtype, repeats, min_time) for name, shape in MODEL_SHAPES.items()}
                results[f"{dtype_name}/{n}"] = {
                    "dtype": dtype_name, "threads": n, "gflops": shapes,
                    "peak_gflops": max(shapes[name] for name in PEAK_SHAPES),
                }
    finally:
        torch.set_num_threads(saved)
    return results


def format_table(results: Dict[str, dict]) -> List[str]:
    lines = []
    for res in results.values():
        lines.append(f"  {res['dtype']}, {res['threads']} thread(s): peak {res['peak_gflops']:.1f} GFLOP/s")
        for name, rate in res["gflops"].items():
            lines.append(f"    {name:38s} {rate:8.1f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--dtypes", default="float32", help="comma-separated, e.g. float32,bfloat16")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    results = measure_matmul([int(t) for t in args.threads.split(",")], args.dtypes.split(","), args.repeats)
    print("\n".join(format_table(results)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
