"""The ablation's results table: mean ± sd of dev and test BLEU over MERT replicates per
system, the difference to Baseline and its p-value, how each system's tuning started and how
many MERT iterations each run took; written as CSV (all numbers) and Markdown (for a README or
paper draft), with one row per run below the summary and the MERT curves as CSV."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Mapping, Optional, Sequence

import pandas as pd

from rescorer.counts import counted
from rescorer.io.atomic_output import write_atomically

from .multiple_testing import holm_bonferroni
from .scores import EvalResult

__all__ = ["COLUMNS", "summarize", "to_markdown", "write_tables", "mean_sd", "mean_sd_text", "p_text"]

COLUMNS = [
    "system", "replicates", "start",
    "dev_bleu_mean", "dev_bleu_sd", "test_bleu_mean", "test_bleu_sd",
    "test_chrf_mean", "test_chrf_sd", "delta_test_bleu", "p_bleu", "p_bleu_holm", "p_chrf", "p_chrf_holm",
    "p_bleu_per_replicate",
    "mert_iterations_mean", "runs_stopped_at_max_iterations", "new_column_weights",
]
_STOPPED = {"convergence": "convergence", "max-iterations": "--max-iterations",
            "unknown": "unknown (no stop message in mert-moses.log)"}
_MARK = {"convergence": "", "max-iterations": " max", "unknown": " ?"}


def mean_sd(values: Sequence[Optional[float]]) -> tuple[float, float]:
    """Mean and sample sd (ddof=1; NaN with one replicate) of the known values."""
    known = pd.Series([v for v in values if v is not None], dtype=float)
    return float(known.mean()), float(known.std(ddof=1))


def summarize(results: Mapping[str, Sequence[EvalResult]],
              p_values: Mapping[str, Mapping[str, Optional[float]]],
              replicate_p_values: Sequence[Mapping[str, Mapping[str, Optional[float]]]] = (),
              tested_bleu: Optional[Mapping[str, float]] = None) -> pd.DataFrame:
    """One row per system, in the given order; the first system is the baseline. `p_values`:
    the test over all replicates at once, also given Holm-corrected over the systems compared;
    `replicate_p_values`: one test per replicate. `tested_bleu`: the BLEU of the outputs the test
    compared (the replicates' concatenated outputs), so that Δ is the difference the p is about;
    without it, Δ is the difference of the mean BLEUs."""
    holm = {metric: holm_bonferroni({name: p_values.get(name, {}).get(metric) for name in results})
            for metric in ("bleu", "chrf")}
    rows = []
    baseline_bleu = None
    baseline_tested = None
    for name, runs in results.items():
        dev_mean, dev_sd = mean_sd([r.dev_bleu for r in runs])
        test_mean, test_sd = mean_sd([r.bleu for r in runs])
        chrf_mean, chrf_sd = mean_sd([r.chrf for r in runs])
        if baseline_bleu is None:
            baseline_bleu = test_mean
            baseline_tested = (tested_bleu or {}).get(name)
        tested = (tested_bleu or {}).get(name)
        delta = test_mean - baseline_bleu if tested is None or baseline_tested is None else tested - baseline_tested
        p = p_values.get(name, {})
        starts = "/".join(dict.fromkeys(r.start or "?" for r in runs))
        iterations, _ = mean_sd([r.iterations for r in runs])
        at_max = sum(r.stopped_by == "max-iterations" for r in runs)
        rows.append([name, len(runs), starts, dev_mean, dev_sd, test_mean, test_sd, chrf_mean,
                     chrf_sd, delta, p.get("bleu"), holm["bleu"][name], p.get("chrf"), holm["chrf"][name],
                     _per_replicate(name, replicate_p_values), iterations, at_max, _new_weights(runs)])
    return pd.DataFrame(rows, columns=COLUMNS)


def _per_replicate(name: str, replicate_p_values) -> str:
    """BLEU p of replicate 1, 2, ... against Baseline's same replicate: `0.0120, 0.2100`."""
    values = [p.get(name, {}).get("bleu") for p in replicate_p_values]
    return ", ".join(p_text(value) for value in values) if any(v is not None for v in values) else ""


def _new_weights(runs: Sequence[EvalResult]) -> str:
    """Each new column's tuned weight, mean ± sd over the replicates: `RNN 0.0312 ± 0.0040`.
    A weight MERT leaves near 0 is a finding: the feature did not help it."""
    names = list(dict.fromkeys(name for run in runs for name in (run.new_weights or {})))
    parts = []
    for name in names:
        mean, sd = mean_sd([(run.new_weights or {}).get(name) for run in runs])
        parts.append(f"{name} {mean:.4f}" + ("" if math.isnan(sd) else f" ± {sd:.4f}"))
    return "; ".join(parts)


def mean_sd_text(mean: float, sd: float) -> str:
    if math.isnan(mean):
        return "–"
    return f"{mean:.2f}" if math.isnan(sd) else f"{mean:.2f} ± {sd:.2f}"


def p_text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.4f}"


