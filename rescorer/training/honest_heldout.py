"""An honest held-out set: the held-out pairs that no training pair contains.

The held-out pairs are table lines picked by a seeded hash (rescorer.training.trainer.PairSplit),
and most of them are pieces of a training pair extracted from the same sentence pair: a model
that memorized "a b c ||| x y z" predicts "b c ||| y z" well without generalizing. Issue 33
measured 84.5% of the bible table's held-out pairs to be such pieces. Training on a phrase table
therefore reports, beside the perplexity on all held-out pairs (which early stopping uses), the
perplexity on the honest ones, from the same log-probabilities (HonestHeldout).

A held-out pair (s, t) is a *sub-pair* when some training pair (S, T) has s as a contiguous span
of S **and** t as a contiguous span of T (the same training pair for both sides). Spans are of
the ids the model sees (words outside the shortlists are all [UNK]). The honest held-out pairs
are the others.

How, for millions of pairs: every contiguous span of every training pair, of a length that some
held-out side has, is hashed (64-bit polynomial, in numpy, a block of pairs at a time) and
looked up among the held-out sides' hashes; the training pairs holding a held-out source span and
those holding its target span are intersected, and a candidate is confirmed on the ids
themselves, so a hash collision can never make a pair a sub-pair. On the 2.2M-pair bible table
this takes about 14 s of CPU, once per run (a checkpoint keeps the pairs it found).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterator, Optional

import numpy as np

from rescorer.data.pair_cache import PairCache

if TYPE_CHECKING:
    from rescorer.training.trainer import PairSplit

__all__ = ["CHECKPOINT_KEY", "HonestHeldout", "find_honest_heldout", "honest_heldout", "sub_pair_mask"]

CHECKPOINT_KEY = "honest_heldout"  # the honest pairs' indices, in the checkpoint, so that a resumed run keeps them

_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: spans of one length hash like base-B numbers mod 2^64
_BLOCK_PAIRS = 1 << 18


def sub_pair_mask(cache: PairCache, heldout: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Whether each held-out pair (`heldout`, cache indices) is a sub-pair of a pair in `train`."""
    heldout = np.asarray(heldout, dtype=np.int64)
    is_train = np.zeros(cache.num_pairs, dtype=bool)
    is_train[np.asarray(train, dtype=np.int64)] = True
    classes, holders = {}, {}
    for side in ("src", "tgt"):
        hashes, lengths = _whole_hashes(cache, side, heldout)
        unique = np.unique(hashes)
        classes[side] = np.searchsorted(unique, hashes)
        holders[side] = _holders(cache, side, unique, set(lengths.tolist()), is_train)
    mask = np.zeros(len(heldout), dtype=bool)
    for row, index in enumerate(heldout):
        candidates = np.intersect1d(holders["src"][classes["src"][row]], holders["tgt"][classes["tgt"][row]],
                                    assume_unique=True)
        mask[row] = any(_contains(cache, int(candidate), int(index)) for candidate in candidates)
    return mask


def honest_heldout(cache: PairCache, split: "PairSplit") -> np.ndarray:
    """The held-out indices of `split` that are not sub-pairs of any of its training pairs."""
    return split.valid[~sub_pair_mask(cache, split.valid, split.train_indices())]


class HonestHeldout:
    """The honest pairs among a split's held-out ones, and both perplexities from one set of
    per-pair log-probabilities (the held-out pass that validation makes anyway)."""

    def __init__(self, cache: PairCache, heldout: np.ndarray, honest: np.ndarray):
        self.honest = np.asarray(honest, dtype=np.int64)  # cache indices, ascending
        self.mask = np.isin(heldout, self.honest)  # which held-out pairs (in `heldout`'s order) are honest
        self.tokens = cache.lengths("tgt")[heldout].astype(np.int64) + 1  # each pair's target tokens and [EOS]

    def stored(self) -> dict:
        """What a checkpoint keeps, so that a resumed run measures the same pairs (find_honest_heldout)."""
        return {CHECKPOINT_KEY: self.honest.tolist()}

    @property
    def num_honest(self) -> int:
        return int(self.mask.sum())

    def perplexities(self, log_probs: np.ndarray) -> tuple[float, Optional[float]]:
        """exp(mean negative log-likelihood per target token) over all held-out pairs, and over
        the honest ones (None when there is none), from each held-out pair's log p (`heldout`'s order)."""
        everything = math.exp(-float(log_probs.sum()) / int(self.tokens.sum()))
        if not self.mask.any():
            return everything, None
        return everything, math.exp(-float(log_probs[self.mask].sum()) / int(self.tokens[self.mask].sum()))


