"""A phrase table cut into units of `unit_lines` lines, read by one rank.

Unit u holds lines u*unit_lines+1 ... (u+1)*unit_lines. A rank parses only the units it scores
and passes over the others by counting newlines (`PhraseTableReader.skip_lines`), so every
rank decompresses the whole table but parses only its share; benchmarks/reader_sharding.py
measured that against a random-access gzip index (see README, "Large tables"). Every line keeps
its true number in the whole file, whichever rank reads it.

Which units a rank scores: the units not finished yet (by an earlier, interrupted run) are
dealt out in order, the i-th to rank i % world_size, so a resumed run is balanced whatever the
number of ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Iterator

from rescorer.phrase_table import PhraseEntry, PhraseTableReader

__all__ = ["UnitChunk", "TableUnits", "unit_owner"]


@dataclass
class UnitChunk:
    """Up to chunk_size lines of one unit: its good entries and its rejected lines, in order.
    `last` marks the unit's final chunk (which may hold no line at all)."""

    unit: int
    entries: list[PhraseEntry]
    rejected: list[bytes] = field(default_factory=list)
    lines: int = 0  # lines read for this chunk, rejected ones included
    last: bool = False


def unit_owner(unit: int, finished: Collection[int], world_size: int, rank_of_unfinished: int) -> int:
    """The rank that scores `unit`, given that `rank_of_unfinished` unfinished units come
    before it (see the module docstring); -1 for a finished unit."""
    if unit in finished:
        return -1
    return rank_of_unfinished % world_size


class TableUnits:
    """Reads a table for one rank: the chunks of the units it scores, in order.

    After iteration, `total_lines` is the number of lines in the whole table and `num_units`
    the number of units (the last one may be short). Bad lines are collected per unit when
    `keep_rejects`, else the first one in this rank's units raises PhraseTableFormatError.
    """

    def __init__(self, table_path: Path, unit_lines: int, rank: int = 0, world_size: int = 1,
                 finished: Collection[int] = (), keep_rejects: bool = False):
        if unit_lines < 1:
            raise ValueError(f"unit_lines must be at least 1, found {unit_lines}")
        self.table_path = Path(table_path)
        self.unit_lines, self.rank, self.world_size = unit_lines, rank, world_size
        self.finished = frozenset(finished)
        self.keep_rejects = keep_rejects
        self.total_lines = 0
        self.num_units = 0
        self.owned: list[int] = []  # the units this rank scored

    def chunks(self, chunk_size: int) -> Iterator[UnitChunk]:
        """UnitChunks of this rank's units; the table is read to its end."""
        with PhraseTableReader(self.table_path) as reader:
            unit, unfinished = 0, 0
            while True:
                owner = unit_owner(unit, self.finished, self.world_size, unfinished)
                unfinished += owner >= 0
                if owner == self.rank:
                    count = yield from self._unit_chunks(reader, unit, chunk_size)
                else:
                    count = reader.skip_lines(self.unit_lines)
                if count == 0:
                    break
                unit += 1
                if count < self.unit_lines:
                    break
            reader.finish_reading()
            self.total_lines = reader.lines_read
            self.num_units = unit

    def _unit_chunks(self, reader: PhraseTableReader, unit: int, chunk_size: int):
        """Yield one unit's chunks; return its number of lines (0: the table had ended)."""
        done, pending = 0, None
        while done < self.unit_lines:
            wanted = min(chunk_size, self.unit_lines - done)
            before = reader.lines_read
            rejected: list[bytes] = []
            entries = reader.parse_lines(wanted, rejected if self.keep_rejects else None)
            lines = reader.lines_read - before
            if lines == 0:
                break
            done += lines
            if pending is not None:
                yield pending
            pending = UnitChunk(unit, entries, rejected, lines)
            if lines < wanted:  # the table ended
                break
        if pending is None:
            return 0
        pending.last = True
        self.owned.append(unit)
        yield pending
        return done
