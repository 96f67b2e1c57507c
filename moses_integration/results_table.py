"""The ablation's results table: mean ± sd of dev and test BLEU over MERT replicates per
system, the difference to Baseline and its p-value; written as CSV (all numbers) and
Markdown (for a README or paper draft)."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Mapping, Optional, Sequence

import pandas as pd

from .evaluation import EvalResult

__all__ = ["COLUMNS", "summarize", "to_markdown", "write_tables"]

COLUMNS = [
    "system", "replicates",
    "dev_bleu_mean", "dev_bleu_sd", "test_bleu_mean", "test_bleu_sd",
    "test_chrf_mean", "test_chrf_sd", "delta_test_bleu", "p_bleu", "p_chrf",
]


def _mean_sd(values: Sequence[Optional[float]]) -> tuple[float, float]:
    """Mean and sample sd (ddof=1; NaN with one replicate) of the known values."""
    known = pd.Series([v for v in values if v is not None], dtype=float)
    return float(known.mean()), float(known.std(ddof=1))


def summarize(results: Mapping[str, Sequence[EvalResult]],
              p_values: Mapping[str, Mapping[str, Optional[float]]]) -> pd.DataFrame:
    """One row per system, in the given order; the first system is the baseline."""
    rows = []
    baseline_bleu = None
    for name, runs in results.items():
        dev_mean, dev_sd = _mean_sd([r.dev_bleu for r in runs])
        test_mean, test_sd = _mean_sd([r.bleu for r in runs])
        chrf_mean, chrf_sd = _mean_sd([r.chrf for r in runs])
        if baseline_bleu is None:
            baseline_bleu = test_mean
        p = p_values.get(name, {})
        rows.append([name, len(runs), dev_mean, dev_sd, test_mean, test_sd, chrf_mean, chrf_sd,
                     test_mean - baseline_bleu, p.get("bleu"), p.get("chrf")])
    return pd.DataFrame(rows, columns=COLUMNS)


def _pm(mean: float, sd: float) -> str:
    if math.isnan(mean):
        return "–"
    return f"{mean:.2f}" if math.isnan(sd) else f"{mean:.2f} ± {sd:.2f}"


def _p(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.4f}"


def to_markdown(summary: pd.DataFrame) -> str:
    """A Markdown table (no `tabulate` dependency): mean ± sd over replicates."""
    header = ["System", "Dev BLEU", "Test BLEU", "Δ Test BLEU", "p (BLEU)", "Test chrF", "p (chrF)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in summary.iterrows():
        delta = "–" if i == 0 else f"{row.delta_test_bleu:+.2f}"
        lines.append("| " + " | ".join([
            row.system, _pm(row.dev_bleu_mean, row.dev_bleu_sd),
            _pm(row.test_bleu_mean, row.test_bleu_sd), delta, _p(row.p_bleu),
            _pm(row.test_chrf_mean, row.test_chrf_sd), _p(row.p_chrf)]) + " |")
    replicates = int(summary.replicates.max()) if len(summary) else 0
    lines.append("")
    lines.append(f"Mean ± sample sd over {replicates} MERT replicate(s). p: paired test of the "
                 "replicates' concatenated test outputs against Baseline's.")
    return "\n".join(lines) + "\n"


def write_tables(summary: pd.DataFrame, results: Mapping[str, Sequence[EvalResult]],
                 out_dir: Path) -> tuple[Path, Path]:
    """results.csv, results.md and replicates.csv (one row per replicate) in out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "results.csv", out_dir / "results.md"
    summary.to_csv(csv_path, index=False, float_format="%.4f")
    md_path.write_text(to_markdown(summary), encoding="utf-8")
    per_run = [{"system": name, "replicate": i + 1, **asdict(r)}
               for name, runs in results.items() for i, r in enumerate(runs)]
    pd.DataFrame(per_run).to_csv(out_dir / "replicates.csv", index=False)
    return csv_path, md_path
