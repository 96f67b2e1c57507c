"""The tables of docs/analysis.md (the paper's section 4), made from the committed output of
benchmarks/studies/analysis_examples.sh in benchmarks/studies/results/analysis/: the commands'
own Markdown tables as they printed them, the model they came from (Table 1's RNN, from its
training log) and what the figure commands said (benchmarks/helpers/page_tables.py).

    python benchmarks/studies/analysis_tables.py            # says which tables differ
    python benchmarks/studies/analysis_tables.py --write    # writes them into the page
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from benchmarks.helpers import page_tables  # noqa: E402
from benchmarks.studies.proxy.study_tables import RESULTS as PROXY_RESULTS  # noqa: E402
from benchmarks.studies.proxy.study_tables import row, summary_cells, table, training_summary  # noqa: E402

PAGE = HERE.parents[1] / "docs" / "analysis.md"
RESULTS = HERE / "results" / "analysis"
MODEL_LOG = PROXY_RESULTS / "real-table1" / "rnn.train.log"  # the model analysis_examples.sh was given


def model() -> str:
    trained = training_summary(MODEL_LOG)
    return table(("Model", "Updates", "Held-out perplexity (unigram)", "Minutes of training"), [
        row("cho2014 GRU, `small` preset, the default recipe (Table 1's RNN)", *summary_cells(trained),
            f"{trained['seconds'] / 60:.0f}")])


def figures() -> str:
    """Each figure command's summary line (`wrote FIGURE: ...`), as analysis.log holds it."""
    lines = []
    for figure, summary in re.findall(r"^wrote OUT/(\S+): (.*)$", (RESULTS / "analysis.log").read_text(), re.M):
        lines.append(row(f"`{figure}`", summary.replace("|", "\\|")))
    return table(("Figure", "What the command printed"), lines)


PRINTED = ("table2-frequent", "table2-rare", "table2-words", "table3")  # the commands' own tables, NAME.md
TABLES = {"analysis-model": model, "figures": figures,
          **{name: page_tables.printed(RESULTS / f"{name}.md") for name in PRINTED}}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
