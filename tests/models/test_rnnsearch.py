"""rnnsearch against Bahdanau et al. (2015) written out by hand (the reading report's equations)."""

import numpy as np
import pytest
import torch

from rescorer.data.vocabulary import PAD_ID
from rescorer.models import ModelSettings, build_model
from tests.equations import cell_step, embed, linear, log_softmax, maxout, numpy_of, randomize, softmax

SRC, SRC_LENGTHS = torch.tensor([[3, 4, 5], [6, 7, PAD_ID]]), torch.tensor([3, 2])
GOLD = [7, 8, 9]


def tiny(**settings):
    config = ModelSettings.make("rnnsearch", "tiny", **settings).config(11, 13)
    config = config.replace(embed_dim=6, embed_rank=4, hidden_size=5, attention_size=4, maxout_units=3, output_rank=4)
    return randomize(build_model(config).double().eval(), seed=2)


def steps_by_hand(model, row):
    """log p(y_i | y_<i, x) and alpha_i for i = 1..3 of pair `row` (annotations from the encoder)."""
    H, length = model.config.hidden_size, int(SRC_LENGTHS[row])
    with torch.no_grad():
        encoded = model.encoder(model.src_embed(SRC), SRC_LENGTHS)
    annotations = numpy_of(encoded.annotations[row, :length])  # h_j = [->h_j; <-h_j]
    # s_0 = tanh(W_s <-h_1): the last RNN's final state, which is at position 1 when it reads
    # backwards (bidirectional, or a unidirectional encoder of the reversed source), else at N.
    reads_backwards = model.config.bidirectional != model.config.reverse_source
    s = np.tanh(linear(model.decoder_init, annotations[0 if reads_backwards else -1, -H:]))
    state = s if model.config.cell == "gru" else np.concatenate([s, np.zeros(H)])
    prev, results = np.zeros(model.config.embed_dim), []  # e(y_0) = 0
    for word in GOLD:
        s = state[:H]  # s_{i-1}
        energies = np.array([linear(model.attention.energy, np.tanh(
            linear(model.attention.query, s) + linear(model.attention.key, h))) for h in annotations]).ravel()
        alpha = softmax(energies)  # over the real source positions
        c = alpha @ annotations
        t = maxout(linear(model.deep_hidden, s) + linear(model.deep_prev, prev) + linear(model.deep_context, c))
        results.append((log_softmax(linear(model.output_left, linear(model.output_right, t))), alpha))
        state = cell_step(model.decoder, prev, state, extra=linear(model.context_to_gates, c))  # s_i
        prev = embed(model.tgt_embed, word)
    return results


@pytest.mark.parametrize("settings", [dict(cell="gru"), dict(cell="lstm"), dict(bidirectional=False),
                                      dict(bidirectional=False, reverse_source=True),
                                      dict(reverse_source=True, encoder_layers=2)])
def test_three_steps_equal_the_equations(settings):
    model = tiny(**settings)
    got, prev = [], torch.tensor([PAD_ID, PAD_ID])
    with torch.no_grad():
        state = model.start(SRC, SRC_LENGTHS)
        for word in GOLD:
            log_probs, state, attention = model.step(state, prev)
            got.append((numpy_of(log_probs), numpy_of(attention)))
            prev = torch.tensor([word, word])
    for row in range(2):
        for (log_probs, attention), (want, alpha) in zip(got, steps_by_hand(model, row)):
            np.testing.assert_allclose(log_probs[row], want, atol=1e-12)
            np.testing.assert_allclose(attention[row, :len(alpha)], alpha, atol=1e-12)
            assert (attention[row, len(alpha):] == 0).all()


def test_keys_are_computed_once_per_pair():
    model = tiny()
    calls = []
    model.attention.key.register_forward_hook(lambda module, inputs, output: calls.append(inputs[0].shape))
    with torch.no_grad():
        model(SRC, SRC_LENGTHS, torch.tensor([[7, 8, 9], [9, 8, 7]]), torch.tensor([3, 3]))
    assert calls == [torch.Size([2, 3, 10])]  # U_a h_j: one call over all annotations
