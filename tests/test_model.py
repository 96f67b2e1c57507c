"""The encoder-decoder against the equations of Cho et al. (2014), Appendix A."""

import math

import numpy as np
import pytest
import torch

from rescorer.model import PRESETS, EncoderDecoder, GRULayer, ModelConfig, count_parameters
from rescorer.vocabulary import EOS_ID, PAD_ID

TINY = ModelConfig(src_vocab_size=11, tgt_vocab_size=13, embed_dim=6, embed_rank=4, hidden_size=5,
                   maxout_units=3, output_rank=4)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def paper_gru_step(x, h, W, Wz, Wr, U, Uz, Ur, b, bz, br, extra=(0.0, 0.0, 0.0)):
    """Appendix A written out literally, one unit j at a time."""
    Cz_c, Cr_c, C_c = extra
    h_new = np.zeros_like(h)
    z = np.array([sigmoid((Wz @ x)[j] + (Uz @ h)[j] + bz[j] + np.atleast_1d(Cz_c)[j % np.size(Cz_c)])
                  for j in range(len(h))])
    r = np.array([sigmoid((Wr @ x)[j] + (Ur @ h)[j] + br[j] + np.atleast_1d(Cr_c)[j % np.size(Cr_c)])
                  for j in range(len(h))])
    for j in range(len(h)):
        candidate = math.tanh((W @ x)[j] + (U @ (r * h))[j] + b[j] + np.atleast_1d(C_c)[j % np.size(C_c)])
        h_new[j] = z[j] * h[j] + (1 - z[j]) * candidate
    return h_new


def layer_weights(layer: GRULayer):
    H = layer.hidden_size
    W_in = layer.input_proj.weight.detach().double().numpy()
    b_in = layer.input_proj.bias.detach().double().numpy()
    Uz, Ur, U = (m.detach().double().numpy() for m in layer.recurrent_blocks())
    return dict(Wz=W_in[:H], Wr=W_in[H:2 * H], W=W_in[2 * H:], bz=b_in[:H], br=b_in[H:2 * H],
                b=b_in[2 * H:], Uz=Uz, Ur=Ur, U=U)


def test_gru_step_matches_hand_computed_value():
    # One unit, one input: every number below is checked by hand.
    layer = GRULayer(input_size=1, hidden_size=1, reset_after=False)
    with torch.no_grad():
        layer.input_proj.weight.copy_(torch.tensor([[0.0], [0.0], [1.0]]))  # Wz=0, Wr=0, W=1
        layer.input_proj.bias.zero_()
        layer.recurrent_gates.weight.copy_(torch.tensor([[0.0], [0.0]]))  # Uz=0, Ur=0
        layer.recurrent_cand.weight.copy_(torch.tensor([[2.0]]))  # U=2
    x, h = 0.5, 0.4
    # z = r = sigmoid(0) = 0.5; candidate = tanh(1*0.5 + 2*(0.5*0.4)) = tanh(0.9)
    expected = 0.5 * h + 0.5 * math.tanh(0.9)
    inputs = layer.input_proj(torch.tensor([[x]]))
    assert layer.step(inputs, torch.tensor([[h]])).item() == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_encoder_gru_step_equals_paper_equations(seed):
    torch.manual_seed(seed)
    layer = GRULayer(input_size=4, hidden_size=3, reset_after=False).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0, 0.7)
    x, h = torch.randn(1, 4, dtype=torch.double), torch.randn(1, 3, dtype=torch.double)
    got = layer.step(layer.input_proj(x), h)[0].detach().numpy()
    want = paper_gru_step(x[0].numpy(), h[0].numpy(), **layer_weights(layer))
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_decoder_step_sees_context_in_every_gate():
    torch.manual_seed(3)
    model = EncoderDecoder(TINY).double()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.5)
    H = TINY.hidden_size
    context = torch.randn(1, H, dtype=torch.double)
    prev_word = torch.randn(1, TINY.embed_dim, dtype=torch.double)
    h = torch.randn(1, H, dtype=torch.double)
    inputs = model.decoder.input_proj(prev_word) + model.context_to_gates(context)
    got = model.decoder.step(inputs, h)[0].detach().numpy()
    C = model.context_to_gates.weight.detach().numpy()
    c = context[0].numpy()
    extra = (C[:H] @ c, C[H:2 * H] @ c, C[2 * H:] @ c)
    want = paper_gru_step(prev_word[0].numpy(), h[0].numpy(), **layer_weights(model.decoder), extra=extra)
    np.testing.assert_allclose(got, want, atol=1e-12)
    # Without the context the step differs: c really enters the gates.
    assert not np.allclose(model.decoder.step(model.decoder.input_proj(prev_word), h)[0].detach().numpy(), want)


