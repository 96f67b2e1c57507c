"""The table of docs/training.md's "The default recipe, and the paper's": the report of
benchmarks/studies/time_to_quality.py as it wrote it (OUT/ttq.md), from the committed run in
benchmarks/studies/results/time-to-quality/ (benchmarks/helpers/page_tables.py).

    python benchmarks/studies/training_tables.py            # says whether the table differs
    python benchmarks/studies/training_tables.py --write    # writes it into the page
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from benchmarks.helpers import page_tables  # noqa: E402

PAGE = HERE.parents[1] / "docs" / "training.md"
RESULTS = HERE / "results" / "time-to-quality"


TABLES = {"time-to-quality": page_tables.printed(RESULTS / "ttq.md")}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
