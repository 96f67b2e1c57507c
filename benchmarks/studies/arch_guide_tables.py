"""The table of docs/benchmark.md's "Which scorer to choose", made from the committed result of
benchmarks/studies/arch_guide.py (benchmarks/studies/results/arch-guide/guide.json;
benchmarks/helpers/page_tables.py). arch_guide.py prints and writes the same table.

    python benchmarks/studies/arch_guide_tables.py            # says whether the table differs
    python benchmarks/studies/arch_guide_tables.py --write    # writes it into the page
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from benchmarks.helpers import page_tables  # noqa: E402

PAGE = HERE.parents[1] / "docs" / "benchmark.md"
RESULT = HERE / "results" / "arch-guide" / "guide.json"


def guide_table(results: dict) -> str:
    """Every scorer's size, training, held-out perplexity, scoring speed and FLOPs per pair."""
    rows = ["| scorer (`small` preset) | parameters | updates | held-out perplexity | scoring pairs/s "
            "(1 thread) | MFLOP/pair |", "|---|---|---|---|---|---|"]
    for name, row in results["systems"].items():
        rows.append(f"| {name} | {row['parameters'] / 1e6:.1f}M | {row['updates']:,} | "
                    f"{row['best_valid_ppl']:.1f} | {row['pairs_per_s']:,.0f} | {row['flops_per_pair'] / 1e6:.1f} |")
    budget = (f"{results['updates']:,} updates" if results.get("updates") else f"{results['minutes']:g} minutes")
    rows.append(f"\nUnigram model of the same held-out pairs: perplexity {results['unigram_ppl']:.1f}. "
                f"Each scorer trained {budget} on one thread.")
    return "\n".join(rows)


def arch_guide() -> str:
    return guide_table(json.loads(RESULT.read_text())) + "\n"


TABLES = {"arch-guide": arch_guide}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
