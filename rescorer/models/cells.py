"""Recurrent layers whose input projections are computed by the caller, for all steps at once.

A layer's `input_proj` maps an input to its gates' pre-activations; callers apply it to a whole
sequence in one matmul (and add whatever else feeds every gate, such as a context vector), then
`run` only does the recurrent part step by step.

The state of a layer is one tensor (batch, state_size): h for a GRU, [h; c] for an LSTM, so
masking, stacking and beam reordering treat both cells alike; `output(state)` gives h.
"""

from __future__ import annotations

import torch
from torch import nn


class RecurrentLayer(nn.Module):
    """Shared by both cells: run over time, carrying the state past each sequence's length."""

    num_gates: int
    hidden_size: int
    state_size: int
    input_proj: nn.Linear

    def initial_state(self, hidden: torch.Tensor) -> torch.Tensor:
        """The state whose output is `hidden` (batch, H) (an LSTM's memory cell starts at 0)."""
        return hidden

    def output(self, state: torch.Tensor) -> torch.Tensor:
        """h of a state: (batch, state_size) -> (batch, H)."""
        return state[..., :self.hidden_size]

    def recurrent_blocks(self) -> list[torch.Tensor]:
        """The H x H recurrent matrices, as views into the weights (for orthogonal init)."""
        raise NotImplementedError

    def step(self, inputs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """One step. inputs: (batch, gates * H) pre-activations; state: (batch, state_size)."""
        raise NotImplementedError

    def run(self, inputs: torch.Tensor, lengths: torch.Tensor,
            state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All steps. inputs: (batch, time, gates * H). Returns the outputs h (batch, time, H)
        and the final state (batch, state_size), that of each sequence's last real step."""
        outputs = []
        for t in range(inputs.size(1)):
            new_state = self.step(inputs[:, t], state)
            state = torch.where((lengths > t).unsqueeze(1), new_state, state)
            outputs.append(self.output(state))
        if not outputs:
            return inputs.new_zeros(inputs.size(0), 0, self.hidden_size), state
        return torch.stack(outputs, dim=1), state


class GRULayer(RecurrentLayer):
    """Cho et al. (2014): z, r gates and candidate, stacked [z, r, candidate], each H wide.

    Paper form: h~ = tanh(W x + U (r * h)). cuDNN form (`reset_after`): h~ = tanh(W x + r * (U h + b)),
    one fused recurrent matmul per step instead of two dependent ones.
    """

    num_gates = 3

    def __init__(self, input_size: int, hidden_size: int, reset_after: bool = False):
        super().__init__()
        self.hidden_size = self.state_size = hidden_size
        self.reset_after = reset_after
        self.input_proj = nn.Linear(input_size, 3 * hidden_size)  # W_z, W_r, W stacked
        if reset_after:
            self.recurrent = nn.Linear(hidden_size, 3 * hidden_size)  # [U_z; U_r; U], b_hn
        else:
            self.recurrent_gates = nn.Linear(hidden_size, 2 * hidden_size, bias=False)  # [U_z; U_r]
            self.recurrent_cand = nn.Linear(hidden_size, hidden_size, bias=False)  # U

    def recurrent_blocks(self) -> list[torch.Tensor]:
        weights = [self.recurrent.weight] if self.reset_after else [
            self.recurrent_gates.weight, self.recurrent_cand.weight]
        return [block for weight in weights for block in weight.split(self.hidden_size)]

    def step(self, inputs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        size = self.hidden_size
        if self.reset_after:
            recurrent = self.recurrent(state)
            gates = torch.sigmoid(inputs[:, :2 * size] + recurrent[:, :2 * size])
            update, reset = gates[:, :size], gates[:, size:]
            candidate = torch.tanh(inputs[:, 2 * size:] + reset * recurrent[:, 2 * size:])
        else:
            gates = torch.sigmoid(inputs[:, :2 * size] + self.recurrent_gates(state))
            update, reset = gates[:, :size], gates[:, size:]
            candidate = torch.tanh(inputs[:, 2 * size:] + self.recurrent_cand(reset * state))
        # h_t = z * h_{t-1} + (1 - z) * h~_t
        return candidate + update * (state - candidate)


class LSTMLayer(RecurrentLayer):
    """The lecture notes' LSTM: input, forget and output gates and a memory cell, stacked
    [i, f, o, c~]; c_t = f * c_{t-1} + i * c~_t, h_t = o * tanh(c_t). State [h; c]."""

    num_gates = 4

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.state_size = 2 * hidden_size
        self.input_proj = nn.Linear(input_size, 4 * hidden_size)  # W_i, W_f, W_o, W_c and biases
        self.recurrent = nn.Linear(hidden_size, 4 * hidden_size, bias=False)  # U_i, U_f, U_o, U_c

    def initial_state(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.cat([hidden, torch.zeros_like(hidden)], dim=-1)

    def recurrent_blocks(self) -> list[torch.Tensor]:
        return list(self.recurrent.weight.split(self.hidden_size))

    def step(self, inputs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        size = self.hidden_size
        hidden, memory = state[:, :size], state[:, size:]
        pre = inputs + self.recurrent(hidden)
        gates = torch.sigmoid(pre[:, :3 * size])
        candidate = torch.tanh(pre[:, 3 * size:])
        memory = gates[:, size:2 * size] * memory + gates[:, :size] * candidate
        hidden = gates[:, 2 * size:] * torch.tanh(memory)
        return torch.cat([hidden, memory], dim=1)


def build_layer(cell: str, input_size: int, hidden_size: int, reset_after: bool = False) -> RecurrentLayer:
    if cell == "gru":
        return GRULayer(input_size, hidden_size, reset_after)
    if cell == "lstm":
        return LSTMLayer(input_size, hidden_size)
    raise ValueError(f"unknown cell {cell!r}; valid: gru, lstm")
