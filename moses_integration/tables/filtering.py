"""Filter the test set's tables once per ablation, not once per decoding.

A text (PhraseDictionaryMemory) table is loaded whole by every decoder run: the 2.2M-line
bible-en-fr table for each of 4 systems x R replicates. Moses' filter-model-given-input.pl keeps
the lines whose source phrase occurs in the input, for the phrase table and the lexicalized
reordering tables, and writes a moses.ini naming the filtered files. The ablation's systems
differ only in score columns, so the table holding every column is filtered once, and each
system's filtered table is its columns of that one (the same lines, as filtering looks only at
the source phrase). A tuned ini is then pointed at the filtered files for test decoding.

Compact tables load on demand and the script passes them through, so they are not filtered.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from rescorer.io.atomic_output import AtomicOutput
from rescorer.io.gzip_io import BUFFER_SIZE

from .. import child_process
from ..errors import MosesConfigError, MosesRunError
from ..ini.moses_ini import MosesIni
from ..ini.moses_install import MosesInstall
from ..line_files import open_binary_read
from .phrase_table import split_score_columns

__all__ = ["FILTER_SCRIPT", "FilteredModel", "filter_for_test", "system_tables", "filtered_ini"]

FILTER_SCRIPT = "training/filter-model-given-input.pl"


@dataclass(frozen=True)
class FilteredModel:
    """The filter's output: the phrase table with every column, and the other filtered files."""

    table_path: Path
    other_paths: dict  # feature name -> filtered path= (the reordering tables)


def _plain_input(src_path: Path, target: Path) -> Path:
    """The script reads its input as plain text (gzip only when the name ends in .gz)."""
    if not target.is_file():
        with open_binary_read(src_path) as src, AtomicOutput(target, force=True, encoded=True) as out:
            while block := src.read(BUFFER_SIZE):
                out.write(block)
    return target


def filter_for_test(moses: MosesInstall, ini: MosesIni, table_name: str, src_path: Path,
                    work_dir: Path) -> FilteredModel:
    """Run filter-model-given-input.pl once on `ini` (absolute paths, the table with every
    column) for the test source; a finished filtering in work_dir is reused."""
    work_dir.mkdir(parents=True, exist_ok=True)
    out_dir = work_dir / "filtered"
    if not (out_dir / "info").is_file():
        if out_dir.exists():  # a killed filtering: the script refuses such a directory
            shutil.rmtree(out_dir)
        ini_path = work_dir / "all-columns.moses.ini"
        ini.write(ini_path)
        source = _plain_input(src_path, work_dir / "test.src")
        argv = [str(moses.script(FILTER_SCRIPT)), str(out_dir.resolve()), str(ini_path.resolve()),
                str(source.resolve())]
        log_path = work_dir / "filter.log"
        with open(log_path, "wb") as log:
            code = child_process.call(argv, cwd=work_dir, stdout=log, stderr=subprocess.STDOUT)
        if code != 0 or not (out_dir / "info").is_file():
            raise MosesRunError(f"filter-model-given-input.pl exited with status {code} filtering "
                                f"the test set's tables; see {log_path}")
    return _read_filtered(out_dir / "moses.ini", ini, table_name)


def _read_filtered(filtered_ini_path: Path, original: MosesIni, table_name: str) -> FilteredModel:
    filtered = MosesIni.read(filtered_ini_path)
    before = {f.name: f.args.get("path") for f in original.features()}
    table_path, others = None, {}
    for feature in filtered.features():
        path = feature.args.get("path")
        if feature.name == table_name:
            table_path = Path(path) if path else None
        elif path and path != before.get(feature.name):
            others[feature.name] = path
    if table_path is None or table_path == Path(before.get(table_name) or ""):
        raise MosesConfigError(f"{filtered_ini_path}: expected a filtered path= for {table_name}, "
                               f"found {table_path}")
    return FilteredModel(table_path, others)


def system_tables(filtered: FilteredModel, keep: Mapping[str, Sequence[int]],
                  out_dir: Path) -> dict[str, Path]:
    """Each system's filtered table (out_dir/<slug>.phrase-table.gz): its columns of the
    filtered table, all written in one pass; tables already there are kept."""
    paths = {slug: out_dir / f"{slug}.phrase-table.gz" for slug in keep}
    missing = {paths[slug]: columns for slug, columns in keep.items() if not paths[slug].is_file()}
    if missing:
        split_score_columns(filtered.table_path, missing, force=True)
    return paths


def filtered_ini(tuned: MosesIni, table_name: str, table_path: Path,
             filtered: FilteredModel) -> MosesIni:
    """The tuned ini, reading the filtered tables: only path= values change."""
    ini = MosesIni(tuned.text(), origin=tuned.origin)
    for feature in ini.features():
        if feature.name == table_name:
            ini.set_feature_arg(feature, "path", str(table_path.resolve()))
        elif feature.name in filtered.other_paths:
            ini.set_feature_arg(feature, "path", filtered.other_paths[feature.name])
    return ini
