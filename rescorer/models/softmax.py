"""log p(gold word) from the last layer's features: logit[gold] - logsumexp(logits), fast on the CPU.

On the CPU the softmax over a 15k-word vocabulary cost as much as a third of the output
layer's matrix product: `addmm` first copies the bias into every row, and `logsumexp` makes
four more passes over logits too large for the cache (max, subtract, exp, sum). Here:

- the bias leaves the product: sum_j exp(f.w_j + b_j) = sum_j exp(f.w_j) exp(b_j), so the
  sum is one matrix-vector product exp(F W^T) exp(b), after one in-place exp;
- no row maximum is needed when no logit can overflow: |f.w_j + b_j| <= |f| max_j|w_j| +
  max_j|b_j| (Cauchy-Schwarz), and a row whose bound is at most SAFE_LOGIT (75) has every
  exp(logit) within [e^-75, e^75], a normal float, and their sum below 15k e^75 << FLT_MAX.
  Rows over the bound (rare: 0.2% of one trained model's positions, none of four others)
  take the usual max-shifted logsumexp.

The result equals the max-shifted one to float rounding (a few 1e-6 nats). Training (autograd)
and other devices keep the usual logsumexp: on a GPU these passes are cheap next to the product.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["SAFE_LOGIT", "gold_log_probs", "smoothed_log_probs"]

SAFE_LOGIT = 75.0
SUB_BLOCK_ROWS = 32  # exp and sum of 32 x 15k fp32 logits (1.9 MB) while they are in L2


def full_precision(values: torch.Tensor) -> torch.Tensor:
    """fp32 for bf16/fp16 values (softmaxes under autocast); fp32 and fp64 as they are."""
    return values if values.dtype in (torch.float32, torch.float64) else values.float()


def gold_log_probs(layer: nn.Module, features: torch.Tensor, gold: torch.Tensor,
                   block_rows: int) -> torch.Tensor:
    """log p(gold) for features (tokens, in) through `layer` (in -> vocab), `block_rows` rows of
    logits at a time, so that the (tokens, vocab) logits never exist at once. Returns (tokens,)
    in fp32 (fp64 for an fp64 model)."""
    plain = (type(layer) is nn.Linear and type(layer.weight) is nn.Parameter and layer.bias is not None
             and features.device.type == "cpu"
             and not torch.is_grad_enabled())  # training keeps the differentiable logsumexp
    if plain:
        weight, bias = layer.weight, layer.bias
        weight_bound = float(weight.detach().float().norm(dim=1).max())
        bias_bound = float(bias.detach().float().abs().max())
        exp_bias = full_precision(bias.detach()).exp()  # (vocab,)
    pieces = []
    for start in range(0, features.size(0), block_rows):
        block, block_gold = features[start:start + block_rows], gold[start:start + block_rows]
        if plain:
            pieces.append(_bounded_block(block, block_gold, weight, bias, exp_bias,
                                         weight_bound, bias_bound))
        else:
            logits = full_precision(layer(block))  # (rows, vocab)
            pieces.append(logits.gather(1, block_gold.unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=1))
    return torch.cat(pieces) if pieces else features.new_zeros(0, dtype=torch.float32)


def smoothed_log_probs(layer: nn.Module, features: torch.Tensor, gold: torch.Tensor, block_rows: int,
                       smoothing: float) -> torch.Tensor:
    """(1 - eps) log p(gold) + eps * mean over the vocabulary of log p(w), per row: minus the
    label-smoothed loss (Szegedy et al. 2016), whose target puts eps uniformly over the whole
    output layer. One pass over each block of logits, as `gold_log_probs`' differentiable path:
    both terms share the row's logsumexp. Returns (tokens,) in fp32 (fp64 for an fp64 model)."""
    pieces = []
    for start in range(0, features.size(0), block_rows):
        logits = full_precision(layer(features[start:start + block_rows]))  # (rows, vocab)
        gold_logits = logits.gather(1, gold[start:start + block_rows].unsqueeze(1)).squeeze(1)
        pieces.append((1.0 - smoothing) * gold_logits + smoothing * logits.mean(dim=1)
                      - torch.logsumexp(logits, dim=1))
    return torch.cat(pieces) if pieces else features.new_zeros(0, dtype=torch.float32)


def _bounded_block(features: torch.Tensor, gold: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                   exp_bias: torch.Tensor, weight_bound: float, bias_bound: float) -> torch.Tensor:
    products = full_precision(F.linear(features, weight))  # (rows, vocab): f.w_j, no bias yet
    picked = products.gather(1, gold.unsqueeze(1)).squeeze(1) + full_precision(bias[gold])
    bound = full_precision(features).norm(dim=1) * weight_bound + bias_bound  # (rows,)
    unsafe = bound > SAFE_LOGIT
    shifted = None
    if bool(unsafe.any()):  # before the in-place exp below
        rows = unsafe.nonzero().squeeze(1)
        shifted = (rows, torch.logsumexp(products[rows] + full_precision(bias), dim=1))
    sums = products.new_empty(products.size(0))
    for start in range(0, products.size(0), SUB_BLOCK_ROWS):
        sub = products[start:start + SUB_BLOCK_ROWS]
        torch.mv(sub.exp_(), exp_bias, out=sums[start:start + SUB_BLOCK_ROWS])
    log_sums = sums.log_()
    if shifted is not None:
        log_sums[shifted[0]] = shifted[1]
    return picked - log_sums


class SampledWords:
    """A training batch's shared negative words for sampled softmax (Jean et al. 2015, after
    Bengio and Senecal 2008): `words` (K,) drawn from a proposal Q over the vocabulary, and
    `log_expected` (vocab,), log of each word's expected count among the K draws, which is
    subtracted from its logit so that the sampled loss estimates the full softmax's."""

    def __init__(self, words: torch.Tensor, log_expected: torch.Tensor):
        self.words, self.log_expected = words, log_expected


def sampled_gold_log_probs(layer: nn.Linear, features: torch.Tensor, gold: torch.Tensor,
                           sampled: SampledWords) -> torch.Tensor:
    """Sampled-softmax log p(gold) for features (tokens, in): the softmax runs over the gold word
    and the K sampled words, each logit less its log expected count; a sampled word that is the
    row's gold word is left out of that row (an "accidental hit"). Training only: its gradient
    estimates the full softmax's at K/vocab of the cost; perplexity is always measured in full."""
    weight, bias = layer.weight, layer.bias
    words = sampled.words
    correction = sampled.log_expected.to(features.dtype)
    # Rows by F.embedding, whose backward adds in a fixed order: weight[gold] (gold words repeat)
    # would add with atomics on several CPU threads, in an order that depends on timing.
    gold_bias = F.embedding(gold, bias.unsqueeze(1)).squeeze(1)
    gold_logit = (features * F.embedding(gold, weight)).sum(dim=1) + gold_bias - correction[gold]  # (tokens,)
    logits = F.linear(features, weight.index_select(0, words),
                      bias.index_select(0, words) - correction[words])  # (tokens, K)
    logits = logits.masked_fill(words.unsqueeze(0) == gold.unsqueeze(1), float("-inf"))
    gold_logit, logits = full_precision(gold_logit), full_precision(logits)
    everything = torch.cat([gold_logit.unsqueeze(1), logits], dim=1)
    return gold_logit - torch.logsumexp(everything, dim=1)
