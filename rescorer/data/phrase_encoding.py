"""Many phrases into shortlist ids at once: one flat id array and offsets, not a list per phrase.

The reader thread encodes every pair of a chunk while the model scores the previous one, and
Python work there takes the GIL from the scoring thread between its kernels. Encoding phrase by
phrase (a split, a list comprehension of dict look-ups and an unknown count per phrase) cost
about 9 us a pair, twice the parsing; here the per-word loops run inside `map` and NumPy:
split the chunk's phrases as one text with a sentinel token between them (str.split, so
exactly the words `Vocabulary.encode` sees), look every word up in one pass, and take
per-phrase lengths and unknown counts from cumulative sums.
"""

from __future__ import annotations

from itertools import chain, repeat
from typing import Sequence

import numpy as np

from rescorer.data.vocabulary import PAD_ID, UNK_ID, Vocabulary

__all__ = ["EncodedPhrases", "encode_phrases"]

_MISSING = -1  # a word outside the vocabulary's index (Vocabulary.count_unknown counts these)
_SENTINEL = "\x00"  # a token between phrases when they are split as one text
_BETWEEN = f" {_SENTINEL} "


class EncodedPhrases(Sequence):
    """Phrases as shortlist ids: phrase i is ids[offsets[i]:offsets[i + 1]] ([UNK] for unknown
    words). Indexing gives that phrase's ids (an int64 array), so it stands wherever a list of id
    lists does; `padded` makes a batch's padded ids without a Python loop over phrases (arrays, no
    torch: host worker processes pad batches too, rescorer.data.batching)."""

    def __init__(self, ids: np.ndarray, offsets: np.ndarray, unknown: np.ndarray):
        self.ids = ids  # (words,) int64
        self.offsets = offsets  # (phrases + 1,) int64
        self.unknown = unknown  # (phrases,) int64: words outside the vocabulary, per phrase

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise TypeError("EncodedPhrases takes one phrase index at a time")
        return self.ids[self.offsets[index]:self.offsets[index + 1]]

    def padded(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Right-padded ids (len(rows), longest) and lengths (len(rows),) of phrases `rows`, int64."""
        starts, lengths = self.offsets[rows], self.lengths[rows]
        positions = np.arange(max(int(lengths.max(initial=0)), 1))
        real = positions < lengths[:, None]  # (rows, longest)
        gathered = self.ids[np.where(real, starts[:, None] + positions, 0)] if len(self.ids) else \
            np.zeros(real.shape, dtype=np.int64)
        return np.where(real, gathered, PAD_ID), lengths.copy()


def encode_phrases(phrases: Sequence[str], vocab: Vocabulary) -> EncodedPhrases:
    """Encode whitespace-tokenized phrases as `vocab.encode` would, all at once."""
    text = _BETWEEN.join(phrases)
    if _SENTINEL in text:  # a phrase holds the sentinel itself: split phrase by phrase
        words = list(map(str.split, phrases))
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        tokens = list(chain.from_iterable(words))
    else:
        tokens = text.split()  # one split, not one list per phrase (the GC walks each new list)
        boundaries = np.flatnonzero(np.fromiter(map(_SENTINEL.__eq__, tokens), dtype=bool, count=len(tokens)))
        lengths = np.diff(boundaries, prepend=-1, append=len(tokens)) - 1
        tokens = [token for token in tokens if token != _SENTINEL] if len(boundaries) else tokens
    offsets = np.zeros(len(phrases) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    ids = np.fromiter(map(vocab.index.get, tokens, repeat(_MISSING)), dtype=np.int64, count=total)
    missing = ids == _MISSING
    ids[missing] = UNK_ID
    missing_before = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(missing, out=missing_before[1:])
    return EncodedPhrases(ids, offsets, np.diff(missing_before[offsets]))