def _bleu(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.2f}"


def _iterations(run: EvalResult) -> str:
    if run.iterations is None:
        return "–"
    return f"{run.iterations}{_MARK.get(run.stopped_by or 'unknown', ' ?')}"


def _runs_table(results: Mapping[str, Sequence[EvalResult]]) -> list[str]:
    header = ["System", "Replicate", "Start", "MERT iterations", "Stopped by",
              "Dev BLEU of the 1-best, iteration 1 → last", "Test BLEU"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, runs in results.items():
        for replicate, run in enumerate(runs, 1):
            curve = [b for b in (run.dev_bleu_curve or []) if b is not None]
            trend = f"{curve[0]:.2f} → {curve[-1]:.2f}" if curve else "–"
            lines.append("| " + " | ".join([
                name, str(replicate), run.start or "–", "–" if run.iterations is None else
                str(run.iterations), _STOPPED.get(run.stopped_by or "", "–"), trend,
                _bleu(run.bleu)]) + " |")
    return lines


def _decoding_note(summary: pd.DataFrame) -> str:
    """What the decoding rows are, when the table has any (study/decoding_rows.py)."""
    if not any("(dec)" in name for name in summary.system):
        return ""
    return ("+CSLM(dec), +CSLM(dec)+RNN, +CSLM(dec)+RNN+WP: Baseline, +RNN and +RNN+WP with the CSLM in the "
            "decoder's search (Moses' NeuralLM feature, NeuralLM0, loading its NPLM export), each tuned by MERT "
            "from the same replicate's tuned weights of the system it extends and the NeuralLM's starting "
            "weight (warm), and decoded on test; its new-column weights include NeuralLM0's. ")


def to_markdown(summary: pd.DataFrame,
                results: Optional[Mapping[str, Sequence[EvalResult]]] = None) -> str:
    """A Markdown table (no `tabulate` dependency): mean ± sd over replicates; with `results`,
    the MERT iterations of each replicate and a table of the runs."""
    header = ["System", "Start", "Dev BLEU (MERT, n-best)", "Test BLEU", "Δ Test BLEU", "p (BLEU)", "p (BLEU, Holm)",
              "Test chrF", "p (chrF)", "p (chrF, Holm)", "p (BLEU) per replicate", "New-column weights",
              "MERT iterations"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in summary.iterrows():
        delta = "–" if i == 0 else f"{row.delta_test_bleu:+.2f}"
        runs = (results or {}).get(row.system, [])
        lines.append("| " + " | ".join([
            row.system, row.start, mean_sd_text(row.dev_bleu_mean, row.dev_bleu_sd),
            mean_sd_text(row.test_bleu_mean, row.test_bleu_sd), delta, p_text(row.p_bleu), p_text(row.p_bleu_holm),
            mean_sd_text(row.test_chrf_mean, row.test_chrf_sd), p_text(row.p_chrf), p_text(row.p_chrf_holm),
            row.p_bleu_per_replicate or "–",
            row.new_column_weights or "–",
            ", ".join(_iterations(r) for r in runs) or "–"]) + " |")
    replicates = int(summary.replicates.max()) if len(summary) else 0
    counts = sorted({run.references for runs in (results or {}).values() for run in runs if run.references})
    scored = (f"Test BLEU and chrF against {' or '.join(map(str, counts))} reference(s). " if counts else "")
    lines += ["", f"{scored}Mean ± sample sd over {replicates} MERT replicate(s). Dev BLEU (MERT, n-best): "
              "what the optimizer reached on the pooled n-best lists (mert-moses.pl's 'BEST'), "
              "not the BLEU of a 1-best decoding, which the MERT runs below show. p: paired test of the "
              "replicates' concatenated test outputs against Baseline's (replicate r paired with "
              "Baseline's replicate r, so the test sees the optimizer's variance too, as Clark et al. "
              "(2011) ask); Δ: the BLEU of those same concatenated outputs minus Baseline's, so it "
              "can differ from the difference of the means by a few hundredths; p (Holm): the same "
              f"p corrected by Holm–Bonferroni over the {counted(max(len(summary) - 1, 0), 'system')} compared "
              "with Baseline; p per replicate: the same test of each replicate alone. Start: ini = the ini's "
              "weights; cold = those and the new columns' scaled starting weights; warm = the "
              "same replicate's tuned Baseline weights and the new columns' starting weights; "
              "rerank = the system named before '+rerank', its n-best lists reranked with the "
              "sentence models (weights tuned on dev; Dev BLEU is then the reranked dev output's); "
              "+CSLM, +CSLM+RNN, +CSLM+RNN+WP: Baseline, +RNN and +RNN+WP reranked the same way with the "
              "target language model's CSLM= feature alone (Cho et al.'s Table 1). "
              f"{_decoding_note(summary)}"
              "MERT iterations per replicate: 'max' = stopped by --max-iterations before "
              "converging, '?' = no stop message in its log. New-column weights: the tuned weight "
              "of each column the system adds, mean ± sd over the replicates."]
    at_max = int(summary.runs_stopped_at_max_iterations.sum()) if len(summary) else 0
    if at_max:
        total = int(summary.replicates[summary.start != "rerank"].sum())  # reranked rows run no MERT
        lines += ["", f"**{at_max} of {total} MERT runs stopped at --max-iterations before MERT "
                  "converged**: their systems may be under-tuned (see mert-curves.png)."]
    if results:
        lines += ["", "MERT runs:", ""] + _runs_table(results)
    return "\n".join(lines) + "\n"


def write_tables(summary: pd.DataFrame, results: Mapping[str, Sequence[EvalResult]],
                 out_dir: Path) -> tuple[Path, Path]:
    """results.csv, results.md, replicates.csv (one row per replicate) and mert-curves.csv
    (one row per MERT iteration) in out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "results.csv", out_dir / "results.md"
    write_atomically(csv_path, summary.to_csv(index=False, float_format="%.4f").encode("utf-8"))
    write_atomically(md_path, to_markdown(summary, results).encode("utf-8"))
    per_run, curves = [], []
    for name, runs in results.items():
        for replicate, run in enumerate(runs, 1):
            row = asdict(run)
            curve = row.pop("dev_bleu_curve") or []
            per_run.append({"system": name, "replicate": replicate, **row})
            curves += [{"system": name, "replicate": replicate, "iteration": i, "dev_bleu": b}
                       for i, b in enumerate(curve, 1)]
    write_atomically(out_dir / "replicates.csv", pd.DataFrame(per_run).to_csv(index=False).encode("utf-8"))
    write_atomically(out_dir / "mert-curves.csv", pd.DataFrame(
        curves, columns=["system", "replicate", "iteration", "dev_bleu"]).to_csv(index=False).encode("utf-8"))
    return csv_path, md_path
