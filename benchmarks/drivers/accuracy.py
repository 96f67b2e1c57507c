"""How far bf16 and int8 scores move from fp32, on a trained model and real pairs.

The speed figures use randomly initialised models, whose near-uniform distributions would
hide any error; here a trained model scores N real pairs of the table (evenly spaced) in fp32,
bf16 autocast and int8 (torchao), and we report, against fp32: mean and max |delta log p|,
Spearman's rank correlation over all pairs, and the share of source phrases whose best-scored
target is unchanged (what a decoder's choice among a source's translations depends on).

    python benchmarks/drivers/accuracy.py MODEL.pt [--pairs 100000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from benchmarks.helpers import ours  # noqa: E402
from benchmarks.helpers.pairs import sample_pairs  # noqa: E402
from rescorer.models.model_files import load_model  # noqa: E402
from rescorer.scoring.batch_scoring import score_encoded  # noqa: E402

__all__ = ["measure_accuracy"]


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share theirs), as Spearman's coefficient wants."""
    try:
        from scipy.stats import rankdata

        return rankdata(values)
    except ImportError:  # ties are rare among float scores
        return np.argsort(np.argsort(values)).astype(np.float64)


def _best_target_kept(sources: list, reference: np.ndarray, other: np.ndarray) -> float:
    """Share of source phrases (with 2+ targets) whose highest-scored target is the same."""
    groups: dict = {}
    for index, source in enumerate(sources):
        groups.setdefault(source, []).append(index)
    kept = [int(np.argmax(reference[rows]) == np.argmax(other[rows])) for rows in groups.values() if len(rows) > 1]
    return float(np.mean(kept)) if kept else float("nan")


def compare(reference: np.ndarray, other: np.ndarray, sources: list) -> dict:
    delta = np.abs(other - reference)
    return {"mean_abs_delta": float(delta.mean()), "max_abs_delta": float(delta.max()),
            "spearman": float(np.corrcoef(_ranks(reference), _ranks(other))[0, 1]),
            "best_target_kept": _best_target_kept(sources, reference, other)}


def measure_accuracy(model_path: Path, num_pairs: int, precisions=("bf16", "int8")) -> dict:
    bundle = load_model(model_path)
    pairs = sample_pairs(num_pairs)
    data = ours.encode(bundle, pairs)
    sources = [" ".join(src) for src, _ in pairs]
    results = {"model": str(model_path), "arch": bundle.config.arch, "pairs": len(pairs),
               "settings": {k: v for k, v in bundle.config.to_dict().items() if v is not None}}
    start = time.perf_counter()
    reference = score_encoded(bundle.model, data.src, data.tgt)
    results["fp32_seconds"] = time.perf_counter() - start
    results["mean_log_p"] = float(reference.mean())
    for precision in precisions:
        scorer = ours.int8_bundle(bundle) if precision == "int8" else bundle
        start = time.perf_counter()
        scores = score_encoded(scorer.model, data.src, data.tgt, precision=precision)
        results[precision] = {**compare(reference, scores, sources), "seconds": time.perf_counter() - start}
    return results


def format_accuracy(results: dict) -> list:
    lines = [f"\nAccuracy against fp32 ({results['arch']} {results['settings'].get('hidden_size')} units, trained: "
             f"{Path(results['model']).name}; {results['pairs']} real pairs, mean log p {results['mean_log_p']:.2f})",
             f"  {'precision':10s} {'mean |d log p|':>15s} {'max |d log p|':>14s} {'Spearman':>9s} {'best target kept':>17s}"]
    for precision in ("bf16", "int8"):
        row = results.get(precision)
        if row:
            kept = row["best_target_kept"]
            kept_text = "-" if kept != kept else f"{100 * kept:.2f}%"  # nan: no source with 2+ targets
            lines.append(f"  {precision:10s} {row['mean_abs_delta']:15.4f} {row['max_abs_delta']:14.4f} "
                         f"{row['spearman']:9.6f} {kept_text:>17s}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--pairs", type=int, default=100000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = measure_accuracy(args.model, args.pairs)
    print("\n".join(format_accuracy(results)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