def test_cudnn_form_applies_reset_after_recurrent_matmul():
    torch.manual_seed(4)
    layer = GRULayer(input_size=2, hidden_size=3, reset_after=True).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0, 0.7)
    x, h = torch.randn(1, 2, dtype=torch.double), torch.randn(1, 3, dtype=torch.double)
    w = layer_weights(layer)
    b_hn = layer.recurrent.bias.detach().numpy()[6:]
    b_hzr = layer.recurrent.bias.detach().numpy()[:6]
    xn, hn = x[0].numpy(), h[0].numpy()
    z = sigmoid(w["Wz"] @ xn + w["bz"] + w["Uz"] @ hn + b_hzr[:3])
    r = sigmoid(w["Wr"] @ xn + w["br"] + w["Ur"] @ hn + b_hzr[3:])
    candidate = np.tanh(w["W"] @ xn + w["b"] + r * (w["U"] @ hn + b_hn))
    want = z * hn + (1 - z) * candidate
    np.testing.assert_allclose(layer.step(layer.input_proj(x), h)[0].detach().numpy(), want, atol=1e-12)


def full_distributions(model, src, src_lengths, tgt, tgt_lengths):
    """log p(. | y_<t, x) over the whole vocabulary at every target step: (batch, steps, vocab)."""
    batch, tgt_len = tgt.shape
    tgt_in = torch.cat([tgt.new_full((batch, 1), PAD_ID), tgt], dim=1)
    context = model.encode(src, src_lengths)
    states, prev_embed = model.decoder_states(context, tgt_in, tgt_lengths + 1)
    flat_states = states.reshape(-1, states.size(-1))
    flat_prev = prev_embed.reshape(-1, prev_embed.size(-1))
    context_part = model.deep_context(context).repeat_interleave(tgt_len + 1, dim=0)
    logits = model.output_logits(flat_states, flat_prev, context_part)
    return torch.log_softmax(logits, dim=-1).view(batch, tgt_len + 1, -1)


def test_token_probabilities_sum_to_one_and_logs_sum_to_pair_score():
    torch.manual_seed(5)
    model = EncoderDecoder(TINY).double().eval()
    src = torch.tensor([[3, 4, 5], [6, 7, PAD_ID]])
    src_lengths = torch.tensor([3, 2])
    tgt = torch.tensor([[8, 9], [10, PAD_ID]])
    tgt_lengths = torch.tensor([2, 1])
    with torch.no_grad():
        dists = full_distributions(model, src, src_lengths, tgt, tgt_lengths)
        np.testing.assert_allclose(dists.exp().sum(-1).numpy(), 1.0, atol=1e-12)
        gold = [[8, 9, EOS_ID], [10, EOS_ID]]
        want = [sum(dists[b, t, word].item() for t, word in enumerate(words)) for b, words in enumerate(gold)]
        per_token = model.token_log_probs(src, src_lengths, tgt, tgt_lengths)
        np.testing.assert_allclose(model(src, src_lengths, tgt, tgt_lengths).numpy(), want, atol=1e-10)
        # Padding positions contribute nothing; the [EOS] step does.
        assert per_token[1, 2].item() == 0.0
        assert per_token[1, 1].item() == pytest.approx(dists[1, 1, EOS_ID].item(), abs=1e-12)


def test_first_decoder_input_is_the_zero_vector():
    torch.manual_seed(6)
    model = EncoderDecoder(TINY).eval()
    src, src_lengths = torch.tensor([[3, 4]]), torch.tensor([2])
    tgt, tgt_lengths = torch.tensor([[5]]), torch.tensor([1])
    with torch.no_grad():
        before = model(src, src_lengths, tgt, tgt_lengths)
        model.tgt_embed.table.weight[PAD_ID].normal_()  # whatever y_0's id points at
        assert model(src, src_lengths, tgt, tgt_lengths).item() == pytest.approx(before.item(), abs=1e-6)


def test_initialisation_follows_appendix_a():
    torch.manual_seed(7)
    model = EncoderDecoder(ModelConfig(200, 300, embed_dim=40, embed_rank=10, hidden_size=64,
                                       maxout_units=20, output_rank=16))
    for block in model.encoder.recurrent_blocks() + model.decoder.recurrent_blocks():
        np.testing.assert_allclose((block @ block.T).detach().numpy(), np.eye(64), atol=1e-5)
    assert float(model.deep_hidden.weight.detach().std()) == pytest.approx(0.01, rel=0.1)
    assert float(model.output_left.weight.detach().std()) == pytest.approx(0.01, rel=0.1)
    assert all(float(p.abs().max()) == 0.0 for n, p in model.named_parameters() if n.endswith("bias"))


def test_paper_preset_sizes():
    sizes = {k: v for k, v in PRESETS["paper"].items() if k != "shortlist_size"}
    model = EncoderDecoder(ModelConfig(15003, 15003, **sizes))
    assert model.src_embed.table.weight.shape == (15003, 100)
    assert model.src_embed.project.weight.shape == (500, 100)
    assert model.encoder.recurrent_gates.weight.shape == (2000, 1000)
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
