"""Floating-point operations needed to score one pair, for the benchmark's roofline and the
guide to architectures.

Counts only matrix products, as 2 x multiply-adds: the element-wise work (gates, tanh, maxout
pooling, softmaxes, masks) is a few percent at the paper's sizes and runs at memory speed, not
at the matmul rate the roofline compares against. Each architecture counts its own products
(`flops_per_pair` of its model class, built from the helpers here); for every one the count
equals what PyTorch's FLOP counter sees on an unpadded batch (tests/models/test_flops.py). Recurrent
products are counted at every step, the first included, as implementations do.

Cho et al. (2014), appendix A, for example:

- per source token: the factorized embedding (rank -> embed), the encoder GRU's input
  projections ``W, W_z, W_r`` (embed -> 3 hidden) and recurrent ``U, U_z, U_r``
  (hidden -> 3 hidden), for each layer and direction;
- once per pair: the summary ``c = tanh(V h_N)``, the decoder's initial state
  ``tanh(V' c)``, the context terms ``C, C_z, C_r`` (hidden -> 3 hidden) and the deep
  output's ``O_c c`` (hidden -> 2 maxout);
- per target position, end-of-sequence included: the previous word's embedding, the
  decoder GRU's input and recurrent projections, the deep output ``O_h h`` and ``O_y y``
  (-> 2 maxout), and the output layer ``G = G_l G_r`` (maxout -> rank -> vocabulary).
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["flops_per_pair", "flops_per_batch"]


def matmul(rows: int, cols: int) -> int:
    """FLOPs of one vector through a ``rows x cols`` matrix: one multiply and one add per entry."""
    return 2 * rows * cols


def embedding(config) -> int:
    """One word's embedding: a look-up, then (factored) a rank -> embed product."""
    return 0 if config.embed_rank is None else matmul(config.embed_rank, config.embed_dim)


def encoder_per_token(config) -> int:
    """Each layer and direction: input projection (input -> gates x hidden) and recurrent product."""
    hidden, gates = config.hidden_size, config.gates
    per_direction = [matmul(config.embed_dim, gates * hidden)] + \
        [matmul(config.annotation_size, gates * hidden)] * (config.encoder_layers - 1)
    return embedding(config) + config.directions * sum(
        inputs + matmul(hidden, gates * hidden) for inputs in per_direction)


def output_layer(config, input_size: int) -> int:
    """G = G_l G_r (input -> rank -> vocabulary), or one input -> vocabulary matrix."""
    if config.output_rank is None:
        return matmul(input_size, config.tgt_vocab_size)
    return matmul(input_size, config.output_rank) + matmul(config.output_rank, config.tgt_vocab_size)


def flops_per_pair(config, src_len: int, tgt_len: int) -> int:
    """Matmul FLOPs to score log p(tgt | src) for one pair with teacher forcing.

    ``src_len`` is the number of encoder steps; ``tgt_len`` the number of target tokens without
    end-of-sequence, which adds one more scored position.
    """
    from rescorer.models import get_architecture

    if src_len < 0 or tgt_len < 0:
        raise ValueError(f"lengths must be non-negative, got src_len={src_len}, tgt_len={tgt_len}")
    return get_architecture(config.arch).model_class.flops_per_pair(config, src_len, tgt_len)


def flops_per_batch(config, src_lens: Sequence[int], tgt_lens: Sequence[int]) -> int:
    """Sum of :func:`flops_per_pair` over pairs with the given lengths."""
    if len(src_lens) != len(tgt_lens):
        raise ValueError(
            f"expected as many target lengths as source lengths, got {len(tgt_lens)} and {len(src_lens)}"
        )
    if not len(src_lens):
        return 0
    # Every architecture's count is a polynomial of degree 2 in s and t (a*s + b + c*t + d*s*t,
    # and self-attention's e*s^2 + f*t^2), so six evaluations and the sums of s, t, s*t, s^2 and
    # t^2 give the total without a call per pair.
    f = flops_per_pair
    base = f(config, 0, 0)
    src_square = (f(config, 2, 0) - 2 * f(config, 1, 0) + base) // 2
    tgt_square = (f(config, 0, 2) - 2 * f(config, 0, 1) + base) // 2
    per_src = f(config, 1, 0) - base - src_square
    per_tgt = f(config, 0, 1) - base - tgt_square
    per_both = f(config, 1, 1) - f(config, 1, 0) - f(config, 0, 1) + base
    return (per_src * sum(src_lens) + base * len(src_lens) + per_tgt * sum(tgt_lens)
            + per_both * sum(s * t for s, t in zip(src_lens, tgt_lens))
            + src_square * sum(s * s for s in src_lens) + tgt_square * sum(t * t for t in tgt_lens))
