"""Recurrent encoders: stacked, optionally bidirectional, optionally reading the source backwards.

- Stacked (`layers` N): layer l+1 reads the outputs of layer l.
- Bidirectional: each layer has a forward and a backward RNN; its output at position j is the
  annotation [->h_j; <-h_j] (Bahdanau et al. 2015), so the next layer and the attention see 2H.
- Reversed source (the lecture notes' trick, Sutskever et al. 2014): the RNNs read x_N ... x_1.
  Annotations are put back in source order, so position j is always about x_j.

Each direction of each layer projects its whole input sequence in one matmul before its
recurrence. Past a sequence's length the state is carried, so final states are those of each
sequence's last real step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from rescorer.models.cells import RecurrentLayer, build_layer
from rescorer.models.config import ModelConfig


def reverse_padded(values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each sequence's first `length` positions in reverse order, padding left in place.

    values: (batch, time, ...); lengths: (batch,). Its own inverse.
    """
    positions = torch.arange(values.size(1), device=values.device).unsqueeze(0)  # (1, time)
    last = lengths.unsqueeze(1) - 1
    index = torch.where(positions <= last, last - positions, positions)  # (batch, time)
    index = index.view(*index.shape, *([1] * (values.dim() - 2))).expand_as(values)
    return values.gather(1, index)


@dataclass
class EncoderOutput:
    annotations: torch.Tensor  # (batch, src_len, directions * H), top layer, in source order
    final_states: list[list[torch.Tensor]]  # [layer][direction]: (batch, state_size)
    final_outputs: list[torch.Tensor]  # [layer]: (batch, directions * H), the final h of each direction


class RecurrentEncoder(nn.Module):
    """Embedded source (batch, src_len, E) -> annotations and final states."""

    def __init__(self, config: ModelConfig):
        """The config's cell (and GRU form), layers and directions over its embeddings, with its
        dropout and layer norm."""
        super().__init__()
        hidden_size = self.hidden_size = config.hidden_size
        self.dropout = config.dropout  # on each layer's outputs (the next layer's inputs, the annotations), in training
        self.bidirectional = config.bidirectional
        self.reverse_source = config.reverse_source
        sizes = [config.embed_dim] + [config.annotation_size] * (config.encoder_layers - 1)
        cell, reset_after = config.cell, config.reset_after
        self.forward_layers = nn.ModuleList(build_layer(cell, size, hidden_size, reset_after) for size in sizes)
        self.backward_layers = nn.ModuleList(
            build_layer(cell, size, hidden_size, reset_after) for size in sizes) if config.bidirectional else None
        # LayerNorm of each layer's outputs (both directions together); not of the final states
        self.norms = (nn.ModuleList(nn.LayerNorm(config.annotation_size) for _ in sizes) if config.layer_norm
                      else None)

    def layers(self) -> list[RecurrentLayer]:
        return list(self.forward_layers) + list(self.backward_layers or [])

    def _direction(self, layer: RecurrentLayer, inputs: torch.Tensor,
                   lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        start = layer.initial_state(inputs.new_zeros(inputs.size(0), self.hidden_size))
        return layer.run(layer.input_proj(inputs), lengths, start)

    def forward(self, embedded: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        inputs = reverse_padded(embedded, lengths) if self.reverse_source else embedded
        final_states, final_outputs = [], []
        for index, layer in enumerate(self.forward_layers):
            outputs, final = self._direction(layer, inputs, lengths)
            states, last = [final], [layer.output(final)]
            if self.backward_layers is not None:
                backward = self.backward_layers[index]
                backward_outputs, backward_final = self._direction(
                    backward, reverse_padded(inputs, lengths), lengths)
                outputs = torch.cat([outputs, reverse_padded(backward_outputs, lengths)], dim=-1)
                states.append(backward_final)
                last.append(backward.output(backward_final))
            final_states.append(states)
            final_outputs.append(torch.cat(last, dim=-1) if len(last) > 1 else last[0])
            if self.norms is not None:
                outputs = self.norms[index](outputs)
            inputs = F.dropout(outputs, self.dropout, training=True) if self.training and self.dropout else outputs
        annotations = reverse_padded(inputs, lengths) if self.reverse_source else inputs
        return EncoderOutput(annotations, final_states, final_outputs)
