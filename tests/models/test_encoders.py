"""Encoders: stacked, bidirectional and reversed-source annotations against step-by-step runs."""

import numpy as np
import pytest
import torch

from rescorer.models.config import ModelConfig
from rescorer.models.encoders import RecurrentEncoder, reverse_padded
from tests.equations import cell_step, numpy_of, randomize


def encoder_of(cell="gru", layers=1, bidirectional=False, reverse_source=False):
    """An encoder over embeddings of 3 with 4 hidden units."""
    return RecurrentEncoder(ModelConfig(10, 10, embed_dim=3, hidden_size=4, cell=cell, encoder_layers=layers,
                                        bidirectional=bidirectional, reverse_source=reverse_source))


@pytest.mark.parametrize("lengths, want", [
    ([3, 1, 2], [[30, 20, 10], [10, 20, 30], [20, 10, 30]]),
    ([3, 3, 3], [[30, 20, 10]] * 3),
])
def test_reverse_padded_reverses_real_positions_only(lengths, want):
    values = torch.tensor([[10, 20, 30]] * 3).unsqueeze(-1)
    reversed_ = reverse_padded(values, torch.tensor(lengths))
    assert reversed_.squeeze(-1).tolist() == want
    assert torch.equal(reverse_padded(reversed_, torch.tensor(lengths)), values)


def run_by_hand(layer, vectors):
    """Outputs h of one direction over a list of input vectors, from the zero state."""
    state = np.zeros(layer.state_size)
    outputs = []
    for x in vectors:
        state = cell_step(layer, x, state)
        outputs.append(state[:layer.hidden_size])
    return outputs


def annotations_by_hand(encoder, vectors):
    """The encoder's annotations for one unpadded sequence, layer by layer, from the notes."""
    inputs = list(vectors[::-1]) if encoder.reverse_source else list(vectors)
    for index, forward in enumerate(encoder.forward_layers):
        outputs = run_by_hand(forward, inputs)
        if encoder.backward_layers is not None:
            backward = run_by_hand(encoder.backward_layers[index], inputs[::-1])[::-1]
            outputs = [np.concatenate([f, b]) for f, b in zip(outputs, backward)]
        inputs = outputs
    return inputs[::-1] if encoder.reverse_source else inputs


@pytest.mark.parametrize("cell, layers, bidirectional, reverse_source", [
    ("gru", 1, False, False), ("gru", 2, True, False), ("lstm", 1, True, False),
    ("lstm", 2, False, True), ("gru", 1, True, True),
])
def test_padded_batch_equals_each_sequence_by_hand(cell, layers, bidirectional, reverse_source):
    encoder = randomize(encoder_of(cell, layers, bidirectional, reverse_source).double(), seed=1)
    lengths = [4, 2, 1]
    embedded = torch.randn(3, 4, 3, dtype=torch.double)
    out = encoder(embedded, torch.tensor(lengths))
    assert out.annotations.shape == (3, 4, (2 if bidirectional else 1) * 4)
    for row, length in enumerate(lengths):
        want = annotations_by_hand(encoder, list(numpy_of(embedded[row, :length])))
        np.testing.assert_allclose(numpy_of(out.annotations[row, :length]), np.stack(want), atol=1e-12)
        # The final output of each direction: after the last word read.
        forward_last = want[0 if reverse_source else -1][:4]
        np.testing.assert_allclose(numpy_of(out.final_outputs[-1][row, :4]), forward_last, atol=1e-12)
        if bidirectional:
            backward_last = want[-1 if reverse_source else 0][4:]
            np.testing.assert_allclose(numpy_of(out.final_outputs[-1][row, 4:]), backward_last, atol=1e-12)
    assert len(out.final_states) == layers and len(out.final_states[0]) == (2 if bidirectional else 1)


def test_reversed_source_reads_the_last_word_first():
    encoder = randomize(encoder_of(reverse_source=True).double(), seed=2)
    plain = encoder_of().double()
    plain.load_state_dict(encoder.state_dict())
    embedded = torch.randn(1, 3, 3, dtype=torch.double)
    lengths = torch.tensor([3])
    reversed_out = encoder(embedded, lengths)
    plain_out = plain(embedded.flip(1), lengths)
    # Reading x3 x2 x1 forwards; annotations are put back in source order.
    torch.testing.assert_close(reversed_out.annotations, plain_out.annotations.flip(1))
    torch.testing.assert_close(reversed_out.final_outputs[0], plain_out.final_outputs[0])
