"""The real-Moses wide rows' table (real_wide_rows.sh): each retuned system's test translation
against the Baseline's, BLEU and chrF on both references with paired approximate
randomization, Holm-corrected over the rows, as `moses ablation` reports them.

    python benchmarks/studies/proxy/real_wide_table.py WORK/decoding BIBLE_EN_FR_DIR OUT_DIR

The Baseline's translation is the stored lists' 1-best (nbest/test.1best.gz), which the
fixture's tuned ini wrote with the bench's decoder flags. Writes OUT_DIR/results.tsv and
OUT_DIR/results.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from moses_integration.evaluation.multiple_testing import holm_bonferroni
from moses_integration.evaluation.scores import compare, read_references, score
from moses_integration.line_files import read_lines

# the file name of each row, and the proxy bench's name for the same system
ROWS = {"baseline-lm0": "Baseline-LM0", "baseline-pef": "Baseline-p(e|f)"}


def main(decoding: Path, data: Path, out: Path) -> pd.DataFrame:
    refs = read_references([data / "corpus" / "test.fr.gz", data / "corpus" / "test.ref-darby.fr.gz"])
    outputs = {"Baseline": read_lines(data / "nbest" / "test.1best.gz")}
    outputs.update({name: read_lines(decoding / f"{row}.hyp")
                    for row, name in ROWS.items() if (decoding / f"{row}.hyp").exists()})
    scores = {name: score(hyps, refs, name) for name, hyps in outputs.items()}
    p_values = compare(list(outputs.items()), refs, "ar")
    holm = {metric: holm_bonferroni({name: p_values[name][metric] for name in outputs})
            for metric in ("bleu", "chrf")}
    base = scores["Baseline"]
    table = pd.DataFrame([{
        "system": name, "test_bleu": result.bleu, "delta_bleu": round(result.bleu - base.bleu, 4),
        "p_bleu": p_values[name]["bleu"], "p_bleu_holm": holm["bleu"][name],
        "test_chrf": result.chrf, "delta_chrf": round(result.chrf - base.chrf, 4),
        "p_chrf": p_values[name]["chrf"], "p_chrf_holm": holm["chrf"][name],
    } for name, result in scores.items()])
    table.to_csv(out / "results.tsv", sep="\t", index=False, na_rep="-")
    lines = ["| System | Test BLEU | Δ BLEU | p (BLEU) | Holm p | Test chrF | Δ chrF | p (chrF) | Holm p |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples():
        p = "–" if row.system == "Baseline" else None
        lines.append(f"| {row.system} | {row.test_bleu:.2f} | {p or f'{row.delta_bleu:+.2f}'} | "
                     f"{p or f'{row.p_bleu:.4f}'} | {p or f'{row.p_bleu_holm:.4f}'} | {row.test_chrf:.2f} | "
                     f"{p or f'{row.delta_chrf:+.2f}'} | {p or f'{row.p_chrf:.4f}'} | {p or f'{row.p_chrf_holm:.4f}'} |")
    lines += ["", f"BLEU: {base.bleu_signature}; chrF: {base.chrf_signature}; "
              f"{len(refs)} references, {base.num_lines} verses.", ""]
    (out / "results.md").write_text("\n".join(lines))
    return table


if __name__ == "__main__":
    print(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])).to_string(index=False))