def find_honest_heldout(cache: PairCache, split: "PairSplit", checkpoint: Optional[dict] = None) -> HonestHeldout:
    """The split's honest held-out pairs: those a resumed checkpoint recorded, else found now."""
    stored = (checkpoint or {}).get(CHECKPOINT_KEY)
    honest = np.asarray(stored, dtype=np.int64) if stored is not None else honest_heldout(cache, split)
    return HonestHeldout(cache, split.valid, honest)


def _whole_hashes(cache: PairCache, side: str, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hash, length) of each given pair's whole side, hashed as `_span_hashes` hashes spans."""
    sequences = cache.sequences(side, indices)
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    hashes = np.zeros(len(indices), dtype=np.uint64)
    for k in range(int(lengths.max(initial=0))):
        longer = np.flatnonzero(lengths > k)
        tokens = np.array([sequences[i][k] for i in longer], dtype=np.uint64) + np.uint64(1)
        hashes[longer] = hashes[longer] * _BASE + tokens
    return hashes, lengths


def _span_hashes(ids: np.ndarray, offsets: np.ndarray, lengths: set) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(pair, hash) of every contiguous span of the wanted lengths in a block of pairs: `ids` its
    tokens, `offsets` (relative to ids[0], one more than its pairs) where each pair starts."""
    tokens = ids.astype(np.uint64) + np.uint64(1)
    pair_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    end_of = offsets[1:][pair_of]  # where the token's pair ends
    hashes = np.zeros(len(tokens), dtype=np.uint64)
    for length in range(1, max(lengths, default=0) + 1):
        starts = len(tokens) - length + 1
        if starts <= 0:
            return
        hashes = hashes[:starts] * _BASE + tokens[length - 1:]
        if length in lengths:
            inside = np.arange(starts) + length <= end_of[:starts]
            yield pair_of[:starts][inside], hashes[inside]


def _holders(cache: PairCache, side: str, wanted: np.ndarray, lengths: set,
             is_train: np.ndarray) -> list[np.ndarray]:
    """For each hash in `wanted` (sorted), the training pairs (ascending) with a span of that hash."""
    ids, offsets = cache.flat(side)
    found_pairs, found_classes = [], []
    train_ids = np.flatnonzero(is_train)
    if 0 in lengths:  # an empty side is a span of every pair
        found_pairs.append(train_ids)
        found_classes.append(np.full(len(train_ids), np.searchsorted(wanted, np.uint64(0))))
    for first in range(0, cache.num_pairs, _BLOCK_PAIRS):
        last = min(first + _BLOCK_PAIRS, cache.num_pairs)
        block_offsets = np.asarray(offsets[first:last + 1], dtype=np.int64)
        block_ids = np.asarray(ids[block_offsets[0]:block_offsets[-1]])
        for pairs, hashes in _span_hashes(block_ids, block_offsets - block_offsets[0], lengths - {0}):
            pairs = pairs + first
            classes = np.minimum(np.searchsorted(wanted, hashes), len(wanted) - 1)
            keep = (wanted[classes] == hashes) & is_train[pairs]
            found_pairs.append(pairs[keep])
            found_classes.append(classes[keep])
    pairs = np.concatenate(found_pairs) if found_pairs else np.zeros(0, dtype=np.int64)
    classes = np.concatenate(found_classes) if found_classes else np.zeros(0, dtype=np.int64)
    order = np.lexsort((pairs, classes))
    pairs, classes = pairs[order], classes[order]
    bounds = np.searchsorted(classes, np.arange(len(wanted) + 1))
    return [np.unique(pairs[bounds[c]:bounds[c + 1]]) for c in range(len(wanted))]


def _contains(cache: PairCache, outer: int, inner: int) -> bool:
    """Whether pair `inner`'s source and target are contiguous spans of pair `outer`'s."""
    return all(_is_span(cache.sequences(side, [inner])[0].tolist(), cache.sequences(side, [outer])[0].tolist())
               for side in ("src", "tgt"))


def _is_span(needle: list, haystack: list) -> bool:
    width = len(needle)
    return any(haystack[start:start + width] == needle for start in range(len(haystack) - width + 1))
