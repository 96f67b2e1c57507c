"""The notes' equations written out literally in numpy, one unit at a time where it helps:
the reference the models are checked against (tests/models/test_cells.py, test_rnnsearch.py, ...)."""

import math

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru_step(x, h, W, Wz, Wr, U, Uz, Ur, b, bz, br, extra=(0.0, 0.0, 0.0)):
    """Cho et al. Appendix A, unit j at a time; `extra` = (C_z c, C_r c, C c) in the decoder."""
    Cz_c, Cr_c, C_c = (np.broadcast_to(np.asarray(e, dtype=float), h.shape) for e in extra)
    z = np.array([sigmoid((Wz @ x)[j] + (Uz @ h)[j] + bz[j] + Cz_c[j]) for j in range(len(h))])
    r = np.array([sigmoid((Wr @ x)[j] + (Ur @ h)[j] + br[j] + Cr_c[j]) for j in range(len(h))])
    h_new = np.zeros_like(h)
    for j in range(len(h)):
        candidate = math.tanh((W @ x)[j] + (U @ (r * h))[j] + b[j] + C_c[j])
        h_new[j] = z[j] * h[j] + (1 - z[j]) * candidate
    return h_new


def lstm_step(x, h, c, W, U, b, extra=0.0):
    """The lecture notes' LSTM: W, U, b stacked [i, f, o, c~]; `extra` adds to every gate."""
    H = len(h)
    pre = W @ x + U @ h + b + extra
    i, f, o = sigmoid(pre[:H]), sigmoid(pre[H:2 * H]), sigmoid(pre[2 * H:3 * H])
    c_new = f * c + i * np.tanh(pre[3 * H:])
    return o * np.tanh(c_new), c_new


def log_softmax(x):
    x = x - x.max()
    return x - math.log(np.exp(x).sum())


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def maxout(x):
    return x.reshape(-1, 2).max(axis=1)


def numpy_of(module_or_tensor):
    return module_or_tensor.detach().double().numpy()


def gru_weights(layer):
    """W, Wz, Wr, U, Uz, Ur, b, bz, br of a GRULayer (paper form), as numpy."""
    H = layer.hidden_size
    W_in, b_in = numpy_of(layer.input_proj.weight), numpy_of(layer.input_proj.bias)
    Uz, Ur, U = (numpy_of(m) for m in layer.recurrent_blocks())
    return dict(Wz=W_in[:H], Wr=W_in[H:2 * H], W=W_in[2 * H:], bz=b_in[:H], br=b_in[H:2 * H],
                b=b_in[2 * H:], Uz=Uz, Ur=Ur, U=U)


def cell_step(layer, x, state, extra=None):
    """One step of a GRULayer or LSTMLayer by the equations: state is h (GRU) or [h; c] (LSTM)."""
    H = layer.hidden_size
    if layer.num_gates == 3:
        extra = (0.0, 0.0, 0.0) if extra is None else (extra[:H], extra[H:2 * H], extra[2 * H:])
        return gru_step(x, state, **gru_weights(layer), extra=extra)
    h, c = lstm_step(x, state[:H], state[H:], numpy_of(layer.input_proj.weight), numpy_of(layer.recurrent.weight),
                     numpy_of(layer.input_proj.bias), 0.0 if extra is None else extra)
    return np.concatenate([h, c])


def randomize(module, std=0.5, seed=0):
    """Weights far from the N(0, 0.01) initialisation, so every term matters."""
    import torch

    torch.manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0, std)
    return module


def linear(layer, x):
    """W x + b of an nn.Linear, in numpy."""
    return numpy_of(layer.weight) @ x + (numpy_of(layer.bias) if layer.bias is not None else 0.0)


def embed(embedding, word):
    """e(word) of a FactoredEmbedding: the table row, through the rank projection if any."""
    vector = numpy_of(embedding.table.weight)[word]
    return numpy_of(embedding.project.weight) @ vector if embedding.project is not None else vector
