"""The tables of docs/phrase-feature-study.md, made from the real-Moses runs' committed result
files under benchmarks/studies/proxy/results/ (benchmarks/helpers/page_tables.py).

    python benchmarks/studies/proxy/phrase_feature_tables.py            # says which tables differ
    python benchmarks/studies/proxy/phrase_feature_tables.py --write    # writes them into the page
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from benchmarks.helpers import page_tables  # noqa: E402
from benchmarks.studies.proxy import study_tables  # noqa: E402
from benchmarks.studies.proxy.real_wide_table import column_system  # noqa: E402
from benchmarks.studies.proxy.study_tables import MINUS, RESULTS, row, table  # noqa: E402

PAGE = HERE.parents[2] / "docs" / "phrase-feature-study.md"
TABLE_COLUMNS = 4  # the filtered table's own scores; a row's new columns follow them

# Each run's rows with new phrase-table columns: the row's file name, and its columns' names.
NEW_COLUMNS = {
    "real-wide-replicates": {"baseline+RNN": ("fwd",), "baseline+RNN+wp": ("fwd", "wp"),
                             "baseline+fwdpw+inv": ("fwdpw", "inv")},
    "real-amd": {"baseline+defaultpw": ("fwdpw",), "baseline+default": ("fwd",),
                 "baseline+default+wp": ("fwd", "wp")},
    "real-amd-inverse": {"baseline+default+inv+wp": ("fwd", "inv", "wp")},
}


def tuned_columns(path: Path, count: int) -> list:
    """A tuned run's last `count` phrase-table weights (its new columns), then its LM0 weight."""
    weights = study_tables.tuned_weights(path)
    values = [weights[name] for name in weights if name.startswith("TranslationModel0_")]
    assert len(values) == TABLE_COLUMNS + count, f"{path.name}: {len(values)} phrase-table weights"
    return values[TABLE_COLUMNS:] + [weights["LM0_0"]]


def replicate_files(folder: str, run: str) -> list:
    """A row's replicates' weight files in seed order (seed 1's has the row's own name)."""
    found = sorted((RESULTS / folder).glob(f"{run}.seed*.weights.txt"))
    return [path for path in [RESULTS / folder / f"{run}.weights.txt", *found] if path.exists()]


def weights() -> str:
    """Each row's new columns' tuned weights, replicate by replicate, beside LM0's."""
    rows = []
    for folder, systems in NEW_COLUMNS.items():
        for run, names in systems.items():
            tuned = [tuned_columns(path, len(names)) for path in replicate_files(folder, run)]
            cells = [", ".join(f"{replicate[index]:+.4f}".replace("-", MINUS) for replicate in tuned)
                     for index in range(len(names))]
            lm = ", ".join(f"{replicate[-1]:.3f}" for replicate in tuned)
            system = column_system(run)
            assert system in study_tables.real_results(folder).index, f"{folder}: no row {system}"
            rows.append(row(f"`{system}` ({folder})", "; ".join(f"{name} {cell}" for name, cell in zip(names, cells)), lm))
    return table(("System (run)", "New columns' tuned weights, replicates 1, 2, 3", "LM0's weight"), rows)


TABLES = {"paired-models": study_tables.paired_models, "paired-real": study_tables.paired_real,
          "real-amd": study_tables.real_amd, "real-amd-inverse": study_tables.real_amd_inverse,
          "weights": weights}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
