"""Encoding a chunk of phrases at once gives what Vocabulary.encode and count_unknown give
phrase by phrase, and pads as pad_sequences does."""

import numpy as np
import pytest
import torch

from rescorer.data.padding import pad_sequences
from rescorer.data.phrase_encoding import encode_phrases
from rescorer.data.vocabulary import Vocabulary
from rescorer.scoring.batch_scoring import score_encoded

VOCAB = Vocabulary(["[PAD]", "[UNK]", "[EOS]", "the", "house", "la", "maison", "é"])

# (case, phrases)
CASES = [
    ("known and unknown words", ["the house", "la maison bleue", "unknown words only"]),
    ("special tokens as words: known to the index, so not counted unknown", ["[UNK] the", "[PAD] [EOS]"]),
    ("runs of spaces, tabs and Unicode whitespace split as str.split does", ["the \t house", "la\xa0maison", " é "]),
    ("a phrase with no word", ["the", "", "   ", "house"]),
    ("the sentinel token inside a phrase", ["the \x00 house", "maison"]),
    ("surrogate-escaped bytes", [b"la \xff maison".decode("utf-8", "surrogateescape")]),
    ("no phrase", []),
]


@pytest.mark.parametrize("case, phrases", CASES, ids=[case for case, _ in CASES])
def test_same_ids_and_unknown_counts_as_phrase_by_phrase(case, phrases):
    encoded = encode_phrases(phrases, VOCAB)
    assert len(encoded) == len(phrases)
    assert [encoded[i].tolist() for i in range(len(phrases))] == [VOCAB.encode(p.split()) for p in phrases]
    assert encoded.unknown.tolist() == [VOCAB.count_unknown(p.split()) for p in phrases]
    assert encoded.lengths.tolist() == [len(p.split()) for p in phrases]


def test_padded_batch_equals_pad_sequences():
    phrases = ["the house", "la", "la maison bleue du roi", "é"]
    encoded = encode_phrases(phrases, VOCAB)
    rows = np.array([2, 0, 3])
    ids, lengths = encoded.padded(rows)
    want_ids, want_lengths = pad_sequences([VOCAB.encode(phrases[i].split()) for i in rows])
    assert ids.dtype == lengths.dtype == np.int64
    assert torch.equal(torch.from_numpy(ids), want_ids) and torch.equal(torch.from_numpy(lengths), want_lengths)


def test_scores_equal_those_of_id_lists(tiny_bundle):
    src = ["the house", "la maison", "unknown", "the the the house"]
    tgt = ["la maison", "la", "é é", "maison"]
    model = tiny_bundle.model
    as_lists = score_encoded(model, [tiny_bundle.src_vocab.encode(p.split()) for p in src],
                             [tiny_bundle.tgt_vocab.encode(p.split()) for p in tgt])
    encoded = score_encoded(model, encode_phrases(src, tiny_bundle.src_vocab),
                            encode_phrases(tgt, tiny_bundle.tgt_vocab))
    np.testing.assert_array_equal(encoded, as_lists)


def test_slices_are_refused():
    with pytest.raises(TypeError, match="one phrase index"):
        encode_phrases(["the"], VOCAB)[0:1]
