"""Attention weights against Bahdanau's and Luong's equations: sums, padding, local windows."""

import math

import numpy as np
import pytest
import torch

from rescorer.models.attention import AdditiveAttention, LuongAttention, masked_softmax, source_mask
from tests.equations import numpy_of, randomize, softmax

H, A = 4, 6  # decoder width, annotation width
LENGTHS = [5, 3, 1]


@pytest.fixture()
def inputs():
    torch.manual_seed(0)
    annotations = torch.randn(3, 5, A, dtype=torch.double)  # positions past each length are padding
    queries = torch.randn(3, 4, H, dtype=torch.double)  # 4 decoder steps
    return annotations, queries, torch.tensor(LENGTHS)


def scores_by_hand(kind, attention, query, annotation):
    if kind == "dot":
        return float(query @ annotation)
    if kind == "general":
        return float(query @ (numpy_of(attention.score.key.weight) @ annotation))
    module = attention if isinstance(attention, AdditiveAttention) else attention.score
    hidden = np.tanh(numpy_of(module.query.weight) @ query + numpy_of(module.key.weight) @ annotation)
    return float(numpy_of(module.energy.weight)[0] @ hidden)


def test_additive_scores_are_v_tanh_of_query_and_key(inputs):
    annotations, queries, _ = inputs
    attention = randomize(AdditiveAttention(H, A, 5).double(), seed=1)
    got = attention.scores(queries, attention.keys(annotations))
    for b in range(3):
        for t in range(4):
            want = [scores_by_hand("concat", attention, numpy_of(queries[b, t]), numpy_of(annotations[b, s]))
                    for s in range(5)]
            np.testing.assert_allclose(numpy_of(got[b, t]), want, atol=1e-12)


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_global_weights_are_a_softmax_over_real_positions(inputs, score):
    annotations, queries, lengths = inputs
    if score == "dot":  # dot needs the decoder as wide as the annotations
        queries = torch.randn(3, 4, A, dtype=torch.double)
    attention = randomize(LuongAttention(score, "global", None, queries.size(-1), A, 5).double(), seed=2)
    weights = attention.weights(queries, attention.keys(annotations), lengths)
    assert weights.shape == (3, 4, 5)
    for b, length in enumerate(LENGTHS):
        for t in range(4):
            scores = np.array([scores_by_hand(score, attention, numpy_of(queries[b, t]), numpy_of(annotations[b, s]))
                               for s in range(length)])
            np.testing.assert_allclose(numpy_of(weights[b, t, :length]), softmax(scores), atol=1e-12)
            assert (weights[b, t, length:] == 0).all()  # exactly 0 on padding
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, dtype=torch.double))


@pytest.mark.parametrize("window", [1, 2])
def test_local_m_window_centred_on_the_target_position(inputs, window):
    annotations, queries, lengths = inputs
    attention = randomize(LuongAttention("general", "local-m", window, H, A).double(), seed=3)
    keys = attention.keys(annotations)
    weights = attention.weights(queries, keys, lengths, first_step=0)
    for b, length in enumerate(LENGTHS):
        for t in range(4):
            centre = min(t, length - 1)  # p_t = t, kept inside the source
            inside = [s for s in range(5) if abs(s - centre) <= window and s < length]
            scores = np.array([scores_by_hand("general", attention, numpy_of(queries[b, t]), numpy_of(annotations[b, s]))
                               for s in inside])
            np.testing.assert_allclose(numpy_of(weights[b, t, inside]), softmax(scores), atol=1e-12)
            outside = [s for s in range(5) if s not in inside]
            assert (weights[b, t, outside] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, dtype=torch.double))
    # One step at a time (first_step) gives the same windows as all steps at once.
    for t in range(4):
        torch.testing.assert_close(attention.weights(queries[:, t:t + 1], keys, lengths, first_step=t)[:, 0],
                                   weights[:, t])


def test_local_p_predicts_the_centre_and_applies_the_gaussian(inputs):
    annotations, queries, lengths = inputs
    window = 2
    attention = randomize(LuongAttention("general", "local-p", window, H, A).double(), seed=4)
    weights = attention.weights(queries, attention.keys(annotations), lengths)
    W_p, v_p = numpy_of(attention.position_hidden.weight), numpy_of(attention.position_out.weight)[0]
    sigma = window / 2
    for b, length in enumerate(LENGTHS):
        for t in range(4):
            h = numpy_of(queries[b, t])
            centre = length / (1 + math.exp(-(v_p @ np.tanh(W_p @ h))))  # S sigmoid(v_p^T tanh(W_p h_t))
            inside = [s for s in range(length) if abs(s - centre) <= window]
            scores = np.array([scores_by_hand("general", attention, h, numpy_of(annotations[b, s])) for s in inside])
            gaussian = np.exp(-(np.array(inside) - centre) ** 2 / (2 * sigma ** 2))
            np.testing.assert_allclose(numpy_of(weights[b, t, inside]), softmax(scores) * gaussian, atol=1e-12)
            assert (weights[b, t, [s for s in range(5) if s not in inside]] == 0).all()
    assert (weights.sum(-1) <= 1 + 1e-12).all()  # not renormalised, as in the paper


def test_masked_softmax_and_source_mask():
    mask = source_mask(torch.tensor([2, 3]), 4)
    assert mask.tolist() == [[True, True, False, False], [True, True, True, False]]
    weights = masked_softmax(torch.tensor([[1.0, 1.0, 50.0, 50.0], [0.0, 0.0, 0.0, 9.0]]), mask)
    assert weights.tolist() == [[0.5, 0.5, 0.0, 0.0], pytest.approx([1 / 3, 1 / 3, 1 / 3, 0.0])]


def test_dot_score_refuses_unequal_sizes():
    with pytest.raises(ValueError, match="equal sizes"):
        LuongAttention("dot", "global", None, 4, 8)
