"""The study pages, each with the module that makes its tables from the study's committed result
files (PAGE and TABLES; benchmarks/helpers/page_tables.py). tests/test_docs.py checks every page
here against its files, and that no other page holds a BLEU table.

    python3 benchmarks/studies/study_pages.py            # says which tables differ from their files
    python3 benchmarks/studies/study_pages.py --write    # writes every study page's tables
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.helpers import page_tables  # noqa: E402

STUDY_TABLES = (
    "benchmarks.studies.proxy.study_tables",
    "benchmarks.studies.proxy.phrase_feature_tables",
    "benchmarks.studies.proxy.table1_tables",
    "benchmarks.studies.sentence_tables",
    "benchmarks.studies.analysis_tables",
    "benchmarks.studies.arch_guide_tables",
    "benchmarks.studies.training_tables",
)


def studies() -> list:
    """Each study's tables module (its PAGE and TABLES)."""
    return [importlib.import_module(name) for name in STUDY_TABLES]


def main(argv: list) -> int:
    failed = 0
    for study in studies():
        failed |= page_tables.main(study.PAGE, study.TABLES, argv)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
