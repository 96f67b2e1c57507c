"""Streaming reader for Moses phrase tables, and the one edit we make to a line: appending scores.

A line is `src ||| tgt ||| scores [||| alignment [||| counts [||| ...]]]`. Lines are handled as
bytes, so bytes that are not UTF-8 survive untouched; memory use does not grow with the table.

Choices a caller must know:
- Fields are split on `|||` and trimmed, as Moses itself does, so odd spacing is accepted and
  kept as it was.
- `PhraseEntry.raw` is the line without its b"\\n"; a b"\\r" before it (a CRLF file) stays in
  `raw`, in the last field, so writing `raw + b"\\n"` gives back the original bytes.
- A line that is empty or only whitespace is a bad line ("empty line"): rejected or an error.
- A last line without a final newline is read normally; written back, it gains one.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import sys
from pathlib import Path
from typing import BinaryIO, Iterator, NamedTuple, Optional, Protocol, Sequence, Union

from rescorer.counts import counted
from rescorer.errors import PhraseTableFormatError, RescorerError
from rescorer.io.compression import CompressedStreamError, decompressing_reader
from rescorer.io.file_names import same_file
from rescorer.io.gzip_io import BUFFER_SIZE
from rescorer.io.utf8_bytes import first_non_utf8

__all__ = ["PhraseEntry", "PhraseTableReader", "RejectSink", "SKIP_BAD_LINES", "read_chunks", "append_scores",
           "insert_scores", "STDIN_NAME"]

STDIN_NAME = "<stdin>"
_SEP = b"|||"


class PhraseEntry(NamedTuple):
    """One good phrase-table line: the pair to score, and where new scores go in its bytes.

    A named tuple, not a frozen dataclass: a table yields millions, and building one costs a
    third as much."""

    line_no: int  # 1-based, counting every line read, rejected ones included
    raw: bytes  # the line as read, without its b"\n" (a b"\r" stays)
    src: str  # source phrase, UTF-8 with errors="surrogateescape", stripped
    tgt: str  # target phrase, likewise
    num_scores: int
    scores_end: int  # offset in raw just after the last score token: new scores go here


class RejectSink(Protocol):
    """Where bad lines go: an AtomicOutput, or anything with write_line(bytes)."""

    def write_line(self, line: bytes) -> None: ...


class _SkipBadLines:
    """Counts bad lines and keeps none: a pass over a table whose rejects another pass writes."""

    def write_line(self, line: bytes) -> None:
        pass


SKIP_BAD_LINES = _SkipBadLines()


class _BadLine(Exception):
    """A line that cannot be parsed; the reader adds the file name and line number."""


def _describe(token: bytes) -> str:
    return "'" + token.decode("utf-8", "backslashreplace") + "'"


def _check_numbers(tokens: list[bytes]) -> None:
    """Raise _BadLine on the first token that is not a finite number (Moses takes log of each)."""
    try:
        total = sum(map(float, tokens))  # one C-level pass; the slow search below runs only on failure
        if math.isfinite(total):
            return
    except ValueError:
        pass
    for token in tokens:
        try:
            value = float(token)
        except ValueError:
            raise _BadLine(f"non-numeric score (expected a number, found {_describe(token)})") from None
        if not math.isfinite(value):
            raise _BadLine(f"non-finite score (expected a finite number, found {_describe(token)})")
    # All finite and the sum merely overflowed: fine.


def parse_line(raw: bytes, line_no: int, expected_num_scores: int | None) -> PhraseEntry:
    """Parse one line (without its newline); raise _BadLine saying what is wrong."""
    end1 = raw.find(_SEP)
    end2 = raw.find(_SEP, end1 + 3) if end1 >= 0 else -1
    if end2 < 0:
        if not raw.strip():
            raise _BadLine("empty line (expected at least 3 ' ||| ' fields, found none)")
        raise _BadLine(f"too few fields (expected at least 3 ' ||| ' fields, found {raw.count(_SEP) + 1})")
    src = raw[:end1].strip()
    if not src:
        raise _BadLine("empty source phrase (expected words before the first '|||', found none)")
    tgt = raw[end1 + 3 : end2].strip()
    if not tgt:
        raise _BadLine("empty target phrase (expected words between the first and second '|||', found none)")
    scores_start = end2 + 3
    end3 = raw.find(_SEP, scores_start)
    field = raw[scores_start:end3] if end3 >= 0 else raw[scores_start:]
    tokens = field.split()
    if not tokens:
        expected = counted(expected_num_scores, "score") if expected_num_scores else "at least one score"
        raise _BadLine(f"empty scores field (expected {expected}, found none)")
    if expected_num_scores is not None and len(tokens) != expected_num_scores:
        raise _BadLine(
            f"wrong number of scores (expected {expected_num_scores} like the first good line, found {len(tokens)})"
        )
    _check_numbers(tokens)
    return PhraseEntry(
        line_no,
        raw,
        src.decode("utf-8", "surrogateescape"),
        tgt.decode("utf-8", "surrogateescape"),
        len(tokens),
        scores_start + len(field.rstrip()),
    )


def _check_utf8(raw: bytes) -> None:
    where = first_non_utf8(raw)
    if where is not None:
        raise _BadLine(f"not UTF-8 ({where} of the line): subword models segment UTF-8 text")


class PhraseTableReader:
    """Iterate PhraseEntry over a plain or compressed table (gzip, bzip2, xz, zstd: told by magic
    bytes, not name); '-' is stdin.

    `reject` says what happens to unparseable lines: None (the default) raises
    PhraseTableFormatError at the first one; a RejectSink gets each line verbatim and reading
    goes on (SKIP_BAD_LINES only counts them); a path is written as an AtomicOutput that appears
    only on a clean exit of the reader's `with` and only if a line was rejected. A truncated or
    corrupt compressed stream, an empty table and a table with no good line are errors either
    way; damage is found a decompressed block (1 MiB) at a time, and its error names the last
    line read before it. Lines read before a damage is found have already been yielded: write
    through AtomicOutput and let the error propagate, so that no table made from them is kept.
    Counters are readable during and after iteration. The table can be iterated once. With
    `utf8_only` (a subword model's table: its models segment UTF-8 text) a line that is not UTF-8
    is a bad line too.
    """

    def __init__(self, path: Path | str, reject_path: Union[Path, str, RejectSink, None] = None,
                 utf8_only: bool = False):
        self.name = STDIN_NAME if str(path) == "-" else str(path)
        self.utf8_only = utf8_only
        self.lines_read = 0
        self.lines_rejected = 0
        self.num_scores: int | None = None
        self._started = False
        self._file: BinaryIO | None = None
        self._decompressed = None
        self._owned_reject = None
        self._close_file = str(path) != "-"  # never close stdin itself
        if isinstance(reject_path, (str, Path)):
            from rescorer.io.atomic_output import AtomicOutput

            self.reject_path: Optional[Path] = Path(reject_path)
            if str(path) != "-" and same_file(path, self.reject_path):
                raise RescorerError(f"{self.name}: the reject file is the phrase table itself; refusing to write it")
            self._owned_reject = AtomicOutput(self.reject_path, only_if_written=True)
            self._reject: Optional[RejectSink] = self._owned_reject
        else:
            self.reject_path = getattr(reject_path, "path", None)
            self._reject = reject_path
        if str(path) == "-":
            self._file = sys.stdin.buffer
        else:
            try:
                self._file = open(path, "rb", buffering=BUFFER_SIZE)
            except OSError as exc:
                raise RescorerError(f"{self.name}: cannot open the phrase table ({exc.strerror})") from None
        self._decompressed = decompressing_reader(self._file, self.name)
        self._lines: BinaryIO = self._decompressed or self._file
        if self._owned_reject is not None:
            self._owned_reject.open()

    def __iter__(self) -> Iterator[PhraseEntry]:
        if self._started:
            raise RescorerError(f"{self.name}: a PhraseTableReader can be iterated only once")
        self._started = True
        return self._entries()

    def _entries(self) -> Iterator[PhraseEntry]:
        name = self.name
        reject = self._reject
        line_no = 0
        with self._read_errors():
            for line in self._lines:
                line_no += 1
                self.lines_read = line_no
                raw = line[:-1] if line[-1:] == b"\n" else line
                try:
                    entry = parse_line(raw, line_no, self.num_scores)
                    if self.utf8_only:
                        _check_utf8(raw)
                except _BadLine as exc:
                    if reject is None:
                        raise PhraseTableFormatError(f"{name}:{line_no}: {exc}") from None
                    reject.write_line(raw)
                    self.lines_rejected += 1
                    continue
                if self.num_scores is None:
                    self.num_scores = entry.num_scores
                yield entry
        if self._decompressed is not None:
            self._decompressed.warn_trailing_garbage(line_no)
        if line_no == 0:
            raise PhraseTableFormatError(f"{name}: the phrase table is empty")
        if self.num_scores is None:
            raise PhraseTableFormatError(no_good_line(name, line_no))

    def close(self, failed: bool = True) -> None:
        """Close the input (never stdin itself); a reject file of its own is kept only if not failed."""
        if self._decompressed is not None:
            self._decompressed.close()  # does not close the file under it
        if self._file is not None and self._close_file:
            self._file.close()
        if self._owned_reject is not None:
            owned, self._owned_reject = self._owned_reject, None
            if failed:
                owned.discard()
            else:
                owned.finish()
                owned.commit()

    @contextlib.contextmanager
    def _read_errors(self) -> Iterator[None]:
        """Damage or a read error while reading, as one line naming the last line read."""
        try:
            yield
        except CompressedStreamError as exc:
            raise PhraseTableFormatError(f"{self.name}: {exc.kind} stream is {exc.reason.split(' (')[0]} "
                                         f"after line {self.lines_read}{_detail(exc.reason)}") from None
        except OSError as exc:
            raise RescorerError(f"{self.name}: cannot read the phrase table after line "
                                f"{self.lines_read} ({exc.strerror or exc})") from None

    def __enter__(self) -> PhraseTableReader:
        return self

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        self.close(failed=exc_type is not None)


def no_good_line(name: str, lines: int) -> str:
    """Every line was rejected: the run fails, and so writes neither output nor reject file."""
    all_bad = "its one line is" if lines == 1 else f"all {lines} lines are"
    return (f"{name}: no good line in the phrase table: {all_bad} bad, and no output or "
            f"reject file was written (without --reject the first bad line is named)")


def _detail(reason: str) -> str:
    """' (incorrect data check)' from 'corrupt (incorrect data check)'."""
    head, sep, rest = reason.partition(" (")
    return f" ({rest}" if sep else ""


def read_chunks(reader: PhraseTableReader, chunk_size: int) -> Iterator[list[PhraseEntry]]:
    """Group entries into lists of chunk_size (the last may be shorter), for batched scoring."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, found {chunk_size}")
    entries = iter(reader)
    while chunk := list(itertools.islice(entries, chunk_size)):
        yield chunk


