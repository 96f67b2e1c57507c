"""Phrase-table columns as n-best features: a column's value for a hypothesis is the sum, over
the phrase pairs the decoder used, of what Moses would add to its score for each pair.

Moses takes the log of every phrase-table score and floors it at -100 (FloorScore), so a column
written as exp(log p) (the RNN column, the word penalty written as exp(count)) gives back log p
or the count. A word the decoder passed through untranslated (an unknown word: a one-word
source copied as itself) is in no table and adds nothing, as in the decoder; any other pair
missing from the column's table is refused, naming the n-best line that used it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from rescorer.io.atomic_output import AtomicOutput
from rescorer.io.table_reader import PhraseTableReader

from ..errors import NbestFormatError
from ..nbest.nbest_file import NbestList
from ..nbest.segmentation import phrase_pairs

__all__ = ["LOG_FLOOR", "PhrasePairs", "phrase_pairs_of", "table_entries", "read_table_columns",
           "write_pair_table", "column_sums", "moses_log"]

LOG_FLOOR = -100.0  # Moses' FloorScore
Pair = tuple[str, str]


@dataclass
class PhrasePairs:
    """The distinct phrase pairs of one n-best list and which hypothesis used which."""

    pairs: list  # distinct (source phrase, target phrase), in order of first use
    pair_ids: np.ndarray  # (uses,) index into `pairs` of each use
    rows: np.ndarray  # (uses,) the hypothesis (row of the list) of each use
    num_rows: int

    def sums(self, values: np.ndarray) -> np.ndarray:
        """(hypotheses,) the sum of `values` (one per distinct pair) over each hypothesis's pairs."""
        return np.bincount(self.rows, weights=values[self.pair_ids], minlength=self.num_rows)

    def first_row(self, pair_index: int) -> int:
        return int(self.rows[np.flatnonzero(self.pair_ids == pair_index)[0]])


def phrase_pairs_of(nbest: NbestList) -> PhrasePairs:
    index: dict[Pair, int] = {}
    pair_ids, rows = [], []
    sentence_of = nbest.sentence_of_rows()
    for row, (hypothesis, spans) in enumerate(zip(nbest.hypotheses, nbest.segmentations)):
        for pair in phrase_pairs(nbest.sources[sentence_of[row]], hypothesis, spans):
            pair_ids.append(index.setdefault(pair, len(index)))
            rows.append(row)
    return PhrasePairs(list(index), np.asarray(pair_ids, dtype=np.int64), np.asarray(rows, dtype=np.int64),
                       len(nbest.hypotheses))


def is_passed_through(pair: Pair) -> bool:
    """An unknown word as the decoder writes it: one source word, copied."""
    source, target = pair
    return source == target and " " not in source


def table_entries(table_path: Path):
    """(source, target, scores, entry) of each line, read and checked as every table of the
    project is (PhraseTableReader: one line naming file and line for a bad one); the phrases with
    their spaces as the n-best pairs are rebuilt (single spaces)."""
    with PhraseTableReader(table_path) as reader:
        for entry in reader:
            scores = entry.raw[:entry.scores_end].rsplit(b"|||", 1)[1]
            yield " ".join(entry.src.split()), " ".join(entry.tgt.split()), scores, entry


def read_table_columns(table_path: Path, wanted: set) -> tuple[int, dict]:
    """(scores per line, {pair: scores as written}) for the wanted pairs the table holds."""
    found: dict[Pair, tuple] = {}
    num_scores = 0
    for source, target, scores, entry in table_entries(table_path):
        num_scores = entry.num_scores
        if (source, target) in wanted:
            found.setdefault((source, target), tuple(float(v) for v in scores.split()))
    return num_scores, found


def write_pair_table(table_path: Path, wanted: set, out_path: Path, force: bool = False) -> int:
    """Write the table's lines of the wanted pairs, every byte kept, to `out_path` (whole or
    not at all), so that a model can score only them (`rescore score`). Returns lines written."""
    written = 0
    with AtomicOutput(out_path, force=force, input_path=table_path) as out:
        for source, target, _, entry in table_entries(table_path):
            if (source, target) in wanted:
                out.write(entry.raw + b"\n")
                written += 1
    return written


def moses_log(value: float) -> float:
    """What the decoder adds for a score written as `value`: its log, floored at -100."""
    return max(math.log(value), LOG_FLOOR) if value > 0 else LOG_FLOOR


def column_sums(nbest: NbestList, pairs: PhrasePairs, value_of: Callable[[Pair], float | None],
                column_name: str, table_name: str) -> np.ndarray:
    """(hypotheses,) the column summed over each hypothesis's pairs; `value_of` gives a pair's
    log-domain value, or None when the column's table does not hold it."""
    values = np.zeros(len(pairs.pairs))
    for index, pair in enumerate(pairs.pairs):
        value = value_of(pair)
        if value is None:
            if is_passed_through(pair):
                continue
            line = nbest.line_numbers[pairs.first_row(index)]
            raise NbestFormatError(f"{nbest.path}:{line}: phrase pair {pair[0]!r} ||| {pair[1]!r} is not in "
                                   f"{table_name}, which column {column_name} comes from")
        values[index] = value
    return pairs.sums(values)


def table_column(found: Mapping[Pair, tuple], index: int, per_word: bool = False) -> Callable[[Pair], float | None]:
    """A pair's value in score column `index` (0-based) as the decoder reads it; per word:
    divided by the target phrase's word count, as `rescore score --per-word` writes it."""
    def value_of(pair: Pair):
        scores = found.get(pair)
        if scores is None:
            return None
        value = moses_log(scores[index])
        return value / len(pair[1].split()) if per_word else value
    return value_of
