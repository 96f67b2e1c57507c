"""Attention over the source annotations h_1..h_S, for all decoder steps at once or for one.

Every score splits into a part of the source alone, computed once per pair (`keys`: U_a h_j,
W_a h_j), and a part of the decoder step. Weights are a softmax over the real source positions
only (padding gets exactly 0); local attention also masks positions outside the window.

- `AdditiveAttention`: e_ij = v_a^T tanh(W_a q_i + U_a h_j): Bahdanau et al.'s alignment model
  (q = s_{i-1}) and Luong et al.'s `concat` score (q = h_t).
- `MultiplicativeScore`: Luong's `dot` h_t^T h_s and `general` h_t^T W_a h_s.
- `LuongAttention`: one of those scores, global or local (Luong et al. 2015): local-m centres
  the window on p_t = t, local-p on p_t = S sigmoid(v_p^T tanh(W_p h_t)) and multiplies the
  weights by exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2, as the paper does (the product is
  not renormalised, so local-p weights sum to at most 1).
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from rescorer.models.base import full_precision


def source_mask(src_lengths: torch.Tensor, src_len: int) -> torch.Tensor:
    """(batch, src_len) bool: True at real source positions."""
    return torch.arange(src_len, device=src_lengths.device).unsqueeze(0) < src_lengths.unsqueeze(1)


def masked_softmax(scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis where `allowed`, exactly 0 elsewhere: (..., src_len)."""
    scores = full_precision(scores).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1)


def attend(weights: torch.Tensor, annotations: torch.Tensor) -> torch.Tensor:
    """Contexts c = sum_j alpha_j h_j: (batch, steps, src_len) x (batch, src_len, A) -> (batch, steps, A)."""
    return torch.bmm(weights.to(annotations.dtype), annotations)


class AdditiveAttention(nn.Module):
    """v_a^T tanh(W_a q + U_a h_j); U_a h_j is the per-pair key."""

    def __init__(self, query_size: int, key_size: int, attention_size: int):
        super().__init__()
        self.query = nn.Linear(query_size, attention_size, bias=False)  # W_a
        self.key = nn.Linear(key_size, attention_size, bias=False)  # U_a
        self.energy = nn.Linear(attention_size, 1, bias=False)  # v_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """(batch, src_len, A_enc) -> U_a h_j (batch, src_len, attention_size)."""
        return self.key(annotations)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """queries (batch, steps, Q), keys (batch, src_len, attention_size) -> (batch, steps, src_len)."""
        hidden = torch.tanh(self.query(queries).unsqueeze(2) + keys.unsqueeze(1))
        return self.energy(hidden).squeeze(-1)


class MultiplicativeScore(nn.Module):
    """Luong's dot (h_t . h_s) and general (h_t . W_a h_s) scores; W_a h_s is the per-pair key."""

    def __init__(self, kind: str, query_size: int, key_size: int):
        super().__init__()
        if kind == "dot" and query_size != key_size:
            raise ValueError(f"the dot score needs equal sizes, found decoder {query_size} and "
                             f"annotations {key_size}")
        self.key = nn.Linear(key_size, query_size, bias=False) if kind == "general" else None  # W_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        return annotations if self.key is None else self.key(annotations)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(queries, keys.transpose(1, 2))


class LuongAttention(nn.Module):
    """Global or local attention weights a_t(s) for decoder outputs h_t."""

    def __init__(self, score: str, attention: str, window: Optional[int], hidden_size: int,
                 annotation_size: int, attention_size: Optional[int] = None):
        super().__init__()
        self.attention = attention
        self.window = window
        if score == "concat":
            self.score = AdditiveAttention(hidden_size, annotation_size, attention_size or hidden_size)
        else:
            self.score = MultiplicativeScore(score, hidden_size, annotation_size)
        if attention == "local-p":
            self.position_hidden = nn.Linear(hidden_size, hidden_size, bias=False)  # W_p
            self.position_out = nn.Linear(hidden_size, 1, bias=False)  # v_p

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        return self.score.keys(annotations)

    def centres(self, queries: torch.Tensor, src_lengths: torch.Tensor, first_step: int) -> torch.Tensor:
        """p_t for each step: (batch, steps) float. local-m: t (0-based), kept inside the source so
        the window never falls past its end; local-p: S sigmoid(v_p^T tanh(W_p h_t)) in [0, S]."""
        lengths = src_lengths.unsqueeze(1)  # (batch, 1)
        if self.attention == "local-m":
            steps = torch.arange(first_step, first_step + queries.size(1), device=queries.device)
            return torch.minimum(steps.unsqueeze(0), lengths - 1).to(torch.float32)
        predicted = self.position_out(torch.tanh(self.position_hidden(queries))).squeeze(-1)
        share = torch.sigmoid(full_precision(predicted))  # (batch, steps)
        return lengths.to(share.dtype) * share

    def weights(self, queries: torch.Tensor, keys: torch.Tensor, src_lengths: torch.Tensor,
                first_step: int = 0) -> torch.Tensor:
        """queries (batch, steps, H) for steps first_step, first_step + 1, ...; -> (batch, steps, src_len)."""
        scores = self.score.scores(queries, keys)
        allowed = source_mask(src_lengths, keys.size(1)).unsqueeze(1)  # (batch, 1, src_len)
        if self.attention == "global":
            return masked_softmax(scores, allowed)
        centres = self.centres(queries, src_lengths, first_step).unsqueeze(-1)  # (batch, steps, 1)
        positions = torch.arange(keys.size(1), device=keys.device, dtype=torch.float32)
        distance = positions - centres  # (batch, steps, src_len)
        weights = masked_softmax(scores, allowed & (distance.abs() <= self.window))
        if self.attention == "local-p":
            sigma = self.window / 2
            weights = weights * torch.exp(-distance.square() / (2 * sigma * sigma))
        return weights
