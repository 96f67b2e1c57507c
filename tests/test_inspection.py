"""top-targets: frequent sources found by their counts, targets ranked by the appended score."""

import math

from rescorer.inspection import top_targets


def test_top_targets_ranks_by_the_last_column(tmp_path):
    table = tmp_path / "t.txt"
    table.write_bytes(
        b"a ||| x ||| 0.5 0.5 0.9 0.5 0.1 ||| 0-0 ||| 10 3 1 ||| |||\n"
        b"a ||| y ||| 0.5 0.5 0.1 0.5 0.7 ||| 0-0 ||| 10 3 1 ||| |||\n"
        b"b ||| z ||| 0.5 0.5 1 0.5 0.2 ||| 0-0 ||| 10 99 1 ||| |||\n"
        b"c ||| w ||| 0.5 0.5 1 0.5 0.3 ||| 0-0 ||| 10 1 1 ||| |||\n")
    groups = top_targets(table, num_sources=2)
    assert [(g.source, g.frequency) for g in groups] == [("b", 99.0), ("a", 3.0)]
    assert [t[0] for t in groups[1].targets] == ["y", "x"]  # 0.7 before 0.1
    assert groups[1].targets[0][1] == math.log(0.7)
    assert groups[1].targets[0][2] == math.log(0.1)  # the table's p(target | source)


def test_without_counts_frequency_is_the_number_of_targets(tmp_path):
    table = tmp_path / "t.txt"
    table.write_bytes(b"a ||| x ||| 0.5 0.5 0.5 -1\na ||| y ||| 0.5 0.5 0.5 -2\nb ||| z ||| 0.5 0.5 0.5 -3\n")
    groups = top_targets(table, num_sources=1, score_is_log=True)
    assert [(g.source, g.frequency, [t[1] for t in g.targets]) for g in groups] == [("a", 2.0, [-1.0, -2.0])]
