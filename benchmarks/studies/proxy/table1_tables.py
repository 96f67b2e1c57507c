"""The tables of docs/table1-study.md, Cho et al.'s Table 1 on real Moses, made from the run's
committed result files in benchmarks/studies/proxy/results/real-table1/ (main_job_real_rows.sh
decodes +RNN and +RNN+WP from results/real-amd's tuned weights, real_rerank_rows.sh reranks
every system's lists with the CSLM; benchmarks/helpers/page_tables.py).

    python benchmarks/studies/proxy/table1_tables.py            # says which tables differ
    python benchmarks/studies/proxy/table1_tables.py --write    # writes them into the page
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from benchmarks.helpers import page_tables  # noqa: E402
from benchmarks.studies.proxy.study_tables import (  # noqa: E402
    MINUS, RESULTS, real_results, replicate_bleu, retuned_cells, row, spread, summary_cells, summary_line, table,
    thousands, training_summary, tuned_weights)

PAGE = HERE.parents[2] / "docs" / "table1-study.md"
RUN = "real-table1"

# Cho et al.'s rows: this run's system, how it is made, its new features' weights (where the
# tuned weights are: the MERT run's RUN.weights.txt, or the reranking's weights.json) and the
# paper's test BLEU with its Δ over its Baseline (Table 1; "–" where the paper has no such row).
ROWS = {
    "Baseline": ("Baseline (retuned)", "the fixture's system, retuned by MERT", "33.30"),
    "+RNN": ("+default", "+ the RNN's log p(e\\|f) column", "33.87 (+0.57)"),
    "+RNN+WP": ("+default+WP", "+ that column and its word penalty", "–"),
    "+CSLM": ("+cslm", "Baseline's 100-best lists reranked with the CSLM", "–"),
    "+CSLM+RNN": ("+default+cslm", "+RNN's lists reranked with the CSLM", "34.64 (+1.34)"),
    "+CSLM+RNN+WP": ("+default+WP+cslm", "+RNN+WP's lists reranked with the CSLM", "34.54 (+1.24)"),
}
# The tuned runs behind each system (their file names' stem, seed 1's), and the features shown.
RUNS = {"+default": "baseline+default", "+default+WP": "baseline+default+wp"}
RERANKED = {"+cslm": "baseline-retuned", "+default+cslm": "baseline+default", "+default+WP+cslm": "baseline+default+wp"}
SHOWN = {"TranslationModel0_4": "rnn", "TranslationModel0_5": "wp", "CSLM_0": "CSLM", "CSLMPerWord_0": "CSLM per word"}


def seeded(stem: str, seeds: int = 3) -> list:
    """A system's run names, seed 1 first (seed N's: STEM.seedN)."""
    return [stem] + [f"{stem}.seed{seed}" for seed in range(2, seeds + 1)]


def rerank_weights(run: str) -> dict:
    return json.loads((RESULTS / RUN / "rerank" / f"{run}.cslm.weights.json").read_text())["weights"]


def new_weights(system: str) -> str:
    """The new features' tuned weights, replicates 1, 2, 3."""
    if system in RUNS:
        tuned = [tuned_weights(RESULTS / RUN / f"{run}.weights.txt") for run in seeded(RUNS[system])]
    elif system in RERANKED:
        tuned = [rerank_weights(run) for run in seeded(RERANKED[system])]
    else:
        return "–"
    shown = [name for name in SHOWN if name in tuned[0]]
    return "; ".join(SHOWN[name] + " " + ", ".join(f"{weights[name]:.4f}".replace("-", MINUS) for weights in tuned)
                     for name in shown)


def table1() -> str:
    """Every system against Baseline retuned (Δ on the replicates' concatenated outputs, replicate
    r against its replicate r; Holm over the five systems), beside the paper's test BLEU."""
    real = real_results(RUN)
    base = replicate_bleu(RUN, "Baseline (retuned)")
    rows = []
    for name, (system, label, paper) in ROWS.items():
        line = real.loc[system]
        scores = spread(line.test_bleu, line.test_bleu_sd)
        chrf = spread(line.test_chrf, line.test_chrf_sd)
        if system == "Baseline (retuned)":
            each = ", ".join(f"{bleu:.2f}" for bleu in base)
            rows.append(row(name, label, f"{scores} ({each})", "–", "–", "–", chrf, "–", "–", paper))
            continue
        delta, p, holm, chrf_delta = retuned_cells(RUN, system, base)
        rows.append(row(name, label, scores, delta, p, holm, chrf, chrf_delta, new_weights(system), paper))
    return table(("System", "What it is", "Test BLEU", "Δ BLEU vs Baseline (per replicate)", "p", "Holm p",
                  "Test chrF", "Δ chrF", "New features' weights, replicates 1, 2, 3", "Cho et al.'s test BLEU (Δ)"),
                 rows)


def models() -> str:
    """The two networks of the run, from their training logs' summary lines."""
    rnn = training_summary(RESULTS / RUN / "rnn.train.log")
    updates, ppl, unigram, seconds = re.search(
        r": (\d+) updates, .*valid perplexity ([\d.]+) .*unigram ([\d.]+)\b.*?; ([\d.]+) s;",
        summary_line(RESULTS / RUN / "cslm.train.log")).groups()
    return table(("Network", "Command", "Updates", "Held-out perplexity (unigram)", "Minutes"), [
        row("the RNN (cho2014, `small`)", "`rescore train DATA/model/phrase-table.gz -o rnn.pt`",
            *summary_cells(rnn), f"{rnn['seconds'] / 60:.1f}"),
        row("the CSLM (7-gram, `small`)", "`rescore train --lm DATA/corpus/train.fr.gz -o cslm.pt --max-updates 3204`",
            thousands(int(updates)), f"{ppl} ({unigram})", f"{float(seconds) / 60:.1f}")])


TABLES = {"table1": table1, "table1-models": models}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
