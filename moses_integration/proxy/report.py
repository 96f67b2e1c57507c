"""The proxy bench's table in Markdown, from summarize()'s frame: the columns `moses ablation`
reports, less those of a decoder run (MERT iterations, how tuning started)."""

from __future__ import annotations

import pandas as pd

from rescorer.io.text_tables import markdown_cell

from ..evaluation.results_table import mean_sd_text, p_text
from ..evaluation.scores import EvalResult
from ..nbest.pro_search import ALPHA, GAMMA, XI
from .bench import BenchTuning

__all__ = ["markdown_table"]

HEADER = ["System", "Replicates", "Dev BLEU (MERT)", "Test BLEU", "Δ BLEU", "p (BLEU)", "Holm p (BLEU)",
          "p per replicate", "Test chrF", "p (chrF)", "Holm p (chrF)", "New-feature weights"]


def markdown_table(summary: pd.DataFrame, first_best: EvalResult, num_refs: int, test_lines: int,
                   dev_lines: int, tuning: BenchTuning, list_size: int = 200) -> str:
    """`tuning`: how the weights were tuned, for the caption; `list_size`: the hypotheses of each
    verse the lists were cut to (their first ones)."""
    header = [f"Dev BLEU ({tuning.optimizer.upper()})" if name == "Dev BLEU (MERT)" else name for name in HEADER]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.append("| decoder 1-best (the lists' first line) | – | – | " + f"{first_best.bleu:.2f} | – | – | – | – | "
                 f"{first_best.chrf:.2f} | – | – | – |")
    for i, row in summary.iterrows():
        lines.append("| " + " | ".join([
            markdown_cell(row.system), str(row.replicates), mean_sd_text(row.dev_bleu_mean, row.dev_bleu_sd),
            mean_sd_text(row.test_bleu_mean, row.test_bleu_sd),
            "–" if i == 0 else f"{row.delta_test_bleu:+.2f}", p_text(row.p_bleu), p_text(row.p_bleu_holm),
            row.p_bleu_per_replicate or "–", mean_sd_text(row.test_chrf_mean, row.test_chrf_sd),
            p_text(row.p_chrf), p_text(row.p_chrf_holm), row.new_column_weights or "–"]) + " |")
    lines += ["", f"Proxy bench: the stored {list_size}-best lists reranked, no decoding. Weights tuned on {dev_lines} dev "
              f"verses by {_tuned_by(tuning)}; test on {test_lines} verses. BLEU and chrF against "
              f"{num_refs} reference(s), sacrebleu on the tokenized, lowercased text ({first_best.bleu_signature}). "
              "Δ and p: the replicates' concatenated outputs against Baseline's (approximate randomization), "
              "Holm-corrected over the systems. Weights: sum |w| = 1.", ""]
    return "\n".join(lines)


def _tuned_by(tuning: BenchTuning) -> str:
    if tuning.optimizer == "pro":
        return (f"PRO in numpy (Hopkins and May's sampler: {GAMMA} pairs a verse, BLEU+1 gap over {ALPHA:g}, the "
                f"{XI} widest; a logistic regression; one sample per replicate seed)")
    return (f"MERT in numpy ({tuning.restarts} random restarts, "
            + ("uniform in [0, 1]" if tuning.spread == 0 else f"near the start, spread {tuning.spread:g}")
            + ", one run per replicate seed, from the lists' tuned weights; new features start at 0)")
