"""Turning id sequences into padded tensors, and pairs into length-sorted token-budget batches.

Sorting by length keeps padding (wasted matmul rows) near zero; a token budget instead of a
fixed pair count keeps every batch about the same cost, whatever the phrase lengths.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch

from rescorer.data.vocabulary import PAD_ID


def pad_sequences(seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids (batch, max_len) and lengths (batch,), both int64."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    ids = np.full((len(seqs), max(int(lengths.max()), 1)), PAD_ID, dtype=np.int64)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = seq
    return torch.from_numpy(ids), torch.from_numpy(lengths)


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
