"""Phrase-table columns summed over the phrase pairs of stored real n-best lines, as the decoder
adds them: log of the written score, floored at -100; unknown words add nothing; a pair
missing from the column's table is refused naming the n-best line."""

import gzip
import itertools
import math

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from rescorer.errors import PhraseTableFormatError
from moses_integration.line_files import read_lines
from moses_integration.nbest.nbest_file import read_nbest_list
from moses_integration.proxy.phrase_columns import (column_sums, moses_log, phrase_pairs_of, read_table_columns,
                                                    table_column, write_pair_table)
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures


@pytest.fixture(scope="module")
def nbest(tmp_path_factory):
    """Dev verses 0-2 of the stored list, plus a hypothesis that passes an unknown word through."""
    with gzip.open(FIXTURES / "nbest/dev.nbest200.gz", "rb") as handle:
        lines = list(itertools.takewhile(lambda line: int(line.split(b" ||| ")[0]) < 3, handle))
    path = tmp_path_factory.mktemp("lists") / "list.nbest"
    path.write_bytes(b"".join(lines))
    sources = read_lines(FIXTURES / "corpus/dev.en.gz")[:3]
    return read_nbest_list(path, sources)


def scores_line(source, target, scores):
    return f"{source} ||| {target} ||| {' '.join(map(str, scores))} ||| 0-0 ||| 1 1 1 ||| |||\n".encode()


def test_sums_are_the_decoders_log_scores_over_the_pairs(tmp_path, nbest):
    pairs = phrase_pairs_of(nbest)
    # column 1: exp(-(target words)); column 2: 0 (Moses floors log 0 at -100)
    table = tmp_path / "table"
    table.write_bytes(b"".join(scores_line(s, t, [math.exp(-len(t.split())), 0.0]) for s, t in pairs.pairs))
    num_scores, found = read_table_columns(table, set(pairs.pairs))
    assert num_scores == 2 and len(found) == len(pairs.pairs)
    words = column_sums(nbest, pairs, table_column(found, 0), "w", "table")
    floors = column_sums(nbest, pairs, table_column(found, 1), "f", "table")
    per_word = column_sums(nbest, pairs, table_column(found, 0, per_word=True), "pw", "table")
    for row, (hypothesis, spans) in enumerate(zip(nbest.hypotheses, nbest.segmentations)):
        assert words[row] == pytest.approx(-len(hypothesis.split()))
        assert floors[row] == -100.0 * len(spans)
        assert per_word[row] == pytest.approx(-len(spans))


def test_an_unknown_word_adds_nothing_and_a_missing_pair_is_refused(tmp_path, nbest):
    pairs = phrase_pairs_of(nbest)
    kept = pairs.pairs[1:]
    table = tmp_path / "table"
    table.write_bytes(b"".join(scores_line(s, t, [0.5]) for s, t in kept))
    _, found = read_table_columns(table, set(pairs.pairs))
    with pytest.raises(NbestFormatError) as info:
        column_sums(nbest, pairs, table_column(found, 0), "rnn", "scored.gz")
    source, target = pairs.pairs[0]
    assert str(info.value) == (f"{nbest.path}:1: phrase pair {source!r} ||| {target!r} is not in scored.gz, "
                               "which column rnn comes from")
    # the same pair, now an unknown word copied through (one source word, itself as target)
    pairs.pairs[0] = ("ketura", "ketura")
    sums = column_sums(nbest, pairs, table_column(found, 0), "rnn", "scored.gz")
    uses = np.bincount(pairs.rows, minlength=pairs.num_rows)
    first = np.bincount(pairs.rows[pairs.pair_ids == 0], minlength=pairs.num_rows)
    assert np.allclose(sums, math.log(0.5) * (uses - first))


def test_the_pair_table_keeps_the_lines_of_the_pairs_used(tmp_path, nbest):
    pairs = phrase_pairs_of(nbest)
    table = tmp_path / "table"
    lines = [scores_line(s, t, [0.25]) for s, t in pairs.pairs] + [scores_line("not", "used", [1])]
    table.write_bytes(b"".join(lines))
    assert write_pair_table(table, set(pairs.pairs), tmp_path / "pairs") == len(pairs.pairs)
    assert (tmp_path / "pairs").read_bytes() == b"".join(lines[:-1])


def test_a_bad_table_line_is_named(tmp_path, nbest):
    pairs = phrase_pairs_of(nbest)
    source, target = pairs.pairs[0]
    table = tmp_path / "table"
    table.write_bytes(scores_line(source, target, [0.5]) + f"{pairs.pairs[1][0]} ||| {pairs.pairs[1][1]}\n".encode())
    with pytest.raises(PhraseTableFormatError, match=rf"^{table}:2: too few fields"):
        read_table_columns(table, set(pairs.pairs))


def test_moses_log_floors_at_minus_100():
    assert moses_log(math.exp(-3)) == pytest.approx(-3)
    assert moses_log(0.0) == -100.0
    assert moses_log(math.exp(-150)) == -100.0


def test_the_tables_own_columns_give_back_the_decoders_translation_model_features(nbest):
    """The real table's four scores, summed over each stored hypothesis's pairs, are the
    TranslationModel0 features Moses printed (to its 6 digits): the pairs are rebuilt right."""
    pairs = phrase_pairs_of(nbest)
    num_scores, found = read_table_columns(FIXTURES / "model/phrase-table.gz", set(pairs.pairs))
    assert num_scores == 4
    for column in range(4):
        sums = column_sums(nbest, pairs, table_column(found, column), "tm", "phrase-table.gz")
        printed = nbest.features[:, nbest.feature_names.index(f"TranslationModel0_{column}")]
        assert np.abs(sums - printed).max() < 1e-3
