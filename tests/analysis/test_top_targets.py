"""Table 2's library: sources picked by frequency, rarity, length, a seeded hash or a list; the
table's and the RNN's rankings; Markdown and CSV rows."""

import math

import pytest

from rescorer.analysis.top_targets import (SourceChoice, read_source_groups, read_sources_file,
                                           top_targets_rows)
from rescorer.errors import PhraseTableFormatError, RescorerError

# source ||| target ||| φ(f|e) lex φ(e|f) lex RNN ||| alignment ||| c(target) c(source) c(pair)
TABLE = (b"a ||| x ||| 0.5 0.5 0.9 0.5 0.1 ||| 0-0 ||| 10 3 1 ||| |||\n"
         b"a ||| y ||| 0.5 0.5 0.1 0.5 0.7 ||| 0-0 ||| 10 3 1 ||| |||\n"
         b"b c d e ||| z ||| 0.5 0.5 1 0.5 0.2 ||| 0-0 ||| 10 99 1 ||| |||\n"
         b"c ||| w ||| 0.5 0.5 1 0.5 0.3 ||| 0-0 ||| 10 1 1 ||| |||\n"
         b"f g h i j ||| v ||| 0.5 0.5 0.4 0.5 0.3 ||| 0-0 ||| 10 2 1 ||| |||\n"
         b"f g h i j ||| u ||| 0.5 0.5 0.6 0.5 0.2 ||| 0-0 ||| 10 2 1 ||| |||\n")


@pytest.fixture()
def table(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(TABLE)
    return path


@pytest.mark.parametrize("choice, expected", [
    (SourceChoice(2), [("b c d e", 99.0), ("a", 3.0)]),
    (SourceChoice(2, pick="rare"), [("c", 1.0), ("f g h i j", 2.0)]),
    (SourceChoice(2, min_targets=2, pick="rare"), [("f g h i j", 2.0), ("a", 3.0)]),
    (SourceChoice(5, min_words=4), [("b c d e", 99.0), ("f g h i j", 2.0)]),
    (SourceChoice(1, min_words=4, pick="rare"), [("f g h i j", 2.0)]),
    (SourceChoice(5, min_words=4, min_targets=2), [("f g h i j", 2.0)]),
    (SourceChoice(sources=["c", "nowhere", "a"]), [("c", 1.0), ("a", 3.0)]),
], ids=["frequent", "rare", "rare with two targets", "long", "long and rare", "long with two targets",
       "listed"])
def test_sources_are_picked_as_asked(table, choice, expected):
    groups = read_source_groups(table, choice, rnn_column=-1)
    assert [(g.source, g.frequency) for g in groups] == expected


def test_random_picks_depend_on_the_seed_not_on_the_table_order(table, tmp_path):
    reordered = tmp_path / "r.txt"
    lines = TABLE.split(b"\n")[:-1]
    reordered.write_bytes(b"\n".join(lines[4:] + lines[2:4] + lines[:2]) + b"\n")
    picks = {seed: [g.source for g in read_source_groups(table, SourceChoice(2, pick="random", seed=seed))]
             for seed in range(8)}
    assert len({tuple(sorted(p)) for p in picks.values()}) > 1  # the seed matters
    for seed, picked in picks.items():
        again = read_source_groups(reordered, SourceChoice(2, pick="random", seed=seed))
        assert [g.source for g in again] == picked


def test_both_rankings_and_their_log_probabilities(table):
    (group,) = read_source_groups(table, SourceChoice(sources=["a"]), rnn_column=-1)
    assert group.targets == ["x", "y"]
    assert group.direct == [math.log(0.9), math.log(0.1)]  # the table's p(f|e): 3rd score
    assert group.rnn == [math.log(0.1), math.log(0.7)]
    assert [group.targets[i] for i in group.ranked("table")] == ["x", "y"]
    assert [group.targets[i] for i in group.ranked("rnn")] == ["y", "x"]


def test_markdown_and_csv_rows(table):
    groups = read_source_groups(table, SourceChoice(2), rnn_column=-1)
    headers, rows = top_targets_rows(groups, top=1, missing=["nowhere"])
    assert headers[3:] == ("top by the table's p(f|e)", "top by the RNN")
    assert rows == [["b c d e", "99", 1, "z (0.00)", "z (-1.61)"],
                    ["a", "3", 2, "x (-0.11)", "y (-0.36)"],
                    ["nowhere", "0", 0, "(not in the table)", ""]]
    headers, rows = top_targets_rows(groups, top=2, csv=True)
    assert headers == ("source", "source_count", "ranked_by", "rank", "target", "table_log_p", "rnn_log_p")
    assert [row[:5] for row in rows] == [["b c d e", "99", "table", 1, "z"], ["b c d e", "99", "rnn", 1, "z"],
                                         ["a", "3", "table", 1, "x"], ["a", "3", "table", 2, "y"],
                                         ["a", "3", "rnn", 1, "y"], ["a", "3", "rnn", 2, "x"]]
    assert float(rows[2][5]) == pytest.approx(math.log(0.9), abs=1e-7)
    assert float(rows[2][6]) == pytest.approx(math.log(0.1), abs=1e-7)


def test_without_counts_frequency_is_the_number_of_targets(tmp_path):
    table = tmp_path / "t.txt"
    table.write_bytes(b"a ||| x ||| 0.5 0.5 0.5 -1\na ||| y ||| 0.5 0.5 0.5 -2\nb ||| z ||| 0.5 0.5 0.5 -3\n")
    groups = read_source_groups(table, SourceChoice(1), rnn_column=-1, score_is_log=True)
    assert [(g.source, g.frequency, g.rnn) for g in groups] == [("a", 2.0, [-1.0, -2.0])]


def test_a_table_without_the_rnn_column_is_refused_in_one_line(table):
    with pytest.raises(PhraseTableFormatError, match=r"t.txt:1: expected scores at columns 8 and 3 \(counted from 1\)"):
        read_source_groups(table, SourceChoice(2), rnn_column=7)


def test_sources_file(tmp_path):
    path = tmp_path / "sources.txt"
    path.write_text("the  house\n\nof god\nthe house\n")
    assert read_sources_file(path) == ["the house", "of god"]
    path.write_text("a ||| b ||| 1\n")
    with pytest.raises(RescorerError, match=r"sources.txt:1: expected one source phrase per line"):
        read_sources_file(path)
    path.write_text("\n \n")
    with pytest.raises(RescorerError, match=r"sources.txt: no source phrases"):
        read_sources_file(path)
