"""A phrase table cut into units of `unit_lines` lines, read by one rank.

Unit u holds lines u*unit_lines+1 ... (u+1)*unit_lines. A rank parses only the units it scores
and passes over the others by counting newlines (`UnitReader.skip_lines`), so every
rank decompresses the whole table but parses only its share; benchmarks/reader_sharding.py
measured that against a random-access gzip index (see README, "Large tables"). Every line keeps
its true number in the whole file, whichever rank reads it.

Which units a rank scores: the units not finished yet (by an earlier, interrupted run) are
dealt out in order, the i-th to rank i % world_size, so a resumed run is balanced whatever the
number of ranks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Iterator, Optional

from rescorer.errors import PhraseTableFormatError
from rescorer.io.gzip_io import BUFFER_SIZE
from rescorer.io.table_reader import PhraseEntry, PhraseTableReader, _BadLine, parse_line

__all__ = ["UnitChunk", "UnitReader", "TableUnits", "unit_owner"]


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


class UnitReader(PhraseTableReader):
    """A PhraseTableReader that can also parse a given number of lines and pass over lines
    without parsing them."""

    def parse_lines(self, limit: int, rejected: Optional[list] = None) -> list[PhraseEntry]:
        """The entries of up to `limit` more lines; bad lines are appended to `rejected`, or
        raise PhraseTableFormatError without it. Fewer than `limit` lines means the end.
        The loop repeats PhraseTableReader._entries' on purpose: a call per line would slow
        the reader's hot loop."""
        entries = []
        name, line_no = self.name, self.lines_read
        with self._read_errors():
            for line in itertools.islice(self._lines, limit):
                line_no += 1
                self.lines_read = line_no
                raw = line[:-1] if line[-1:] == b"\n" else line
                try:
                    entry = parse_line(raw, line_no, self.num_scores)
                except _BadLine as exc:
                    if rejected is None:
                        raise PhraseTableFormatError(f"{name}:{line_no}: {exc}") from None
                    rejected.append(raw)
                    self.lines_rejected += 1
                    continue
                if self.num_scores is None:
                    self.num_scores = entry.num_scores
                entries.append(entry)
        return entries

    def skip_lines(self, limit: int) -> int:
        """Pass over up to `limit` lines without parsing them (another rank scores them) and
        return how many there were; only newlines are counted, a decompressed block at a time.
        Until the first good line is found, lines are parsed to learn its number of scores,
        which every later line must have, whichever rank reads it."""
        done = 0
        with self._read_errors():
            while self.num_scores is None and done < limit:
                line = self._lines.readline()
                if not line:
                    return done
                done += 1
                self.lines_read += 1
                try:
                    self.num_scores = parse_line(line.rstrip(b"\n"), self.lines_read, None).num_scores
                except _BadLine:
                    pass
            mid_line = False  # the bytes passed over end inside a line
            while done < limit:
                block = self._lines.peek(BUFFER_SIZE)
                if not block:
                    if mid_line:  # a last line without its newline
                        done, self.lines_read = done + 1, self.lines_read + 1
                    break
                wanted = limit - done
                newlines = block.count(b"\n")
                if newlines < wanted or (newlines == wanted and block[-1:] == b"\n"):
                    self._lines.read(len(block))
                    done, self.lines_read = done + newlines, self.lines_read + newlines
                    mid_line = block[-1:] != b"\n"
                    continue
                end = -1
                for _ in range(wanted):
                    end = block.index(b"\n", end + 1)
                self._lines.read(end + 1)
                done, self.lines_read = limit, self.lines_read + wanted
        return done

    def finish_reading(self) -> None:
        """After the last line: warn about trailing garbage, once the whole table was read."""
        if self._decompressed is not None:
            self._decompressed.warn_trailing_garbage(self.lines_read)


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
        with UnitReader(self.table_path) as reader:
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

    def _unit_chunks(self, reader: UnitReader, unit: int, chunk_size: int):
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
