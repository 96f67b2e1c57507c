"""Tests for rescorer.io.table_reader: parsing, rejects, errors, and byte-exact round trips."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import re
import sys
from pathlib import Path

import pytest

from rescorer.errors import PhraseTableFormatError, RescorerError
from rescorer.io.atomic_output import AtomicOutput
from rescorer.io.table_reader import PhraseEntry, PhraseTableReader, append_scores, read_chunks
from tests.helpers import EXAMPLE_TABLE

REAL_LINE = (
    b"! let his enemies be scattered ||| ses ennemis se dispersent ||| 0.125 2.39606e-11 0.25 0.000444395"
    b" ||| 2-0 3-1 4-2 5-3 ||| 8 4 1 ||| |||"
)
GOOD = b"a b ||| x y ||| 0.5 0.25 ||| 0-0 1-1 ||| 2 2 1 ||| |||"


def write_table(path: Path, lines: list[bytes], gz: bool = False) -> Path:
    """Write lines (each given a b"\\n") as a plain or gzip table."""
    data = b"".join(line + b"\n" for line in lines)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def read_all(path: Path, reject_path: Path | None = None) -> list[PhraseEntry]:
    with PhraseTableReader(path, reject_path) as reader:
        return list(reader)


# ---------------------------------------------------------------- parsing good lines

# (case, line, src, tgt, num_scores, text of the line up to scores_end)
GOOD_LINES = [
    ("real Moses line", REAL_LINE, "! let his enemies be scattered", "ses ennemis se dispersent", 4,
     b"! let his enemies be scattered ||| ses ennemis se dispersent ||| 0.125 2.39606e-11 0.25 0.000444395"),
    ("no alignment field", b"a ||| b ||| 1 2 3", "a", "b", 3, b"a ||| b ||| 1 2 3"),
    ("trailing space, no alignment", b"a ||| b ||| 1 2 ", "a", "b", 2, b"a ||| b ||| 1 2"),
    ("trailing |||", b"a ||| b ||| 1 2 |||", "a", "b", 2, b"a ||| b ||| 1 2"),
    ("extra fields", b"a ||| b ||| 1 ||| 0-0 ||| 1 1 1 ||| k=v ||| more", "a", "b", 1, b"a ||| b ||| 1"),
    ("odd spacing", b"  a  b |||x|||  1e-3\t 2  |||0-0", "a  b", "x", 2, b"  a  b |||x|||  1e-3\t 2"),
    ("CRLF line keeps its \\r", b"a ||| b ||| 1 2\r", "a", "b", 2, b"a ||| b ||| 1 2"),
    ("CRLF line with more fields", b"a ||| b ||| 1 2 ||| 0-0 |||\r", "a", "b", 2, b"a ||| b ||| 1 2"),
    ("invalid UTF-8 in source", b"caf\xe9 ||| caf\xc3\xa9 ||| 0.5", "caf\udce9", "caf\u00e9", 1,
     b"caf\xe9 ||| caf\xc3\xa9 ||| 0.5"),
    ("negative and zero scores", b"a ||| b ||| -2.5 0 1E+2", "a", "b", 3, b"a ||| b ||| -2.5 0 1E+2"),
]


@pytest.mark.parametrize(
    "line, src, tgt, num_scores, head", [case[1:] for case in GOOD_LINES], ids=[case[0] for case in GOOD_LINES]
)
def test_parses_good_lines(tmp_path: Path, line: bytes, src: str, tgt: str, num_scores: int, head: bytes) -> None:
    entries = read_all(write_table(tmp_path / "table", [line]))
    assert entries == [PhraseEntry(1, line, src, tgt, num_scores, len(head))]
    assert line[: entries[0].scores_end] == head


# (case, line, new scores, expected line)
APPENDS = [
    ("real Moses line", REAL_LINE, ["0.3"], REAL_LINE.replace(b"0.000444395 |||", b"0.000444395 0.3 |||")),
    ("two scores", b"a ||| b ||| 1 2 ||| 0-0", ["3", "4"], b"a ||| b ||| 1 2 3 4 ||| 0-0"),
    ("no alignment field", b"a ||| b ||| 1 2", ["3"], b"a ||| b ||| 1 2 3"),
    ("trailing space kept after", b"a ||| b ||| 1 2  ", ["3"], b"a ||| b ||| 1 2 3  "),
    ("odd spacing kept", b"a|||b|||  1\t2   |||0-0", ["3"], b"a|||b|||  1\t2 3   |||0-0"),
    ("CRLF kept", b"a ||| b ||| 1 2\r", ["3"], b"a ||| b ||| 1 2 3\r"),
    ("invalid UTF-8 kept", b"\xff\xfe ||| \x80 ||| 1 ||| |||", ["2"], b"\xff\xfe ||| \x80 ||| 1 2 ||| |||"),
    ("nothing to add", b"a ||| b ||| 1", [], b"a ||| b ||| 1"),
]


@pytest.mark.parametrize(
    "line, new_scores, expected", [case[1:] for case in APPENDS], ids=[case[0] for case in APPENDS]
)
def test_append_scores(tmp_path: Path, line: bytes, new_scores: list[str], expected: bytes) -> None:
    [entry] = read_all(write_table(tmp_path / "table", [line]))
    assert append_scores(entry, new_scores) == expected


def test_gzip_is_detected_by_content_not_name(tmp_path: Path, gzip_backend: str) -> None:
    gz_named_txt = write_table(tmp_path / "table.txt", [GOOD], gz=True)
    plain_named_gz = write_table(tmp_path / "table.gz", [GOOD], gz=False)
    assert [entry.raw for entry in read_all(gz_named_txt)] == [GOOD]
    assert [entry.raw for entry in read_all(plain_named_gz)] == [GOOD]


def test_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "table"
    path.write_bytes(GOOD + b"\n" + b"c ||| d ||| 1 2")
    assert [entry.raw for entry in read_all(path)] == [GOOD, b"c ||| d ||| 1 2"]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_reads_stdin(monkeypatch: pytest.MonkeyPatch, gz: bool) -> None:
    data = GOOD + b"\n" + GOOD + b"\n"
    stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(gzip.compress(data) if gz else data)))
    monkeypatch.setattr(sys, "stdin", stdin)
    with PhraseTableReader("-") as reader:
        assert [entry.raw for entry in reader] == [GOOD, GOOD]
    assert reader.name == "<stdin>"


def test_counters_during_and_after_iteration(tmp_path: Path) -> None:
    path = write_table(tmp_path / "table", [GOOD, b"bad", GOOD])
    seen = []
    with PhraseTableReader(path, tmp_path / "rejects") as reader:
        for entry in reader:
            seen.append((entry.line_no, reader.lines_read, reader.lines_rejected, reader.num_scores))
    assert seen == [(1, 1, 0, 2), (3, 3, 1, 2)]
    assert (reader.lines_read, reader.lines_rejected, reader.num_scores) == (3, 1, 2)


def test_iterates_only_once(tmp_path: Path) -> None:
    with PhraseTableReader(write_table(tmp_path / "table", [GOOD])) as reader:
        list(reader)
        with pytest.raises(RescorerError, match="only once"):
            iter(reader)


def test_read_chunks(tmp_path: Path) -> None:
    lines = [b"s%d ||| t ||| 1" % i for i in range(7)]
    with PhraseTableReader(write_table(tmp_path / "table", lines)) as reader:
        chunks = [[entry.raw for entry in chunk] for chunk in read_chunks(reader, 3)]
    assert chunks == [lines[0:3], lines[3:6], lines[6:7]]


def test_read_chunks_refuses_zero(tmp_path: Path) -> None:
    with PhraseTableReader(write_table(tmp_path / "table", [GOOD])) as reader:
        with pytest.raises(ValueError, match="chunk_size"):
            next(read_chunks(reader, 0))


# ---------------------------------------------------------------- bad input

# (case, lines, line number of the error, words the message must contain)
BAD_TABLES = [
    ("one field", [GOOD, b"just some words"], 2, "expected at least 3 ' ||| ' fields, found 1"),
    ("two fields", [GOOD, b"a ||| b"], 2, "expected at least 3 ' ||| ' fields, found 2"),
    ("empty line", [GOOD, GOOD, b""], 3, "empty line"),
    ("blank line", [b"  \t"], 1, "empty line"),
    ("empty source", [b" ||| b ||| 1 2"], 1, "empty source phrase"),
    ("empty target", [GOOD, b"a |||   ||| 1 2"], 2, "empty target phrase"),
    ("empty scores field", [GOOD, b"a ||| b |||  ||| 0-0"], 2, "empty scores field (expected 2 scores, found none)"),
    ("empty scores, first line", [b"a ||| b |||"], 1, "empty scores field (expected at least one score"),
    ("non-numeric score", [GOOD, b"a ||| b ||| 0.5 x1e"], 2, "non-numeric score (expected a number, found 'x1e')"),
    ("comma decimal", [b"a ||| b ||| 0,5"], 1, "found '0,5'"),
    ("NaN score", [b"a ||| b ||| 0.5 nan"], 1, "non-finite score (expected a finite number, found 'nan')"),
    ("inf score", [b"a ||| b ||| inf 1"], 1, "found 'inf'"),
    ("too many scores", [GOOD, GOOD, b"a ||| b ||| 1 2 3"], 3, "wrong number of scores (expected 2"),
    ("too few scores", [GOOD, b"a ||| b ||| 1 ||| 0-0"], 2, "found 1)"),
]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize(
    "lines, line_no, words", [case[1:] for case in BAD_TABLES], ids=[case[0] for case in BAD_TABLES]
)
def test_bad_line_is_an_error(tmp_path: Path, gz: bool, lines: list[bytes], line_no: int, words: str) -> None:
    path = write_table(tmp_path / ("table.gz" if gz else "table"), lines + [GOOD], gz)
    with pytest.raises(PhraseTableFormatError) as caught:
        read_all(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line_no}: ")
    assert words in message
    assert "\n" not in message


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("lines", [case[1] for case in BAD_TABLES], ids=[case[0] for case in BAD_TABLES])
def test_bad_line_is_rejected(tmp_path: Path, gz: bool, lines: list[bytes]) -> None:
    good = [b"first ||| premier ||| 0.5 0.5"] + [line for line in lines if line in (GOOD,)]
    path = write_table(tmp_path / "table", [b"first ||| premier ||| 0.5 0.5"] + lines + [GOOD], gz)
    reject_path = tmp_path / "rejects"
    with PhraseTableReader(path, reject_path) as reader:
        raws = [entry.raw for entry in reader]
    bad = [line for line in lines if line != GOOD]
    assert raws == good + [GOOD]
    assert reject_path.read_bytes() == b"".join(line + b"\n" for line in bad)
    assert (reader.lines_read, reader.lines_rejected) == (len(raws) + len(bad), len(bad))


def test_rejects_are_verbatim_and_counts_add_up(tmp_path: Path) -> None:
    lines = [
        b"bad \xff line",
        GOOD,
        b"a ||| b ||| 1 2 3 |||",
        b"",
        b"c ||| d ||| 0.1 0.2\r",
        b"e |||  ||| 1 2\r",
        GOOD,
    ]
    reject_path = tmp_path / "rejects"
    entries = read_all(write_table(tmp_path / "table", lines), reject_path)
    assert [(entry.line_no, entry.raw) for entry in entries] == [(2, GOOD), (5, b"c ||| d ||| 0.1 0.2\r"), (7, GOOD)]
    assert reject_path.read_bytes() == b"bad \xff line\na ||| b ||| 1 2 3 |||\n\ne |||  ||| 1 2\r\n"


def test_num_scores_comes_from_first_good_line(tmp_path: Path) -> None:
    lines = [b"a ||| b ||| 1 2 3", b"a ||| b ||| x", b"c ||| d ||| 1 2 3", b"e ||| f ||| 1 2"]
    reject_path = tmp_path / "rejects"
    entries = read_all(write_table(tmp_path / "table", lines), reject_path)
    assert [entry.line_no for entry in entries] == [1, 3]
    assert reject_path.read_bytes() == b"a ||| b ||| x\ne ||| f ||| 1 2\n"


@pytest.mark.parametrize("with_rejects", [False, True], ids=["no-rejects", "rejects"])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_empty_table_is_an_error(tmp_path: Path, gz: bool, with_rejects: bool) -> None:
    path = write_table(tmp_path / "table.gz", [], gz)
    with pytest.raises(PhraseTableFormatError, match=f"^{path}: the phrase table is empty$"):
        read_all(path, tmp_path / "rejects" if with_rejects else None)


def test_table_with_only_bad_lines_is_an_error(tmp_path: Path) -> None:
    path = write_table(tmp_path / "table", [b"bad", b"worse"])
    with pytest.raises(PhraseTableFormatError, match=f"^{path}: no good line in the phrase table: all 2 lines are bad, and no output or reject file was written"):
        read_all(path, tmp_path / "rejects")


def synthetic_gzip(num_lines: int) -> bytes:
    """A gzip table that compresses poorly (hashes in it), so cutting bytes cuts many lines."""
    lines = [b"%s ||| t%d ||| 0.5 0.25" % (hashlib.md5(b"%d" % i).hexdigest().encode(), i) for i in range(num_lines)]
    return gzip.compress(b"".join(line + b"\n" for line in lines))


@pytest.mark.parametrize("with_rejects", [False, True], ids=["no-rejects", "rejects"])
@pytest.mark.parametrize("keep", [0.5, 0.999, 12], ids=["half", "all-but-trailer", "header-only"])
def test_truncated_gzip_is_an_error(tmp_path: Path, gzip_backend: str, keep: float, with_rejects: bool) -> None:
    data = synthetic_gzip(20_000)
    size = int(keep * len(data)) if keep < 1 else int(keep)
    path = tmp_path / "table.gz"
    path.write_bytes(data[:size])
    seen: list[int] = []
    with pytest.raises(PhraseTableFormatError) as caught:
        with PhraseTableReader(path, tmp_path / "rejects" if with_rejects else None) as reader:
            seen.extend(entry.line_no for entry in reader)
    assert str(caught.value) == (
        f"{path}: gzip stream is truncated after line {reader.lines_read} "
        "(expected more compressed data, found end of file)"
    )
    assert seen == list(range(1, reader.lines_read + 1))
    assert reader.lines_read < 20_000


def test_corrupt_gzip_is_an_error(tmp_path: Path, gzip_backend: str) -> None:
    data = bytearray(synthetic_gzip(1000))
    data[-8] ^= 0xFF  # the CRC-32 in the trailer
    path = tmp_path / "table.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(PhraseTableFormatError) as caught:
        with PhraseTableReader(path) as reader:
            list(reader)
    # Damage is found a block at a time: the message names the last line read before it.
    assert str(caught.value).startswith(f"{path}: gzip stream is corrupt after line {reader.lines_read} (")
    assert re.search("incorrect (data check|checksum)", str(caught.value), re.IGNORECASE)
    assert reader.lines_read < 1000


def test_missing_table_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "no-such-table.gz"
    with pytest.raises(RescorerError, match=f"^{path}: cannot open the phrase table \\(No such file"):
        PhraseTableReader(path)


def test_reject_file_that_is_the_input_is_refused(tmp_path: Path) -> None:
    path = write_table(tmp_path / "table", [GOOD])
    with pytest.raises(RescorerError, match="the reject file is the phrase table itself"):
        PhraseTableReader(path, tmp_path / "." / "table")
    assert path.read_bytes() == GOOD + b"\n"


# ---------------------------------------------------------------- round trips

def round_trip(src_lines: list[bytes], src_path: Path, out_path: Path, num_lines: int | None = None) -> None:
    """Read src_path, append one score per line, write out_path, read it back and check it byte for byte.

    Expected lines come from an independent split on b" ||| " (the real tables' separator).
    """
    with PhraseTableReader(src_path) as reader, AtomicOutput(out_path, input_path=src_path) as out:
        for entry in itertools.islice(reader, num_lines):
            out.write_line(append_scores(entry, ["%d" % entry.line_no]))
    assert out.lines_written == len(src_lines)
    assert out_path.read_bytes()[:2] == b"\x1f\x8b"

    expected = []
    for line_no, line in enumerate(src_lines, start=1):
        fields = line.split(b" ||| ")
        fields[2] = fields[2] + b" %d" % line_no
        expected.append(b" ||| ".join(fields))
    written = [entry.raw for entry in read_all(out_path)]
    assert len(written) == len(expected)
    assert hashlib.sha256(b"\n".join(written)).hexdigest() == hashlib.sha256(b"\n".join(expected)).hexdigest()
    assert written == expected


def test_round_trip_real_filtered_table(shared_data: Path, tmp_path: Path) -> None:
    src_path = shared_data / "tuning" / "filtered" / "phrase-table.0-0.1.1.gz"
    with gzip.open(src_path, "rb") as f:
        src_lines = f.read().splitlines()
    round_trip(src_lines, src_path, tmp_path / "out.gz")


def test_round_trip_real_full_table_head(shared_data: Path, tmp_path: Path) -> None:
    src_path = shared_data / "model" / "phrase-table.gz"
    num_lines = 200_000
    with gzip.open(src_path, "rb") as f:
        src_lines = [line.rstrip(b"\n") for line in itertools.islice(f, num_lines)]
    round_trip(src_lines, src_path, tmp_path / "out.gz", num_lines)


def test_round_trip_synthetic_odd_lines(tmp_path: Path, gzip_backend: str) -> None:
    lines = [REAL_LINE, b"caf\xe9 ||| \xc3\xa9t\xc3\xa9 ||| 0.5 1 1 1 ||| 0-0 ||| 1 1 1 ||| |||",
             b"a  b ||| c ||| 1  2 3 4 ||| 0-0 ||| extra ||| more ||| fields"]
    src_path = write_table(tmp_path / "in.gz", lines, gz=True)
    with PhraseTableReader(src_path) as reader, AtomicOutput(tmp_path / "out.gz") as out:
        for entry in reader:
            out.write_line(append_scores(entry, ["0.125"]))
    assert gzip.decompress((tmp_path / "out.gz").read_bytes()) == (
        REAL_LINE.replace(b"0.000444395 |||", b"0.000444395 0.125 |||") + b"\n"
        + b"caf\xe9 ||| \xc3\xa9t\xc3\xa9 ||| 0.5 1 1 1 0.125 ||| 0-0 ||| 1 1 1 ||| |||\n"
        + b"a  b ||| c ||| 1  2 3 4 0.125 ||| 0-0 ||| extra ||| more ||| fields\n"
    )


def test_bundled_example_table() -> None:
    path = EXAMPLE_TABLE
    with PhraseTableReader(path) as reader:
        entries = list(reader)
    assert (len(entries), reader.lines_rejected, reader.num_scores) == (4000, 0, 4)
    assert [entry.raw for entry in entries] == gzip.decompress(path.read_bytes()).splitlines()
