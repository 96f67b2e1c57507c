"""The CPU output layer's bias-free, max-free softmax sum against a plain log-softmax."""

import pytest
import torch
from torch import nn

from rescorer.models import softmax


def reference(layer: nn.Module, features: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    logits = layer(features).double()
    return torch.log_softmax(logits, dim=1).gather(1, gold.unsqueeze(1)).squeeze(1)


def make_layer(vocab=700, rank=40, dtype=torch.float32, seed=0) -> nn.Linear:
    torch.manual_seed(seed)
    layer = nn.Linear(rank, vocab).to(dtype)
    with torch.no_grad():
        layer.bias.normal_(0, 2.0)
    return layer


# (case, feature scale per row): the scale sets |f| and so the logit bound of each row.
CASES = [
    ("every row safe", [0.5] * 50),
    ("every row over the bound: max-shifted logsumexp", [400.0] * 50),
    ("mixed rows, across sub-blocks and blocks", [0.5, 400.0, 3.0, 1000.0] * 25),
]


@pytest.mark.parametrize("case, scales", CASES, ids=[case for case, _ in CASES])
@pytest.mark.parametrize("block_rows", [7, 64, 512])
def test_equals_log_softmax(case, scales, block_rows):
    layer = make_layer()
    torch.manual_seed(1)
    features = torch.randn(len(scales), 40) * torch.tensor(scales).unsqueeze(1) / 40 ** 0.5
    gold = torch.randint(0, 700, (len(scales),))
    with torch.inference_mode():
        got = softmax.gold_log_probs(layer, features, gold, block_rows)
        want = reference(layer, features, gold)
    assert got.dtype == torch.float32 and got.shape == (len(scales),)
    assert torch.isfinite(got).all()
    # relative to the logits' size: fp32 rounding of logits in the hundreds of thousands
    tolerance = 1e-5 * (1 + want.abs())
    assert ((got.double() - want).abs() <= tolerance).all(), (got.double() - want).abs().max()


def test_rows_over_the_bound_would_overflow_without_the_fallback():
    """The case the bound guards: logits over 88 overflow exp in fp32."""
    layer = make_layer()
    features = torch.full((3, 40), 300.0)
    with torch.inference_mode():
        assert not torch.isfinite(layer(features).exp().sum(1)).all()
        got = softmax.gold_log_probs(layer, features, torch.tensor([0, 1, 2]), 512)
    assert torch.isfinite(got).all()
    assert torch.allclose(got.double(), reference(layer, features, torch.tensor([0, 1, 2])), atol=1e-2)


def test_float64_model_stays_float64():
    layer = make_layer(dtype=torch.float64)
    features = torch.randn(20, 40, dtype=torch.float64)
    gold = torch.randint(0, 700, (20,))
    with torch.inference_mode():
        got = softmax.gold_log_probs(layer, features, gold, 8)
    assert got.dtype == torch.float64
    assert torch.allclose(got, reference(layer, features, gold), atol=1e-10)


def test_bf16_autocast_sums_in_fp32():
    layer = make_layer()
    features = torch.randn(30, 40)
    gold = torch.randint(0, 700, (30,))
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        got = softmax.gold_log_probs(layer, features, gold, 16)
    assert got.dtype == torch.float32
    assert (got.double() - reference(layer, features, gold)).abs().max() < 0.1


def test_other_layers_and_training_take_the_plain_logsumexp():
    """A layer that is not a plain Linear (a quantized one, say) and autograd both get the
    max-shifted logsumexp of the layer's own output; training gets gradients."""
    layer = make_layer()
    wrapped = nn.Sequential(layer)
    features = torch.randn(10, 40, requires_grad=True)
    gold = torch.randint(0, 700, (10,))
    with torch.inference_mode():
        assert torch.allclose(softmax.gold_log_probs(wrapped, features.detach(), gold, 4).double(),
                              reference(layer, features.detach(), gold), atol=1e-5)
    loss = -softmax.gold_log_probs(layer, features, gold, 4).sum()
    loss.backward()
    assert layer.weight.grad is not None and features.grad is not None
