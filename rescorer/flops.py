"""Floating-point operations needed to score one pair, for the benchmark's roofline.

Counts only matrix products, as 2 x multiply-adds: the element-wise work (gates, tanh,
maxout pooling, log-softmax) is a few percent at the paper's sizes and runs at memory speed,
not at the matmul rate the roofline compares against. The architecture is Cho et al. (2014),
appendix A:

- per source token: the factorized embedding (rank -> embed), the encoder GRU's input
  projections ``W, W_z, W_r`` (embed -> 3 hidden) and recurrent ``U, U_z, U_r``
  (hidden -> 3 hidden);
- once per pair: the summary ``c = tanh(V h_N)``, the decoder's initial state
  ``tanh(V' c)``, the context terms ``C, C_z, C_r`` (hidden -> 3 hidden) and the deep
  output's ``O_c c`` (hidden -> 2 maxout);
- per target position, end-of-sequence included: the previous word's embedding, the
  decoder GRU's input and recurrent projections, the deep output ``O_h h`` and ``O_y y``
  (-> 2 maxout), and the output layer ``G = G_l G_r`` (maxout -> rank -> vocabulary).

Recurrent products are counted at every step, the first included, as implementations do.
"""

from __future__ import annotations

from typing import Optional, Protocol, Sequence

__all__ = ["flops_per_pair", "flops_per_batch"]


class _Sizes(Protocol):
    src_vocab_size: int
    tgt_vocab_size: int
    embed_dim: int
    embed_rank: Optional[int]
    hidden_size: int
    maxout_units: int
    output_rank: Optional[int]


def _matmul(rows: int, cols: int) -> int:
    """FLOPs of one vector through a ``rows x cols`` matrix: one multiply and one add per entry."""
    return 2 * rows * cols


def _embedding(config: _Sizes) -> int:
    # A full embedding is a table look-up; a factorized one is a look-up of rank numbers
    # followed by a (rank -> embed) product.
    if config.embed_rank is None:
        return 0
    return _matmul(config.embed_rank, config.embed_dim)


def flops_per_pair(config: _Sizes, src_len: int, tgt_len: int) -> int:
    """Matmul FLOPs to score log p(tgt | src) for one pair with teacher forcing.

    ``src_len`` is the number of encoder steps (tokens the encoder reads, including any
    end-of-sequence marker the model appends); ``tgt_len`` is the number of target tokens
    without end-of-sequence, which adds one more scored position.
    """
    if src_len < 0 or tgt_len < 0:
        raise ValueError(f"lengths must be non-negative, got src_len={src_len}, tgt_len={tgt_len}")
    hidden = config.hidden_size
    embed = config.embed_dim
    pre_maxout = 2 * config.maxout_units
    if config.output_rank is None:
        output = _matmul(config.maxout_units, config.tgt_vocab_size)
    else:
        output = _matmul(config.maxout_units, config.output_rank) + _matmul(
            config.output_rank, config.tgt_vocab_size
        )

    per_src_token = (
        _embedding(config)
        + _matmul(embed, 3 * hidden)  # W, W_z, W_r
        + _matmul(hidden, 3 * hidden)  # U, U_z, U_r
    )
    per_pair = (
        _matmul(hidden, hidden)  # c = tanh(V h_N)
        + _matmul(hidden, hidden)  # h'_0 = tanh(V' c)
        + _matmul(hidden, 3 * hidden)  # C, C_z, C_r applied to c
        + _matmul(hidden, pre_maxout)  # O_c c
    )
    per_tgt_position = (
        _embedding(config)  # y_{i-1}
        + _matmul(embed, 3 * hidden)  # W', W'_z, W'_r
        + _matmul(hidden, 3 * hidden)  # U', U'_z, U'_r
        + _matmul(hidden, pre_maxout)  # O_h h'_i
        + _matmul(embed, pre_maxout)  # O_y y_{i-1}
        + output  # G_l G_r s_i
    )
    return src_len * per_src_token + per_pair + (tgt_len + 1) * per_tgt_position


def flops_per_batch(config: _Sizes, src_lens: Sequence[int], tgt_lens: Sequence[int]) -> int:
    """Sum of :func:`flops_per_pair` over pairs with the given lengths (the count is linear in them)."""
    if len(src_lens) != len(tgt_lens):
        raise ValueError(
            f"expected as many target lengths as source lengths, got {len(tgt_lens)} and {len(src_lens)}"
        )
    num_pairs = len(src_lens)
    if num_pairs == 0:
        return 0
    # flops_per_pair(s, t) = a*s + b + c*(t + 1), so the sum needs only the totals.
    base = flops_per_pair(config, 0, 0)
    per_src = flops_per_pair(config, 1, 0) - base
    per_tgt = flops_per_pair(config, 0, 1) - base
    return per_src * sum(src_lens) + base * num_pairs + per_tgt * sum(tgt_lens)
