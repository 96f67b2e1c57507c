"""Turning id sequences into padded tensors (a batch of phrases or sentences the model reads)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from rescorer.data.vocabulary import PAD_ID

__all__ = ["pad_sequences"]


def pad_sequences(seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids (batch, max_len) and lengths (batch,), both int64."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    ids = np.full((len(seqs), max(int(lengths.max()), 1)), PAD_ID, dtype=np.int64)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = seq
    return torch.from_numpy(ids), torch.from_numpy(lengths)
