"""Sampled softmax (training only): over every word, with nothing to correct, it is the full
softmax; its gradient estimates the full one's; it never changes what the model scores."""

import numpy as np
import pytest
import torch
from torch import nn

from rescorer.models.softmax import SampledWords, gold_log_probs, sampled_gold_log_probs
from rescorer.training.word_sampler import WordSampler


def layer_and_features(vocab=50, width=8, tokens=30, seed=0):
    torch.manual_seed(seed)
    layer = nn.Linear(width, vocab)
    nn.init.normal_(layer.bias)
    features = torch.randn(tokens, width)
    gold = torch.randint(3, vocab, (tokens,))
    return layer, features, gold


def test_over_every_word_without_correction_it_is_the_full_softmax():
    layer, features, gold = layer_and_features()
    every = SampledWords(torch.arange(50), torch.zeros(50))
    with torch.no_grad():
        full = gold_log_probs(layer, features, gold, block_rows=7)
        sampled = sampled_gold_log_probs(layer, features, gold, every)
    torch.testing.assert_close(sampled, full, rtol=1e-5, atol=1e-5)


def test_a_drawn_gold_word_counts_once_in_its_row():
    layer, features, gold = layer_and_features()
    only_gold = SampledWords(gold[:1].clone(), torch.zeros(50))
    logp = sampled_gold_log_probs(layer, features, gold, only_gold)
    assert logp[0].item() == pytest.approx(0.0, abs=1e-6)  # gold alone in its softmax
    assert (logp[1:][gold[1:] != gold[0]] < 0).all()


def test_the_sampled_gradient_estimates_the_full_one():
    """Averaged over updates, the sampled gradient comes close to the full one, and closer with
    more draws (the estimator is consistent: its bias shrinks as K grows)."""
    layer, features, gold = layer_and_features(vocab=200, tokens=40)
    counts = np.random.default_rng(1).integers(1, 100, 200).astype(float)
    counts[0] = 0

    def gradient(loss_of):
        layer.zero_grad()
        loss_of().backward()
        return layer.weight.grad.clone()

    full = gradient(lambda: -gold_log_probs(layer, features, gold, 64).sum())
    relative = lambda grad: ((grad - full).norm() / full.norm()).item()  # noqa: E731
    errors = {}
    for draws in (20, 150):
        sampler = WordSampler(counts, draws=draws, seed=3, device=torch.device("cpu"))
        estimates = [gradient(lambda: -sampled_gold_log_probs(layer, features, gold, sampler(u)).sum())
                     for u in range(200)]
        errors[draws] = relative(torch.stack(estimates).mean(0))
        assert errors[draws] < np.mean([relative(e) for e in estimates]) / 3  # averaging converges
    assert errors[150] < 0.05 and errors[150] < errors[20] / 3


def test_draws_depend_on_seed_and_update_and_never_pad():
    counts = np.arange(100, dtype=float)
    sampler = WordSampler(counts, draws=500, seed=4, device=torch.device("cpu"))
    again = WordSampler(counts, draws=500, seed=4, device=torch.device("cpu"))
    assert torch.equal(sampler(9).words, again(9).words)
    assert not torch.equal(sampler(9).words, sampler(10).words)
    assert 0 not in sampler(9).words.tolist()  # [PAD]
    expected = torch.exp(sampler.log_expected[1:]).numpy()
    assert (np.diff(expected) >= 0).all() and expected.max() <= 1.0  # commoner words more likely drawn
