"""The tables of docs/sentence-models.md, made from the committed result files of issue 30's
study (benchmarks/studies/sentence_study.sh's WORK, kept in benchmarks/studies/results/sentence-study/)
and of the real-Moses reranking row (benchmarks/studies/proxy/results/real-rerank/;
benchmarks/helpers/page_tables.py).

    python benchmarks/studies/sentence_tables.py            # says which tables differ
    python benchmarks/studies/sentence_tables.py --write    # writes them into the page
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from benchmarks.helpers import page_tables  # noqa: E402
from benchmarks.studies.proxy import study_tables  # noqa: E402
from benchmarks.studies.proxy.study_tables import row, signed, table, thousands  # noqa: E402

PAGE = HERE.parents[1] / "docs" / "sentence-models.md"
RESULTS = HERE / "results" / "sentence-study"
COLUMNS = ["name", "set", "bleu", "chrf"]  # sentence_study.sh's score lines

# The rows of the recipe's ablation: what each takes out (sentence_study.sh's rows).
ROWS = {"full": "the recipe", "no-dropout": "`--dropout 0`", "no-subwords": "`--subwords none` (words)",
        "no-label-smoothing": "`--label-smoothing 0`", "no-weight-decay": "`--weight-decay 0`",
        "constant-lr": "`--lr-schedule constant`", "no-average": "`--average 0`",
        "rnnsearch": "`--arch rnnsearch --layer-norm`"}


def scores(name: str) -> pd.DataFrame:
    """A score file (rows.tsv, final.tsv) indexed by (name, set)."""
    return pd.read_csv(RESULTS / name, sep="\t", names=COLUMNS).set_index(["name", "set"])


def summaries(log: Path) -> list:
    """Every training summary of a log (a resumed run adds one): updates, the best validation's
    dev perplexity and its update, and the run's own seconds."""
    found = re.findall(r"^trained on .*?: (\d+) updates(?: \(\d+ in this run\))?, stopped: [^;]*; valid perplexity "
                       r"([\d.]+) \(update (\d+)\).*?; ([\d.]+) s;", log.read_text(), re.M)
    return [{"updates": int(u), "ppl": p, "at": int(a), "seconds": float(s)} for u, p, a, s in found]


def training_cells(log: Path, updates: int) -> list:
    """The summary of the run that ended at `updates`: its best dev perplexity (update), and the
    minutes of every run of the log up to it."""
    runs = summaries(log)
    upto = [run for run in runs if run["updates"] <= updates]
    kept = upto[-1]
    assert kept["updates"] == updates, f"{log.name}: no run ended at update {updates}"
    return [f"{kept['ppl']} ({thousands(kept['at'])})", f"{sum(run['seconds'] for run in upto) / 60:.0f}"]


def final() -> str:
    """The recipe's model after the first row's updates and at the run's budget: dev and test."""
    rows_at, finals = scores("rows.tsv"), scores("final.tsv")
    first = summaries(RESULTS / "logs" / "full.log")[0]["updates"]
    last = summaries(RESULTS / "logs" / "full.log")[-1]["updates"]
    lines = [row(thousands(first), *training_cells(RESULTS / "logs" / "full.log", first),
                 f"{rows_at.loc[('full', 'dev'), 'bleu']:.2f} / {rows_at.loc[('full', 'dev'), 'chrf']:.2f}", "–")]
    lines.append(row(thousands(last), *training_cells(RESULTS / "logs" / "full.log", last),
                     f"{finals.loc[('final', 'dev'), 'bleu']:.2f} / {finals.loc[('final', 'dev'), 'chrf']:.2f}",
                     f"{finals.loc[('final', 'test'), 'bleu']:.2f} / {finals.loc[('final', 'test'), 'chrf']:.2f}"))
    return table(("Updates", "Best dev perplexity (update)", "Minutes of training",
                  "Dev BLEU / chrF", "Test BLEU / chrF"), lines)


def ablation() -> str:
    """Each row of the recipe's ablation trained so far, against the full recipe at the same
    updates (dev, beam 5)."""
    measured = scores("rows.tsv")
    full = measured.loc[("full", "dev")]
    lines = []
    for name, label in ROWS.items():
        if (name, "dev") not in measured.index:
            continue
        log = RESULTS / "logs" / f"{name}.log"
        first = summaries(log)[0]["updates"]
        line = measured.loc[(name, "dev")]
        delta = "–" if name == "full" else signed(line.bleu - full.bleu)
        lines.append(row(f"{name}: {label}", thousands(first), *training_cells(log, first),
                         f"{line.bleu:.2f}", f"{line.chrf:.2f}", delta))
    return table(("Row: the recipe with", "Updates", "Best dev perplexity (update)", "Minutes", "Dev BLEU", "Dev chrF",
                  "Δ BLEU"), lines)


TABLES = {"sentence-final": final, "sentence-ablation": ablation, "real-rerank": study_tables.real_rerank}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
