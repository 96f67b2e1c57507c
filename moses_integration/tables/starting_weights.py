"""Where MERT starts a new column's weight, and where a system's tuning starts.

A fixed starting weight ignores scale. Against tuned phrase-table weights of about 0.05, a start
of 0.2 on an RNN log p of about -14 per phrase gave that one feature ten times the say of the
others, and MERT's 8 iterations did not recover (issue 12). So a new column starts with the
weight that gives it, per phrase pair, the contribution of an average existing column:

    C   = mean over the table's existing columns i of |w_i| * m_i
    w_j = C / m_j  for a model column,   w_wp = -C / m_wp  for the word penalty (a penalty)

m is the column's typical magnitude in Moses' units: the mean |ln v| over every line of the
table, with v floored at exp(-100) as Moses floors log scores. For the word penalty, whose count
is 0 on most lines, m_wp is the mean over the lines where it is not 0 (the cost of one unknown
word), or 1 when it is 0 everywhere. Weights are rounded to 3 significant digits.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from rescorer.io.atomic_output import write_atomically
from rescorer.io.table_reader import PhraseTableReader

from ..errors import MosesConfigError
from ..ini.moses_ini import Feature, MosesIni
from .columns import ColumnLayout, infer_layout
from .phrase_table import scores_span

__all__ = ["ColumnStats", "measure_columns", "check_layout", "cached_column_stats", "scaled_weights",
           "new_column_weights", "table_starting_weights", "warm_start_ini"]

LOG_FLOOR = -100.0  # Moses: log scores below this are floored (FloorScore)
_CHUNK_LINES = 100_000


@dataclass
class ColumnStats:
    """Typical magnitudes of each score column of a table, as Moses reads them (natural log)."""

    num_lines: int
    mean_abs_log: list  # per column: mean |ln v| over all lines
    mean_abs_log_nonzero: list  # per column: mean |ln v| over the lines where it is not 0
    nonzero_lines: list  # per column: how many lines that is
    min_log: list  # per column: the smallest ln v (model columns: <= 0, the penalty: >= 0)
    max_log: list


class _Sums:
    def __init__(self) -> None:
        self.lines = 0
        self.sums = None  # (sum |ln v|, its sum over non-zero lines, non-zero lines, min, max)

    def add(self, buffer: list) -> None:
        values = np.fromstring(b" ".join(buffer), sep=" ").reshape(len(buffer), -1)  # (lines, cols)
        logs = np.maximum(np.log(np.maximum(values, 0.0, dtype=np.float64)), LOG_FLOOR)
        magnitudes = np.abs(logs)
        nonzero = magnitudes > 1e-12
        sums = [magnitudes.sum(axis=0), (magnitudes * nonzero).sum(axis=0), nonzero.sum(axis=0),
                logs.min(axis=0), logs.max(axis=0)]
        if self.sums is not None:
            sums = [a + b for a, b in zip(self.sums[:3], sums[:3])] + [
                np.minimum(self.sums[3], sums[3]), np.maximum(self.sums[4], sums[4])]
        self.sums = sums
        self.lines += len(buffer)


def measure_columns(table_path: Path) -> ColumnStats:
    """One pass over the table (validated by the reader): the magnitudes of every column."""
    sums, buffer = _Sums(), []
    with np.errstate(divide="ignore"), PhraseTableReader(table_path) as reader:
        for entry in reader:
            start, end = scores_span(entry)
            buffer.append(entry.raw[start:end])
            if len(buffer) == _CHUNK_LINES:
                sums.add(buffer)
                buffer = []
        if buffer:
            sums.add(buffer)
    total, nonzero_total, nonzero, low, high = sums.sums
    nonzero = [int(n) for n in nonzero]
    return ColumnStats(
        sums.lines, [float(t) / sums.lines for t in total],
        [float(t) / n if n else 0.0 for t, n in zip(nonzero_total, nonzero)], nonzero,
        [float(v) for v in low], [float(v) for v in high])


def check_layout(stats: ColumnStats, layout: ColumnLayout, num_base: int, origin: str) -> None:
    """Model columns hold probabilities (ln v <= 0), the word penalty exp(count) (ln v >= 0):
    catches a layout that takes a model column for the penalty, or the reverse."""
    for offset, name in enumerate(layout.names):
        column = num_base + offset
        if layout.is_penalty(name) and stats.min_log[column] < -1e-6:
            raise MosesConfigError(
                f"{origin}: column {column + 1} ({name}) has values below 1 (ln down to "
                f"{stats.min_log[column]:.3g}), but the word penalty is exp(count) >= 1: is it a "
                "model column? Name the new columns with --new-columns (e.g. rnn-a,rnn-b)")
        if not layout.is_penalty(name) and stats.max_log[column] > 1e-6:
            raise MosesConfigError(
                f"{origin}: column {column + 1} ({name}) has values above 1 (ln up to "
                f"{stats.max_log[column]:.3g}), but a model column holds probabilities: is it the "
                "word penalty? Name the new columns with --new-columns (e.g. rnn,wp)")


def cached_column_stats(table_path: Path, cache_path: Path) -> ColumnStats:
    """measure_columns, kept in cache_path for as long as the table is unchanged."""
    status = table_path.stat()
    key = {"table": str(table_path.resolve()), "size": status.st_size, "mtime_ns": status.st_mtime_ns}
    if cache_path.is_file():
        try:
            saved = json.loads(cache_path.read_text())
            if saved.get("key") == key:
                return ColumnStats(**saved["stats"])
        except (ValueError, TypeError, KeyError):
            pass  # unreadable or from another version: measure again
    stats = measure_columns(table_path)
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(cache_path, (json.dumps({"key": key, "stats": asdict(stats)}, indent=1) + "\n").encode())
    return stats


def _significant(value: float) -> float:
    return float(f"{value:.3g}")


def scaled_weights(existing: Sequence[float], stats: ColumnStats, layout: ColumnLayout,
                   columns: Sequence[str], origin: str = "moses.ini") -> list[float]:
    """Starting weights of `columns` (names of the layout) by the module's rule."""
    num_base = len(existing)
    contributions = [abs(w) * m for w, m in zip(existing, stats.mean_abs_log[:num_base])]
    average = sum(contributions) / max(len(contributions), 1)
    if not average > 0 or not math.isfinite(average):
        raise MosesConfigError(
            f"{origin}: cannot scale the new columns' starting weights: the phrase table's weights "
            f"{list(existing)} give its columns no weight; pass --initial-weight")
    weights = []
    for name in columns:
        column = num_base + layout.names.index(name)
        if layout.is_penalty(name):
            nonzero = stats.nonzero_lines[column]
            magnitude = stats.mean_abs_log_nonzero[column] if nonzero else 1.0
            weights.append(-_significant(average / magnitude))
            continue
        magnitude = stats.mean_abs_log[column]
        if magnitude <= 0:
            raise MosesConfigError(
                f"column {column + 1} ({name}) is 1 on every line, so log 0 and no information; "
                "is it the rescored table? (or pass --initial-weight)")
        weights.append(_significant(average / magnitude))
    return weights


