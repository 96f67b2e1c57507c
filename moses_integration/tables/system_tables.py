"""Each ablation system's phrase table and moses.ini, made from the one rescored table.

A system's table holds exactly its columns (the ini's num-features ones, then its new ones, in
the rescored table's order). All of them are written in one pass over the rescored table, once;
the system that keeps every column uses the rescored table itself. We chose this over keeping
every column and freezing unused weights at 0 with mert-moses.pl's --activate-features: a frozen
feature still costs decoding time and still counts in mert's random restarts, and preflight can
check a table whose columns match the ini.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from rescorer.counts import counted
from rescorer.io.table_reader import PhraseTableReader

from ..errors import MosesConfigError, MosesNotFoundError
from ..ini.moses_ini import Feature, MosesIni
from ..ini.moses_install import MosesInstall
from .columns import ColumnLayout, SystemSpec
from .phrase_table import binarize_compact, scores_span, split_score_columns

__all__ = ["column_indices", "write_system_tables", "system_ini", "check_same_pairs"]


def column_indices(spec: SystemSpec, layout: ColumnLayout, num_base: int) -> list[int]:
    """0-based score columns of the rescored table that the system keeps."""
    return list(range(num_base)) + [num_base + layout.names.index(c) for c in spec.new_columns]


def write_system_tables(specs: Sequence[SystemSpec], layout: ColumnLayout, num_base: int,
                        rescored: Path, tables_dir: Path, table: Feature,
                        moses: Optional[MosesInstall], threads: int) -> dict[str, Path]:
    """The path= each system with new columns gets (Baseline keeps the ini's own table)."""
    num_found = num_base + len(layout.names)
    text_tables, missing = {}, {}
    for spec in specs:
        if not spec.new_columns:
            continue
        keep = column_indices(spec, layout, num_base)
        if keep == list(range(num_found)):
            text_tables[spec.slug] = rescored
            continue
        path = tables_dir / f"{spec.slug}.phrase-table.gz"
        text_tables[spec.slug] = path
        if not path.is_file():  # written atomically: a killed run leaves no partial table
            missing[path] = keep
    if missing:
        split_score_columns(rescored, missing, force=True)
    if table.kind != "PhraseDictionaryCompact":
        return text_tables
    if moses is None:
        raise MosesNotFoundError("a compact phrase table needs Moses to re-binarize")
    binarized = {}
    for spec in specs:
        if spec.slug in text_tables:
            prefix = tables_dir / f"{spec.slug}.phrase-table"
            minphr = prefix.with_name(prefix.name + ".minphr")
            binarized[spec.slug] = minphr if minphr.is_file() else binarize_compact(
                moses, text_tables[spec.slug], prefix, num_base + len(spec.new_columns), threads,
                tables_dir / f"{spec.slug}.binarize.log")
    return binarized


def system_ini(base_ini: MosesIni, base_dir: Path, table: Feature, table_path: Optional[Path],
               weights: Sequence[float]) -> MosesIni:
    """The ini with absolute paths (the decoder runs elsewhere) and, for a system with new
    columns, its table and one weight per column."""
    ini = MosesIni(base_ini.text(), origin=base_ini.origin)
    ini.make_paths_absolute(base_dir)
    if table_path is not None:
        ini.set_score_columns(ini.feature(table.name), str(table_path.resolve()), weights)
    return ini


def check_same_pairs(original: Path, rescored: Path, num_base: int, num_lines: int = 1000) -> None:
    """The rescored table is the ini's table plus columns: same pairs, same first scores, on its
    first lines (Baseline's test table is cut from the rescored one, see tables/filtering.py)."""
    with PhraseTableReader(original) as before, PhraseTableReader(rescored) as after:
        for _, old, new in zip(range(num_lines), before, after):
            old_scores = old.raw[slice(*scores_span(old))].split()
            new_scores = new.raw[slice(*scores_span(new))].split()[:num_base]
            if (old.src, old.tgt, old_scores) != (new.src, new.tgt, new_scores):
                raise MosesConfigError(
                    f"{rescored}:{new.line_no}: expected the pair and first {counted(num_base, 'score')} of "
                    f"{original}:{old.line_no} ({old.src} ||| {old.tgt} ||| "
                    f"{b' '.join(old_scores).decode()}), found {new.src} ||| {new.tgt} ||| "
                    f"{b' '.join(new_scores).decode()}: was it rescored from another table?")
