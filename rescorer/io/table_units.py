"""A phrase table cut into units of `unit_lines` lines, read by one rank.

Unit u holds lines u*unit_lines+1 ... (u+1)*unit_lines. A rank parses only the units it scores
and passes over the others by counting newlines (`UnitReader.skip_lines`), so every
rank decompresses the whole table but parses only its share; benchmarks/drivers/reader_sharding.py
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

__all__ = ["UnitChunk", "RawLines", "UnitReader", "TableUnits", "unit_owner", "parse_raw_lines"]


@dataclass
class RawLines:
    """A chunk's lines as the file holds them, for a host worker to parse (`parse_raw_lines`)."""

    data: bytes
    first_line: int  # the number of data's first line in the whole table
    num_scores: Optional[int]  # of the table's first good line, once it has been read
    first_good_line: Optional[int]


@dataclass
class UnitChunk:
    """Up to chunk_size lines of one unit: its good entries and its rejected lines, in order, or
    its `raw` lines when read unparsed. `last` marks the unit's final chunk (which may hold no
    line at all)."""

    unit: int
    entries: list[PhraseEntry]
    rejected: list[bytes] = field(default_factory=list)
    lines: int = 0  # lines read for this chunk, rejected ones included
    last: bool = False
    raw: Optional[RawLines] = None


def parse_raw_lines(raw: RawLines, name: str, keep_rejects: bool) -> tuple[list[PhraseEntry], list[bytes]]:
    """The entries and rejected lines of `raw`, as UnitReader.parse_lines finds them: a bad line
    is kept when `keep_rejects`, else it raises PhraseTableFormatError naming `name` and its line.
    The loop repeats parse_lines' on purpose (a call per line would slow it)."""
    lines = raw.data.split(b"\n")
    if lines[-1] == b"":  # after the last newline (a last line without one is a line)
        lines.pop()
    entries, rejected = [], []
    num_scores, first_good = raw.num_scores, raw.first_good_line
    for line_no, line in enumerate(lines, raw.first_line):
        expected = num_scores if first_good is not None and line_no >= first_good else None
        try:
            entry = parse_line(line, line_no, expected)
        except _BadLine as exc:
            if not keep_rejects:
                raise PhraseTableFormatError(f"{name}:{line_no}: {exc}") from None
            rejected.append(line)
            continue
        entries.append(entry)
    return entries, rejected


def unit_owner(unit: int, finished: Collection[int], world_size: int, rank_of_unfinished: int) -> int:
    """The rank that scores `unit`, given that `rank_of_unfinished` unfinished units come
    before it (see the module docstring); -1 for a finished unit."""
    if unit in finished:
        return -1
    return rank_of_unfinished % world_size


class UnitReader(PhraseTableReader):
    """A PhraseTableReader that can also parse a given number of lines, pass over lines without
    parsing them, or read them for a host worker to parse."""

    first_good_line: Optional[int] = None  # its number of scores is `num_scores`

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
                    self.num_scores, self.first_good_line = entry.num_scores, line_no
                entries.append(entry)
        return entries

    def skip_lines(self, limit: int) -> int:
        """Pass over up to `limit` lines without parsing them (another rank scores them) and
        return how many there were; only newlines are counted, a decompressed block at a time.
        Until the first good line is found, lines are parsed to learn its number of scores,
        which every later line must have, whichever rank reads it."""
        return self._pass_lines(limit, None)

    def read_lines(self, limit: int) -> tuple[bytes, int]:
        """Up to `limit` more lines as the file holds them (newlines included), unparsed, and how
        many there were: a host worker parses them (`parse_raw_lines`). Lines are found as
        `skip_lines` finds them, so the first good line's number of scores is learnt here."""
        kept: list[bytes] = []
        count = self._pass_lines(limit, kept)
        return b"".join(kept), count

    def _pass_lines(self, limit: int, kept: Optional[list]) -> int:
        """Go over up to `limit` lines, appending their bytes to `kept` unless it is None."""
        done = 0
        with self._read_errors():
            while self.num_scores is None and done < limit:
                line = self._lines.readline()
                if not line:
                    return done
                done += 1
                self.lines_read += 1
                if kept is not None:
                    kept.append(line)
                try:
                    self.num_scores = parse_line(line.rstrip(b"\n"), self.lines_read, None).num_scores
                    self.first_good_line = self.lines_read
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
                    passed = self._lines.read(len(block))
                    done, self.lines_read = done + newlines, self.lines_read + newlines
                    mid_line = block[-1:] != b"\n"
                else:
                    end = -1
                    for _ in range(wanted):
                        end = block.index(b"\n", end + 1)
                    passed = self._lines.read(end + 1)
                    done, self.lines_read = limit, self.lines_read + wanted
                if kept is not None:
                    kept.append(passed)
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

    def chunks(self, chunk_size: int, raw: bool = False) -> Iterator[UnitChunk]:
        """UnitChunks of this rank's units, parsed, or with `raw` as their `RawLines`; the table
        is read to its end."""
        with UnitReader(self.table_path) as reader:
            unit, unfinished = 0, 0
            while True:
                owner = unit_owner(unit, self.finished, self.world_size, unfinished)
                unfinished += owner >= 0
                if owner == self.rank:
                    count = yield from self._unit_chunks(reader, unit, chunk_size, raw)
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

    def _unit_chunks(self, reader: UnitReader, unit: int, chunk_size: int, raw: bool):
        """Yield one unit's chunks; return its number of lines (0: the table had ended)."""
        done, pending = 0, None
        while done < self.unit_lines:
            wanted = min(chunk_size, self.unit_lines - done)
            before = reader.lines_read
            if raw:
                data, lines = reader.read_lines(wanted)
                chunk = UnitChunk(unit, [], [], lines, raw=RawLines(data, before + 1, reader.num_scores,
                                                                    reader.first_good_line))
            else:
                rejected: list[bytes] = []
                entries = reader.parse_lines(wanted, rejected if self.keep_rejects else None)
                chunk = UnitChunk(unit, entries, rejected, reader.lines_read - before)
            lines = chunk.lines
            if lines == 0:
                break
            done += lines
            if pending is not None:
                yield pending
            pending = chunk
            if lines < wanted:  # the table ended
                break
        if pending is None:
            return 0
        pending.last = True
        self.owned.append(unit)
        yield pending
        return done