def new_column_weights(existing: Sequence[float], layout: ColumnLayout, columns: Sequence[str],
                       stats: Optional[ColumnStats], override: Optional[float],
                       origin: str = "moses.ini") -> list[float]:
    """`--initial-weight` for every column when given, else the scale-aware rule."""
    if not columns:
        return []
    if override is not None:
        return [override] * len(columns)
    if stats is None:
        raise ValueError("stats are needed unless an initial weight is given")
    return scaled_weights(existing, stats, layout, columns, origin)


def table_starting_weights(ini: MosesIni, table: Feature, table_path: Path, num_found: int,
                           names: Optional[Sequence[str]], override: Optional[float]
                           ) -> tuple[ColumnLayout, list[float]]:
    """The new columns of `table_path` (`rescore moses add-feature`) and their starting weights."""
    num_base = table.int_arg("num-features", ini.origin)
    layout = infer_layout(num_base, num_found, names, str(table_path))
    stats = None if override is not None else measure_columns(table_path)
    if stats is not None:
        check_layout(stats, layout, num_base, str(table_path))
    return layout, new_column_weights(ini.weights(table.name), layout, layout.names, stats,
                                      override, ini.origin)


def warm_start_ini(system_ini: MosesIni, tuned: MosesIni, table_name: str,
                   new_weights: Sequence[float], added: Optional[Mapping[str, Sequence[float]]] = None) -> MosesIni:
    """The system's ini with the tuned system's weights, and `new_weights` for its new columns;
    `added`: the weights of features the tuned system lacks (a decoding row's NeuralLM)."""
    ini = MosesIni(system_ini.text(), origin=system_ini.origin)
    tuned_weights = tuned.all_weights()
    for name, values in ini.all_weights().items():
        if added and name in added:
            ini.set_weights(name, added[name])
            continue
        if name not in tuned_weights:
            raise MosesConfigError(f"{tuned.origin}: expected a line '{name}= ...' in [weight] "
                                   "(the warm start copies every weight), found none")
        start = list(tuned_weights[name]) + (list(new_weights) if name == table_name else [])
        if len(start) != len(values):
            raise MosesConfigError(
                f"{tuned.origin}: expected {len(values) - (len(new_weights) if name == table_name else 0)}"
                f" weights for {name}, found {len(tuned_weights[name])}")
        ini.set_weights(name, start)
    return ini
