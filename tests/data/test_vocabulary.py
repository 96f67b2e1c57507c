"""Shortlists, unknown words and the pair cache."""

import gzip
from collections import Counter

import numpy as np
import pytest

from rescorer.data.pair_cache import build_pair_cache, open_matching_cache
from rescorer.data.vocabulary import UNK_ID, Vocabulary, count_corpus_words, coverage
from rescorer.errors import CorpusError


def test_shortlist_keeps_most_frequent_and_breaks_ties_alphabetically():
    vocab = Vocabulary.from_counts(Counter({"c": 5, "b": 2, "a": 2, "d": 1}), size=3)
    assert vocab.tokens == ["[PAD]", "[UNK]", "[EOS]", "c", "a", "b"]
    assert vocab.encode(["c", "d", "b"]) == [3, UNK_ID, 5]
    assert vocab.count_unknown(["c", "d", "zz", "a"]) == 2
    assert vocab.is_known("a") and not vocab.is_known("d") and not vocab.is_known("[UNK]")


def test_coverage_counts_running_words():
    counts = Counter({"c": 5, "b": 2, "a": 2, "d": 1})
    vocab = Vocabulary.from_counts(counts, size=1)
    assert coverage(vocab, counts).ratio == pytest.approx(0.5)


@pytest.mark.parametrize("compress", [False, True])
def test_corpus_counts_plain_and_gzip(tmp_path, compress):
    path = tmp_path / "corpus.txt"
    data = "le chat\nle chien\n".encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    assert count_corpus_words(path) == Counter({"le": 2, "chat": 1, "chien": 1})


def test_empty_or_missing_corpus_is_an_error(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(CorpusError, match="empty"):
        count_corpus_words(tmp_path / "empty")
    with pytest.raises(CorpusError, match="cannot read"):
        count_corpus_words(tmp_path / "absent")


def test_real_corpus_shortlist_coverage(shared_data):
    counts = count_corpus_words(shared_data / "corpus" / "train.fr.gz")
    vocab = Vocabulary.from_counts(counts, 15000)
    # The data README: a 15,000-word shortlist covers nearly all French running words.
    assert 0.98 < coverage(vocab, counts).ratio < 1.0


def test_pair_cache_round_trip_and_staleness(tmp_path):
    vocab = Vocabulary(["[PAD]", "[UNK]", "[EOS]", "a", "b", "c"])
    pairs = [("a b", "c"), ("c c c", "a zz"), ("b", "b a")]
    meta = {"table_name": "t.gz", "table_bytes": 10}
    cache = build_pair_cache(pairs, vocab, vocab, tmp_path / "cache", meta)
    assert cache.num_pairs == 3
    assert [s.tolist() for s in cache.sequences("src", [0, 1, 2])] == [[3, 4], [5, 5, 5], [4]]
    assert [s.tolist() for s in cache.sequences("tgt", [1])] == [[3, UNK_ID]]
    np.testing.assert_array_equal(cache.lengths("tgt"), [1, 2, 2])
    assert open_matching_cache(tmp_path / "cache", meta) is not None
    assert open_matching_cache(tmp_path / "cache", {**meta, "table_bytes": 11}) is None
    assert open_matching_cache(tmp_path / "absent", meta) is None
