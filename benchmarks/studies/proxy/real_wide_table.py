"""The real-Moses wide rows' table (real_wide_rows.sh): each retuned system's test translation
against the Baseline's, BLEU and chrF on both references with paired approximate
randomization, Holm-corrected over the rows, as `moses ablation` reports them: a system's MERT
replicates (ROW.hyp, ROW.seed2.hyp, ...) are tested as one concatenated output, replicate r
against the Baseline's replicate r, and Δ is the BLEU of those concatenated outputs.

    python benchmarks/studies/proxy/real_wide_table.py WORK/decoding BIBLE_EN_FR_DIR OUT_DIR

Baseline is the fixture's tuned system: its translation is the stored lists' 1-best
(nbest/test.1best.gz), which its ini wrote with the bench's decoder flags. Where Baseline
retuned the rows' way was decoded too, each row is also compared with it, as the proxy compares
its rows with its own retuned Baseline. Writes OUT_DIR/results.tsv, OUT_DIR/results.md and
OUT_DIR/replicates.tsv (each replicate's own test BLEU and chrF)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from moses_integration.evaluation.multiple_testing import holm_bonferroni
from moses_integration.evaluation.results_table import mean_sd, mean_sd_text
from moses_integration.evaluation.scores import compare, read_references, score
from moses_integration.line_files import read_lines
from rescorer.io.text_tables import markdown_cell

RETUNED = "Baseline (retuned)"
# the file name of each row, and the proxy bench's name for the same system
ROWS = {"baseline-lm0": "Baseline-LM0", "baseline-pef": "Baseline-p(e|f)",
        "baseline-lr": "Baseline-LexicalReordering0", "baseline-dist": "Baseline-Distortion0",
        "baseline-wp": "Baseline-WordPenalty0", "baseline-retuned": RETUNED}


def rows_of(decoding: Path) -> dict:
    """The wide rows, then every baseline+NAME row (Baseline with NAME's columns: `+NAME`, its
    word penalty `wp` named `WP` as the proxy bench and Table 1 name it)."""
    columns = sorted({path.name.split(".")[0] for path in decoding.glob("baseline+*.hyp")})
    return {**ROWS, **{row: column_system(row) for row in columns}}


def column_system(row: str) -> str:
    """baseline+RNN+wp: `+RNN+WP`."""
    return "".join("+" + ("WP" if part == "wp" else part) for part in row[len("baseline+"):].split("+"))


def replicates(decoding: Path, row: str) -> list[Path]:
    """A row's test outputs in seed order: seed 1's ROW.hyp, then ROW.seedN.hyp."""
    seeds = sorted(decoding.glob(f"{row}.seed*.hyp"), key=lambda path: int(path.name[len(row) + 5:-4]))
    return [path for path in [decoding / f"{row}.hyp", *seeds] if path.exists()]


def paired(system: list, base: list, refs: list) -> tuple[list, list, list]:
    """The system's replicates concatenated, the base's replicate r beside its replicate r (the
    base's last where it has fewer), and the references as often."""
    count = len(system)
    bases = [base[min(r, len(base) - 1)] for r in range(count)]
    return ([line for run in system for line in run], [line for run in bases for line in run],
            [list(ref) * count for ref in refs])


def against(base: str, outputs: dict, refs: list, suffix: str) -> pd.DataFrame:
    """Δ BLEU and chrF of every other system against `base` (on the paired concatenated outputs),
    p (AR) and Holm's p over them."""
    others = [name for name in outputs if name not in (base, "Baseline")]
    table = pd.DataFrame(index=others)
    deltas, p_values = {}, {}
    for name in others:
        hyps, base_hyps, tested_refs = paired(outputs[name], outputs[base], refs)
        p_values[name] = compare([(base, base_hyps), (name, hyps)], tested_refs, "ar")[name]
        mine, theirs = score(hyps, tested_refs, name), score(base_hyps, tested_refs, base)
        deltas[name] = {metric: getattr(mine, metric) - getattr(theirs, metric) for metric in ("bleu", "chrf")}
    for metric in ("bleu", "chrf"):
        table[f"delta_{metric}{suffix}"] = [round(deltas[name][metric], 4) for name in others]
        table[f"p_{metric}{suffix}"] = [p_values[name][metric] for name in others]
        holm = holm_bonferroni({name: p_values[name][metric] for name in others})
        table[f"p_{metric}_holm{suffix}"] = [holm[name] for name in others]
    return table


def main(decoding: Path, data: Path, out: Path) -> pd.DataFrame:
    refs = read_references([data / "corpus" / "test.fr.gz", data / "corpus" / "test.ref-darby.fr.gz"])
    outputs = {"Baseline": [read_lines(data / "nbest" / "test.1best.gz")]}
    outputs_of = {name: replicates(decoding, row) for row, name in rows_of(decoding).items()}
    outputs.update({name: [read_lines(path) for path in paths] for name, paths in outputs_of.items() if paths})
    scores = {name: [score(hyps, refs, name) for hyps in runs] for name, runs in outputs.items()}
    table = pd.DataFrame({"replicates": [len(outputs[name]) for name in outputs]}, index=list(outputs))
    for metric in ("bleu", "chrf"):
        spreads = [mean_sd([getattr(run, metric) for run in scores[name]]) for name in outputs]
        table[f"test_{metric}"] = [round(mean, 4) for mean, _ in spreads]
        table[f"test_{metric}_sd"] = [round(sd, 4) for _, sd in spreads]
    table = table.join(against("Baseline", outputs, refs, ""))
    if RETUNED in outputs:
        table = table.join(against(RETUNED, outputs, refs, "_vs_retuned"))
    table.index.name = "system"
    table.reset_index().to_csv(out / "results.tsv", sep="\t", index=False, na_rep="-")
    pd.DataFrame([(name, replicate, run.bleu, run.chrf) for name, runs in scores.items()
                  for replicate, run in enumerate(runs, 1)],
                 columns=["system", "replicate", "test_bleu", "test_chrf"]).to_csv(
        out / "replicates.tsv", sep="\t", index=False)  # each replicate's own test scores
    (out / "results.md").write_text(markdown(table, scores["Baseline"][0]))
    return table


def markdown(table: pd.DataFrame, base) -> str:
    """The table as the docs show it: Δ and p against the fixture's Baseline, and against the
    retuned Baseline where it was measured."""
    retuned = "delta_bleu_vs_retuned" in table
    head = "| System | Replicates | Test BLEU | Δ BLEU | p (BLEU) | Holm p | Test chrF | Δ chrF | p (chrF) | Holm p |"
    head += " Δ BLEU vs retuned | p | Holm p |" if retuned else ""
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def compared(row, metric: str, suffix: str) -> list:
        """Δ, p and Holm's p of one metric against one Baseline; dashes for a Baseline itself."""
        if pd.isna(row.get(f"delta_{metric}{suffix}")):
            return ["–"] * 3
        return [f"{row[f'delta_{metric}{suffix}']:+.2f}", f"{row[f'p_{metric}{suffix}']:.4f}",
                f"{row[f'p_{metric}_holm{suffix}']:.4f}"]

    for name, row in table.iterrows():
        line = [markdown_cell(name), str(int(row.replicates)),
                mean_sd_text(row.test_bleu, row.test_bleu_sd), *compared(row, "bleu", ""),
                mean_sd_text(row.test_chrf, row.test_chrf_sd), *compared(row, "chrf", "")]
        if retuned:
            line += compared(row, "bleu", "_vs_retuned")
        lines.append("| " + " | ".join(line) + " |")
    lines += ["", f"BLEU: {base.bleu_signature}; chrF: {base.chrf_signature}; "
              f"{base.references} references, {base.num_lines} verses. Baseline: the fixture's tuned "
              "system (the stored lists' 1-best). Test BLEU and chrF: the replicates' mean ± sd; Δ and p: "
              "their concatenated outputs, replicate r against that Baseline's replicate r (the fixture's "
              "one output for each).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])).to_string())
