"""Word embeddings, optionally factored through a low rank as Cho et al. (2014) do (rank 100)."""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from rescorer.data.vocabulary import PAD_ID


class FactoredEmbedding(nn.Module):
    """A V x E embedding approximated by a V x R table times an R x E matrix; R None: a V x E table."""

    def __init__(self, vocab_size: int, embed_dim: int, rank: Optional[int]):
        super().__init__()
        self.table = nn.Embedding(vocab_size, rank or embed_dim, padding_idx=PAD_ID)
        self.project = nn.Linear(rank, embed_dim, bias=False) if rank else None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        vectors = self.table(ids)
        return self.project(vectors) if self.project is not None else vectors


def previous_word_embeddings(embed: FactoredEmbedding, tgt_in: torch.Tensor) -> torch.Tensor:
    """e(y_{t-1}) for every decoder step: (batch, steps) ids -> (batch, steps, E), with
    e(y_0) = 0 whatever id column 0 holds (the paper's all-zero first input)."""
    prev_embed = embed(tgt_in)
    return torch.cat([torch.zeros_like(prev_embed[:, :1]), prev_embed[:, 1:]], dim=1)
