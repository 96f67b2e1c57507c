"""The real-Moses wide rows' table (real_wide_rows.sh): each retuned system's test translation
against the Baseline's, BLEU and chrF on both references with paired approximate
randomization, Holm-corrected over the rows, as `moses ablation` reports them.

    python benchmarks/studies/proxy/real_wide_table.py WORK/decoding BIBLE_EN_FR_DIR OUT_DIR

Baseline is the fixture's tuned system: its translation is the stored lists' 1-best
(nbest/test.1best.gz), which its ini wrote with the bench's decoder flags. Where Baseline
retuned the rows' way was decoded too, each row is also compared with it, as the proxy compares
its rows with its own retuned Baseline. Writes OUT_DIR/results.tsv and OUT_DIR/results.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from moses_integration.evaluation.multiple_testing import holm_bonferroni
from moses_integration.evaluation.scores import compare, read_references, score
from moses_integration.line_files import read_lines
from rescorer.io.text_tables import markdown_cell

RETUNED = "Baseline (retuned)"
# the file name of each row, and the proxy bench's name for the same system
ROWS = {"baseline-lm0": "Baseline-LM0", "baseline-pef": "Baseline-p(e|f)",
        "baseline-lr": "Baseline-LexicalReordering0", "baseline-dist": "Baseline-Distortion0",
        "baseline-wp": "Baseline-WordPenalty0", "baseline-retuned": RETUNED}


def against(base: str, outputs: dict, scores: dict, refs: list, suffix: str) -> pd.DataFrame:
    """Δ BLEU and chrF of every other system against `base`, p (AR) and Holm's p over them."""
    others = [name for name in outputs if name not in (base, "Baseline")]
    systems = [(base, outputs[base])] + [(name, outputs[name]) for name in others]
    p_values = compare(systems, refs, "ar")
    table = pd.DataFrame(index=others)
    for metric in ("bleu", "chrf"):
        table[f"delta_{metric}{suffix}"] = [round(getattr(scores[name], metric) - getattr(scores[base], metric), 4)
                                            for name in others]
        table[f"p_{metric}{suffix}"] = [p_values[name][metric] for name in others]
        holm = holm_bonferroni({name: p_values[name][metric] for name in others})
        table[f"p_{metric}_holm{suffix}"] = [holm[name] for name in others]
    return table


def main(decoding: Path, data: Path, out: Path) -> pd.DataFrame:
    refs = read_references([data / "corpus" / "test.fr.gz", data / "corpus" / "test.ref-darby.fr.gz"])
    outputs = {"Baseline": read_lines(data / "nbest" / "test.1best.gz")}
    outputs.update({name: read_lines(decoding / f"{row}.hyp")
                    for row, name in ROWS.items() if (decoding / f"{row}.hyp").exists()})
    scores = {name: score(hyps, refs, name) for name, hyps in outputs.items()}
    table = pd.DataFrame({"test_bleu": [scores[name].bleu for name in outputs],
                          "test_chrf": [scores[name].chrf for name in outputs]}, index=list(outputs))
    table = table.join(against("Baseline", outputs, scores, refs, ""))
    if RETUNED in outputs:
        table = table.join(against(RETUNED, outputs, scores, refs, "_vs_retuned"))
    table.index.name = "system"
    table.reset_index().to_csv(out / "results.tsv", sep="\t", index=False, na_rep="-")
    (out / "results.md").write_text(markdown(table, scores["Baseline"]))
    return table


def markdown(table: pd.DataFrame, base) -> str:
    """The table as the docs show it: Δ and p against the fixture's Baseline, and against the
    retuned Baseline where it was measured."""
    retuned = "delta_bleu_vs_retuned" in table
    head = "| System | Test BLEU | Δ BLEU | p (BLEU) | Holm p | Test chrF | Δ chrF | p (chrF) | Holm p |"
    head += " Δ BLEU vs retuned | p | Holm p |" if retuned else ""
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def compared(row, metric: str, suffix: str) -> list:
        """Δ, p and Holm's p of one metric against one Baseline; dashes for a Baseline itself."""
        if pd.isna(row.get(f"delta_{metric}{suffix}")):
            return ["–"] * 3
        return [f"{row[f'delta_{metric}{suffix}']:+.2f}", f"{row[f'p_{metric}{suffix}']:.4f}",
                f"{row[f'p_{metric}_holm{suffix}']:.4f}"]

    for name, row in table.iterrows():
        line = [markdown_cell(name), f"{row.test_bleu:.2f}", *compared(row, "bleu", ""),
                f"{row.test_chrf:.2f}", *compared(row, "chrf", "")]
        if retuned:
            line += compared(row, "bleu", "_vs_retuned")
        lines.append("| " + " | ".join(line) + " |")
    lines += ["", f"BLEU: {base.bleu_signature}; chrF: {base.chrf_signature}; "
              f"{base.references} references, {base.num_lines} verses. Baseline: the fixture's tuned "
              "system (the stored lists' 1-best).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])).to_string())
