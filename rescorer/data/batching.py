"""Pairs into length-sorted token-budget batches, and a chunk's batches padded ahead of the model.

Sorting by length keeps padding (wasted matmul rows) near zero; a token budget instead of a
fixed pair count keeps every batch about the same cost, whatever the phrase lengths. No torch
here: the host workers that prepare a table's batches (rescorer.scoring.chunk_preparation) start
without it, and the model's process makes tensors of the arrays (torch.from_numpy, no copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from rescorer.data.phrase_encoding import EncodedPhrases

__all__ = ["length_sorted_batches", "PaddedBatch", "padded_batches"]


def length_sorted_batches(src_lengths: np.ndarray, tgt_lengths: np.ndarray,
                          token_budget: int) -> Iterator[np.ndarray]:
    """Index arrays of batches, sorted by (target, source) length, each padding to <= token_budget.

    The cost of a batch is its pair count times its longest (source + target + 1) sequence,
    since the recurrences run over padded tensors. A single pair over budget is its own batch.
    """
    order = np.lexsort((src_lengths, tgt_lengths))
    cost = (src_lengths + tgt_lengths + 1)[order]
    start = 0
    longest = 0
    for end in range(len(order)):
        longest = max(longest, int(cost[end]))
        if (end - start + 1) * longest > token_budget and end > start:
            yield order[start:end]
            start, longest = end, int(cost[end])
    if start < len(order):
        yield order[start:]


@dataclass
class PaddedBatch:
    """One batch of pairs as the model takes it, int64 arrays: which pairs (`rows`, indices into
    the chunk), their right-padded ids (rows, longest) and lengths (rows,)."""

    rows: np.ndarray
    src_ids: np.ndarray
    src_lengths: np.ndarray
    tgt_ids: np.ndarray
    tgt_lengths: np.ndarray

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The model's four inputs: source ids and lengths, target ids and lengths."""
        return self.src_ids, self.src_lengths, self.tgt_ids, self.tgt_lengths


def padded_batches(src_seqs: EncodedPhrases, tgt_seqs: EncodedPhrases, token_budget: int) -> list[PaddedBatch]:
    """Every pair of a chunk in its length-sorted batch, padded: the batches the model scores, in
    the order `length_sorted_batches` gives them (so the scores equal those of batching later)."""
    return [PaddedBatch(rows, *src_seqs.padded(rows), *tgt_seqs.padded(rows))
            for rows in length_sorted_batches(src_seqs.lengths, tgt_seqs.lengths, token_budget)]
