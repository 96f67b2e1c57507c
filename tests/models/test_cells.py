"""GRU and LSTM layers against the notes' equations (Cho et al. Appendix A; the lecture notes)."""

import math

import numpy as np
import pytest
import torch

from rescorer.models.cells import GRULayer, LSTMLayer, build_layer
from tests.equations import cell_step, gru_weights, numpy_of, randomize, sigmoid


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


def test_lstm_step_matches_hand_computed_value():
    # One unit: W_i = W_f = W_o = 0, W_c = 1, U = 0, no bias: i = f = o = 0.5, c~ = tanh(x).
    layer = LSTMLayer(input_size=1, hidden_size=1)
    with torch.no_grad():
        layer.input_proj.weight.copy_(torch.tensor([[0.0], [0.0], [0.0], [1.0]]))
        layer.input_proj.bias.zero_()
        layer.recurrent.weight.zero_()
    x, h, c = 0.5, 0.4, -0.3
    c_new = 0.5 * c + 0.5 * math.tanh(0.5)
    state = layer.step(layer.input_proj(torch.tensor([[x]])), torch.tensor([[h, c]]))
    assert state[0].tolist() == pytest.approx([0.5 * math.tanh(c_new), c_new], abs=1e-7)


@pytest.mark.parametrize("cell, seed", [("gru", 0), ("gru", 1), ("lstm", 2), ("lstm", 3)])
def test_step_equals_the_equations(cell, seed):
    layer = randomize(build_layer(cell, 4, 3).double(), std=0.7, seed=seed)
    x = torch.randn(1, 4, dtype=torch.double)
    state = torch.randn(1, layer.state_size, dtype=torch.double)
    got = layer.step(layer.input_proj(x), state)[0].detach().numpy()
    np.testing.assert_allclose(got, cell_step(layer, x[0].numpy(), state[0].numpy()), atol=1e-12)


def test_cudnn_form_applies_reset_after_recurrent_matmul():
    layer = randomize(GRULayer(input_size=2, hidden_size=3, reset_after=True).double(), std=0.7, seed=4)
    x, h = torch.randn(1, 2, dtype=torch.double), torch.randn(1, 3, dtype=torch.double)
    w = gru_weights(layer)
    b_hn, b_hzr = numpy_of(layer.recurrent.bias)[6:], numpy_of(layer.recurrent.bias)[:6]
    xn, hn = x[0].numpy(), h[0].numpy()
    z = sigmoid(w["Wz"] @ xn + w["bz"] + w["Uz"] @ hn + b_hzr[:3])
    r = sigmoid(w["Wr"] @ xn + w["br"] + w["Ur"] @ hn + b_hzr[3:])
    candidate = np.tanh(w["W"] @ xn + w["b"] + r * (w["U"] @ hn + b_hn))
    want = z * hn + (1 - z) * candidate
    np.testing.assert_allclose(layer.step(layer.input_proj(x), h)[0].detach().numpy(), want, atol=1e-12)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_run_carries_the_state_past_each_length(cell):
    layer = randomize(build_layer(cell, 2, 3).double(), seed=5)
    inputs = layer.input_proj(torch.randn(2, 4, 2, dtype=torch.double))
    start = layer.initial_state(torch.zeros(2, 3, dtype=torch.double))
    outputs, final = layer.run(inputs, torch.tensor([4, 2]), start)
    state = start[1]
    for t in range(2):  # the short sequence, step by step
        state = layer.step(inputs[1:2, t], state.unsqueeze(0))[0]
    torch.testing.assert_close(final[1], state)
    torch.testing.assert_close(outputs[1, 2], outputs[1, 1])  # carried, not updated by padding
    torch.testing.assert_close(outputs[1, 3], layer.output(state))
    assert not torch.allclose(outputs[0, 3], outputs[0, 1])


def test_lstm_memory_starts_at_zero_and_is_not_an_output():
    layer = LSTMLayer(2, 3)
    state = layer.initial_state(torch.ones(1, 3))
    assert state.tolist() == [[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]]
    assert layer.output(state).tolist() == [[1.0, 1.0, 1.0]]
    assert [tuple(b.shape) for b in layer.recurrent_blocks()] == [(3, 3)] * 4
