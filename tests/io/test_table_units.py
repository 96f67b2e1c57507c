"""A table cut into units for several ranks: every line read once, by its owner, with its true
line number; the others only counted."""

import gzip

import pytest

from rescorer.errors import PhraseTableFormatError
from rescorer.io.table_reader import PhraseTableReader
from rescorer.io.table_units import TableUnits, parse_raw_lines


@pytest.fixture(scope="module")
def line_numbers(example_table):
    with PhraseTableReader(example_table) as reader:
        return [entry.line_no for entry in reader]


def read_as_ranks(path, unit_lines, world_size, finished=(), chunk_size=333):
    """(line numbers each rank parsed, units each rank scored, total lines each rank counted)."""
    lines, owned, totals = [], [], []
    for rank in range(world_size):
        units = TableUnits(path, unit_lines, rank, world_size, finished)
        lines.append([entry.line_no for chunk in units.chunks(chunk_size) for entry in chunk.entries])
        owned.append(units.owned)
        totals.append((units.total_lines, units.num_units))
    return lines, owned, totals


@pytest.mark.parametrize("unit_lines, world_size, finished, owned", [
    (1000, 1, (), [[0, 1, 2, 3]]),
    (1000, 2, (), [[0, 2], [1, 3]]),
    (1000, 3, (), [[0, 3], [1], [2]]),
    (4000, 2, (), [[0], []]),
    (3999, 2, (), [[0], [1]]),
    (7, 2, (), [list(range(0, 572, 2)), list(range(1, 572, 2))]),
    # resumed: the unfinished units are dealt out in order, whatever the number of ranks
    (500, 2, (0, 1, 4), [[2, 5, 7], [3, 6]]),
    (500, 3, (2,), [[0, 4, 7], [1, 5], [3, 6]]),
])
def test_every_line_is_read_once_by_its_owner(example_table, line_numbers, unit_lines, world_size,
                                              finished, owned):
    lines, got_owned, totals = read_as_ranks(example_table, unit_lines, world_size, finished)
    assert got_owned == owned
    assert set(totals) == {(4000, -(-4000 // unit_lines))}
    expected = [n for n in line_numbers if (n - 1) // unit_lines not in finished]
    assert sorted(n for rank_lines in lines for n in rank_lines) == expected
    for rank_lines, units in zip(lines, owned):
        assert {(n - 1) // unit_lines for n in rank_lines} == set(units)


def test_chunks_never_cross_units_and_mark_the_last(example_table):
    chunks = list(TableUnits(example_table, 1000, 0, 1).chunks(300))
    assert [(chunk.unit, chunk.lines, chunk.last) for chunk in chunks[:4]] == [
        (0, 300, False), (0, 300, False), (0, 300, False), (0, 100, True)]
    assert len(chunks) == 16


def test_last_line_without_newline_and_a_table_ending_on_a_unit(tmp_path):
    lines = [b"a%d ||| b ||| 0.5 0.5" % i for i in range(10)]
    for name, data in [("open.txt", b"\n".join(lines)), ("closed.gz", gzip.compress(b"\n".join(lines) + b"\n"))]:
        (tmp_path / name).write_bytes(data)
        for unit_lines in (3, 5, 10, 20):
            got, _, totals = read_as_ranks(tmp_path / name, unit_lines, 2, chunk_size=2)
            assert sorted(got[0] + got[1]) == list(range(1, 11)), (name, unit_lines)
            assert totals[0] == totals[1] == (10, -(-10 // unit_lines))


def test_a_rank_that_skips_the_first_unit_still_checks_the_first_lines_number_of_scores(tmp_path):
    table = tmp_path / "t.txt"
    table.write_bytes(b"bad\na ||| b ||| 0.5 0.5\nc ||| d ||| 0.5 0.5\ne ||| f ||| 0.5\n")
    units = TableUnits(table, 2, rank=1, world_size=2)
    with pytest.raises(PhraseTableFormatError, match=r"t.txt:4: wrong number of scores \(expected 2 like"):
        list(units.chunks(10))
    rejecting = TableUnits(table, 2, rank=0, world_size=2, keep_rejects=True)
    chunks = list(rejecting.chunks(10))
    assert [entry.line_no for entry in chunks[0].entries] == [2] and chunks[0].rejected == [b"bad"]


def test_damage_is_reported_after_the_right_line_by_a_rank_that_only_counts(tmp_path, example_table):
    data = gzip.compress(gzip.decompress(example_table.read_bytes()))
    (tmp_path / "cut.gz").write_bytes(data[: len(data) * 3 // 4])
    with pytest.raises(PhraseTableFormatError, match=r"cut.gz: gzip stream is truncated after line \d+"):
        list(TableUnits(tmp_path / "cut.gz", 500, rank=1, world_size=2).chunks(100))


def raw_chunks_parsed(path, unit_lines, rank, world_size, keep_rejects, chunk_size):
    """The chunks read unparsed, then parsed as a host worker parses them, as plain tuples."""
    units = TableUnits(path, unit_lines, rank, world_size, keep_rejects=keep_rejects)
    parsed = []
    for chunk in units.chunks(chunk_size, raw=True):
        entries, rejected = parse_raw_lines(chunk.raw, str(path), keep_rejects)
        parsed.append((chunk.unit, chunk.lines, chunk.last, entries, rejected))
    return parsed, (units.total_lines, units.num_units, units.owned)


BAD_FIRST = b"bad\n\nx ||| y ||| 0.5 z\n"  # bad lines before the first good one, whose 2 scores set the count
TABLES = [
    ("the example table", None),
    ("bad lines first, one later", BAD_FIRST + b"a ||| b ||| 0.5 0.5\nc ||| d ||| 0.5\ne ||| f ||| 1 1\n" * 40),
    ("CRLF lines, the last without its newline", b"a ||| b ||| 0.5 0.5\r\n" * 30 + b"c ||| d ||| 1 1\r"),
]


@pytest.mark.parametrize("case, data", TABLES, ids=[case for case, _ in TABLES])
@pytest.mark.parametrize("unit_lines, world_size, chunk_size", [(1000, 1, 333), (7, 2, 3), (50, 3, 1)])
def test_raw_chunks_parsed_by_a_worker_equal_the_parsed_chunks(tmp_path, example_table, case, data,
                                                                unit_lines, world_size, chunk_size):
    path = example_table if data is None else tmp_path / "t.gz"
    if data is not None:
        path.write_bytes(gzip.compress(data))
    for rank in range(world_size):
        units = TableUnits(path, unit_lines, rank, world_size, keep_rejects=True)
        parsed = [(chunk.unit, chunk.lines, chunk.last, chunk.entries, chunk.rejected)
                  for chunk in units.chunks(chunk_size)]
        raw, totals = raw_chunks_parsed(path, unit_lines, rank, world_size, True, chunk_size)
        assert raw == parsed
        assert totals == (units.total_lines, units.num_units, units.owned)


def test_a_worker_names_the_first_bad_line_as_the_reader_does(tmp_path):
    table = tmp_path / "t.txt"
    table.write_bytes(b"bad\na ||| b ||| 0.5 0.5\nc ||| d ||| 0.5 0.5\ne ||| f ||| 0.5\n")
    for rank in (0, 1):  # rank 1 learns the number of scores from lines it only counts
        with pytest.raises(PhraseTableFormatError) as parsed:
            list(TableUnits(table, 2, rank, 2).chunks(10))
        with pytest.raises(PhraseTableFormatError) as raw:
            raw_chunks_parsed(table, 2, rank, 2, False, 10)
        assert str(raw.value) == str(parsed.value)


def test_damage_is_reported_after_the_same_line_when_lines_are_read_unparsed(tmp_path, example_table):
    data = gzip.compress(gzip.decompress(example_table.read_bytes()))
    (tmp_path / "cut.gz").write_bytes(data[: len(data) * 3 // 4])
    with pytest.raises(PhraseTableFormatError) as parsed:
        list(TableUnits(tmp_path / "cut.gz", 500).chunks(100))
    with pytest.raises(PhraseTableFormatError) as raw:
        list(TableUnits(tmp_path / "cut.gz", 500).chunks(100, raw=True))
    assert str(raw.value) == str(parsed.value)
