"""cho2014 against the equations of Cho et al. (2014), Appendix A, written out by hand."""

import numpy as np
import pytest
import torch

from rescorer.data.vocabulary import PAD_ID
from rescorer.models import ModelConfig, ModelSettings, build_model, count_parameters
from tests.equations import cell_step, embed, linear, log_softmax, maxout, numpy_of, randomize

SRC, SRC_LENGTHS = torch.tensor([[3, 4, 5], [6, PAD_ID, PAD_ID]]), torch.tensor([3, 1])
GOLD = [7, 8]  # y_1, y_2 of both pairs


def tiny(**settings):
    config = ModelSettings.make("cho2014", "tiny", **settings).config(11, 13)
    return randomize(build_model(config.replace(embed_dim=6, embed_rank=4, hidden_size=5, maxout_units=3,
                                                output_rank=4)).double().eval(), seed=1)


def steps_by_hand(model, row):
    """log p(. | y_<t, x) for t = 1, 2 of pair `row`, from Appendix A (h_N from the encoder)."""
    with torch.no_grad():
        h_N = numpy_of(model.encoder(model.src_embed(SRC), SRC_LENGTHS).final_outputs[-1][row])
    c = np.tanh(linear(model.context, h_N))  # c = tanh(V h_N)
    hidden = np.tanh(linear(model.decoder_init, c))  # h'_0 = tanh(V' c)
    state = hidden if model.config.cell == "gru" else np.concatenate([hidden, np.zeros_like(hidden)])
    distributions, prev = [], np.zeros(model.config.embed_dim)  # e(y_0) = 0
    for word in GOLD:
        state = cell_step(model.decoder, prev, state, extra=linear(model.context_to_gates, c))  # C c in every gate
        h = state[:model.config.hidden_size]
        s = maxout(linear(model.deep_hidden, h) + linear(model.deep_prev, prev) + linear(model.deep_context, c))
        distributions.append(log_softmax(linear(model.output_left, linear(model.output_right, s))))
        prev = embed(model.tgt_embed, word)
    return distributions


@pytest.mark.parametrize("settings", [dict(cell="gru"), dict(cell="lstm"), dict(bidirectional=True),
                                      dict(cell="lstm", encoder_layers=2, reverse_source=True)])
def test_two_decoder_steps_equal_appendix_a(settings):
    model = tiny(**settings)
    with torch.no_grad():
        state = model.start(SRC, SRC_LENGTHS)
        prev = torch.tensor([PAD_ID, PAD_ID])
        got = []
        for word in GOLD:
            log_probs, state, attention = model.step(state, prev)
            got.append(numpy_of(log_probs))
            prev = torch.tensor([word, word])
    assert attention is None
    for row in range(2):
        for t, want in enumerate(steps_by_hand(model, row)):
            np.testing.assert_allclose(got[t][row], want, atol=1e-12)


def test_context_really_enters_every_gate():
    model = tiny()
    with torch.no_grad():
        before = model(SRC, SRC_LENGTHS, torch.tensor([[7], [8]]), torch.tensor([1, 1]))
        model.context_to_gates.weight.zero_()
        after = model(SRC, SRC_LENGTHS, torch.tensor([[7], [8]]), torch.tensor([1, 1]))
    assert (before - after).abs().min() > 1e-6


def test_initialisation_follows_appendix_a():
    torch.manual_seed(7)
    model = build_model(ModelConfig(200, 300, embed_dim=40, embed_rank=10, hidden_size=64,
                                    maxout_units=20, output_rank=16))
    blocks = [block for layer in model.encoder.layers() + [model.decoder] for block in layer.recurrent_blocks()]
    assert len(blocks) == 6
    for block in blocks:
        np.testing.assert_allclose((block @ block.T).detach().numpy(), np.eye(64), atol=1e-5)
    assert float(model.deep_hidden.weight.detach().std()) == pytest.approx(0.01, rel=0.1)
    assert float(model.output_left.weight.detach().std()) == pytest.approx(0.01, rel=0.1)
    assert all(float(p.detach().abs().max()) == 0.0 for n, p in model.named_parameters() if n.endswith("bias"))
    assert float(model.src_embed.table.weight.detach()[PAD_ID].abs().max()) == 0.0


def test_paper_preset_sizes():
    model = build_model(ModelSettings.make("cho2014", "paper").config(15003, 15003))
    assert model.src_embed.table.weight.shape == (15003, 100)
    assert model.src_embed.project.weight.shape == (500, 100)
    assert model.encoder.forward_layers[0].recurrent_gates.weight.shape == (2000, 1000)
    assert model.deep_hidden.weight.shape == (1000, 1000)  # 500 maxout units, pool 2
    assert model.output_right.weight.shape == (500, 500)
    assert model.output_left.weight.shape == (15003, 500)
    V, E, R, H = 15003, 500, 100, 1000
    embeddings = 2 * (V * R + R * E)
    grus = 2 * (E * 3 * H + 3 * H + 3 * H * H)
    context = (H * H + H) * 2 + 3 * H * H  # V, V', [C_z; C_r; C]
    deep_output = (H * 2 * E + 2 * E) + E * 2 * E + H * 2 * E  # O_h, O_y, O_c
    softmax = E * E + V * E + V  # G_r, G_l and its bias
    assert count_parameters(model) == embeddings + grus + context + deep_output + softmax


def test_parameter_names_are_those_of_version_1_files_but_the_encoder():
    names = set(build_model(ModelConfig(20, 20, 8, 4, 6, 3, 4)).state_dict())
    assert {"src_embed.table.weight", "context.weight", "decoder_init.bias", "decoder.input_proj.weight",
            "decoder.recurrent_gates.weight", "decoder.recurrent_cand.weight", "context_to_gates.weight",
            "deep_hidden.weight", "deep_prev.weight", "deep_context.weight", "output_right.weight",
            "output_left.bias", "encoder.forward_layers.0.recurrent_cand.weight"} <= names
