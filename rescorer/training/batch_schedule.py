"""Which training pairs each update sees: the batch of update u is a function of (seed, u) alone,
so a resumed run, or a run on several ranks, draws exactly the batches of an uninterrupted one.

Two schedules:

- `RandomPairs` (`--batch-size N`): N pairs drawn uniformly at random for every update, as Cho et
  al. (2014) did with 64. A batch of 64 phrases is about 320 target tokens: too small to keep the
  matrix units busy, and every update pays Python and optimizer overhead.
- `TokenBudget` (`--batch-tokens N`, the default): every epoch visits each training pair exactly
  once, in batches of pairs of the same lengths holding about N padded tokens each, in random
  order. Same lengths mean almost no padding; a token budget keeps every update the same cost.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from rescorer.data.batching import length_sorted_batches

__all__ = ["RandomPairs", "TokenBudget", "make_schedule"]


class RandomPairs:
    """`batch_size` uniformly random training pairs per update (held-out pairs never drawn)."""

    def __init__(self, split, batch_size: int):
        self.split, self.batch_size = split, batch_size
        self.updates_per_epoch = split.num_train / batch_size
        self.smallest_batch = batch_size

    def batch(self, update: int) -> np.ndarray:
        return self.split.train_batch(update, self.batch_size)

    def describe(self) -> str:
        return f"{self.batch_size} random pairs"


class TokenBudget:
    """Each epoch: every training pair once, in shuffled batches of same-length pairs whose padded
    source + target + [EOS] tokens stay within `budget` (a pair over budget is a batch alone).

    The batch boundaries depend only on the sorted lengths, so every epoch has the same number of
    batches; which pairs of a length share a batch, and the batches' order, change with the epoch.
    """

    def __init__(self, split, src_lengths: np.ndarray, tgt_lengths: np.ndarray, budget: int):
        self.split, self.budget = split, budget
        self.train = split.train_indices()
        self.src_lengths, self.tgt_lengths = src_lengths[self.train], tgt_lengths[self.train]
        sizes = [len(batch) for batch in self._batches(np.arange(len(self.train)))]
        self.updates_per_epoch, self.smallest_batch = len(sizes), min(sizes, default=0)
        self._epoch: Optional[int] = None
        self._epoch_batches: list[np.ndarray] = []

    def _batches(self, order: np.ndarray) -> list[np.ndarray]:
        """Batches of positions into self.train, `order` breaking the ties between equal lengths
        (length_sorted_batches sorts stably)."""
        return [order[batch] for batch in
                length_sorted_batches(self.src_lengths[order], self.tgt_lengths[order], self.budget)]

    def epoch_batches(self, epoch: int) -> list[np.ndarray]:
        """The batches of one epoch, as pair indices, in the order they are trained."""
        if epoch != self._epoch:
            rng = np.random.default_rng([self.split.seed, epoch])
            batches = self._batches(rng.permutation(len(self.train)))
            self._epoch_batches = [self.train[batches[i]] for i in rng.permutation(len(batches))]
            self._epoch = epoch
        return self._epoch_batches

    def batch(self, update: int) -> np.ndarray:
        epoch, position = divmod(update, self.updates_per_epoch)
        return self.epoch_batches(epoch)[position]

    def describe(self) -> str:
        pairs = len(self.train) / self.updates_per_epoch
        return f"batches of {self.budget} tokens (about {pairs:.0f} pairs)"


def make_schedule(split, cache, batch_size: Optional[int], batch_tokens: Optional[int]):
    """The schedule the settings ask for: a token budget when given, else random pairs."""
    if batch_tokens is not None:
        return TokenBudget(split, cache.lengths("src"), cache.lengths("tgt"), batch_tokens)
    return RandomPairs(split, batch_size)
