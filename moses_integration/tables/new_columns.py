"""`moses add-feature`'s job: point a moses.ini's phrase table at the rescored table and give
its new columns starting weights. Nothing else in the file changes; a PhraseDictionaryCompact
table is re-binarized first, since Moses cannot load the text table in its place."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from rescorer.counts import counted

from ..errors import MosesConfigError
from ..ini.moses_ini import MosesIni
from ..ini.moses_install import find_moses
from .phrase_table import binarize_compact, read_num_scores
from .starting_weights import table_starting_weights

__all__ = ["AddFeatureJob", "NewColumns", "add_feature"]


@dataclass(frozen=True)
class AddFeatureJob:
    """What `moses add-feature` was asked; the paths are the caller's (relative to the cwd)."""

    ini_path: Path
    table_path: Path  # the rescored (text) table
    out_path: Path  # the moses.ini to write
    base_dir: Path  # what the ini's relative paths are relative to
    feature: Optional[str] = None  # the phrase table's feature name if there are several
    initial_weight: Optional[float] = None  # None: scaled to the table
    new_columns: Optional[Sequence[str]] = None  # the new columns' names; None: inferred
    moses_dir: Optional[Path] = None  # only needed to re-binarize a compact table
    threads: int = 4


@dataclass(frozen=True)
class NewColumns:
    """What was written, for the report."""

    out_path: Path
    table_name: str
    table_path: str  # as written into the ini
    num_features: int
    names: Sequence[str]
    weights: Sequence[float]
    num_added: int

    def summary(self) -> str:
        return (f"{self.out_path}: {self.table_name} path={self.table_path} num-features={self.num_features} "
                f"(+{self.num_added} column(s): "
                f"{', '.join(f'{n}={w:g}' for n, w in zip(self.names, self.weights))})")


def add_feature(job: AddFeatureJob) -> NewColumns:
    """Write `job.out_path`: the ini with the table's new columns and their weights."""
    ini = MosesIni.read(job.ini_path)
    table = ini.phrase_table(job.feature)
    old = table.int_arg("num-features", ini.origin)
    found = read_num_scores(job.table_path)
    if found <= old:
        raise MosesConfigError(
            f"{job.table_path}:1: expected more than {counted(old, 'score')} (num-features={old} in "
            f"{job.ini_path}:{table.line_no + 1}), found {found}: is it the rescored table?")
    new_path = job.table_path
    if table.kind == "PhraseDictionaryCompact":
        prefix = job.table_path.with_name(job.table_path.name.removesuffix(".gz"))
        new_path = binarize_compact(find_moses(job.moses_dir), job.table_path, prefix, found, job.threads,
                                    prefix.with_name(prefix.name + ".binarize.log"))
    try:  # keep the path relative when the table lies under base_dir, like the rest of the ini
        shown = str(new_path.resolve().relative_to(job.base_dir.resolve()))
    except ValueError:
        shown = str(new_path.resolve())
    layout, weights = table_starting_weights(ini, table, job.table_path, found, job.new_columns,
                                             job.initial_weight)
    ini.add_score_columns(table, shown, found - old, weights)
    ini.check_weights(table.name)  # never write an ini Moses would refuse to load
    ini.write(job.out_path, force=True)
    return NewColumns(job.out_path, table.name, shown, found, layout.names, weights, found - old)