# c(pair) weighs a pair in the loss, kept as float32: a batch's weights must add up to a finite
# number (1e39 became inf, and the loss nan: "training diverged"). Counts of a corpus's phrase
# pairs are far below this bound.
MAX_PAIR_COUNT = 1e30


def pair_count(entry: PhraseEntry, name: str, lowest: float = 0.0, lowest_reason: str = "") -> float:
    """c(pair), the third number of the counts field (`src ||| tgt ||| scores ||| alignment |||
    c(target) c(source) c(pair)`, as Moses' training writes it); a line without it, or whose count
    is not a finite number above `lowest` (0: positive; `lowest_reason` says why a higher bound)
    and at most MAX_PAIR_COUNT, is refused, named."""
    fields = entry.raw.split(_SEP)
    counts = fields[4].split() if len(fields) > 4 else []
    try:
        count = float(counts[2])
    except (IndexError, ValueError):
        found = fields[4].strip().decode("utf-8", "replace") if len(fields) > 4 else "no counts field"
        raise PhraseTableFormatError(f"{name}:{entry.line_no}: expected the counts field c(target) c(source) "
                                     f"c(pair) after the alignment (for weighting pairs by their counts), "
                                     f"found {found!r}") from None
    where = f"{name}:{entry.line_no}: pair count {counts[2].decode('utf-8', 'replace')!r}"
    if not math.isfinite(count):
        raise PhraseTableFormatError(f"{where} is not a finite number")
    if count > MAX_PAIR_COUNT:
        raise PhraseTableFormatError(f"{where} is out of range (a count that weighs a pair is at most "
                                     f"{MAX_PAIR_COUNT:g})")
    if not count > lowest:
        raise PhraseTableFormatError(f"{where} is not positive" if lowest == 0 else
                                     f"{where} is not above {lowest:.4g}{lowest_reason}")
    return count


def append_scores(entry: PhraseEntry, new_scores: Sequence[str]) -> bytes:
    """The line with new score tokens inserted after the last existing score, every other byte unchanged."""
    return insert_scores(entry.raw, entry.scores_end, new_scores)


def insert_scores(raw: bytes, scores_end: int, new_scores: Sequence[str]) -> bytes:
    """`raw` (a line without its newline) with new score tokens inserted at `scores_end`, just
    after its last score (PhraseEntry.scores_end), every other byte unchanged."""
    if not new_scores:
        return raw
    return b"".join((raw[:scores_end], b" ", " ".join(new_scores).encode("ascii"), raw[scores_end:]))
