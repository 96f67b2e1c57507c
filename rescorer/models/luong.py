"""Luong et al. (2015), global and local attention, as a phrase-pair scorer (`--arch luong`).

A stacked decoder (LSTM by default) starts from the encoder's final states, layer by layer
(a bidirectional encoder's two directions summed; layers the encoder lacks start at 0). At
step t its top output h_t scores the source annotations (dot, general or concat; global, or
local-m / local-p windows), c_t = sum_s a_t(s) h_s, and the attentional state
h~_t = tanh(W_c [c_t; h_t]) gives p(y_t) = softmax(W_s h~_t) (W_s = G_l G_r when the preset
factors it). With input feeding, h~_{t-1} is concatenated to the next step's input e(y_{t-1})
(h~_0 = 0); e(y_0) = 0.

Speed: the scores' source parts (W_a h_s) once per pair; without input feeding the decoder
runs over all steps layer by layer (one input matmul per layer and sequence) and attention
for all steps is one batched product; W_c and W_s over real target positions only.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from rescorer.models import flops
from rescorer.models.attention import LuongAttention, attend
from rescorer.models.base import DecoderState, PhraseScorer
from rescorer.models.cells import build_layer
from rescorer.models.config import ModelConfig
from rescorer.models.encoders import EncoderOutput


class Luong(PhraseScorer):
    """A stacked decoder whose top output attends to the source and feeds the softmax."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        H, E, A = config.hidden_size, config.embed_dim, config.annotation_size
        self.add_embeddings_and_encoder()
        first_input = E + (H if config.input_feeding else 0)  # [e(y_{t-1}); h~_{t-1}]
        self.decoder = nn.ModuleList(build_layer(config.cell, first_input if layer == 0 else H, H,
                                                 config.reset_after)
                                     for layer in range(config.decoder_layers))
        self.attention = LuongAttention(config.attention_score, config.attention, config.attention_window,
                                        H, A, config.attention_size)
        self.combine = nn.Linear(A + H, H, bias=False)  # W_c
        self.add_decoder_norms(H, config.decoder_layers)
        self.add_output_layer(H)  # W_s
        self.reset_parameters()

    def full_precision_modules(self) -> set[str]:
        # input feeding slices the first layer's input weights into e(y) and h~ parts
        return super().full_precision_modules() | ({"decoder.0.input_proj"} if self.config.input_feeding else set())

    def initial_states(self, encoded: EncoderOutput) -> torch.Tensor:
        """(batch, decoder_layers, state_size): encoder layer l's final state for decoder layer l."""
        batch = encoded.annotations.size(0)
        states = [sum(encoded.final_states[layer]) if layer < len(encoded.final_states)
                  else encoded.annotations.new_zeros(batch, cell.state_size)
                  for layer, cell in enumerate(self.decoder)]
        return torch.stack(states, dim=1)

    def start(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        encoded = self.encoder(self.embed_source(src), src_lengths)
        tensors = {"hidden": self.initial_states(encoded), "annotations": encoded.annotations,
                   "keys": self.attention.keys(encoded.annotations), "src_lengths": src_lengths}
        if self.config.input_feeding:
            tensors["feed"] = encoded.annotations.new_zeros(src.size(0), self.config.hidden_size)
        return DecoderState(0, tensors)

    def embedded_inputs(self, prev_embed: torch.Tensor) -> torch.Tensor:
        """The first layer's input projection of e(y_{t-1}) alone (the h~_{t-1} part is per step)."""
        projection = self.decoder[0].input_proj
        if not self.config.input_feeding:
            return projection(prev_embed)
        return F.linear(prev_embed, projection.weight[:, :self.config.embed_dim], projection.bias)

    def attention_contexts(self, top: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, torch.Tensor]:
        """Weights a_t (batch, steps, src_len) and contexts c_t (batch, steps, A) for the top
        outputs h_t (batch, steps, H) of the steps from state.position on."""
        weights = self.attention.weights(top, state["keys"], state["src_lengths"], state.position)
        return weights, attend(weights, state["annotations"])

    def attentional(self, context: torch.Tensor, top: torch.Tensor) -> torch.Tensor:
        """h~_t = tanh(W_c [c_t; h_t]): (..., A), (..., H) -> (..., H)."""
        return torch.tanh(self.combine(torch.cat([context, top], dim=-1)))

    def decode_step(self, embedded: torch.Tensor, state: DecoderState):
        """One step from the first layer's embedded-input projection (batch, gates * H):
        returns weights (batch, src_len), h~_t (batch, H) and the next state."""
        inputs = embedded
        if self.config.input_feeding:
            inputs = inputs + F.linear(state["feed"], self.decoder[0].input_proj.weight[:, self.config.embed_dim:])
        layers = []
        for index, cell in enumerate(self.decoder):
            if index:
                inputs = cell.input_proj(self.drop(self.normed(cell.output(layers[-1]), index - 1)))
            layers.append(cell.step(inputs, state["hidden"][:, index]))
        top = self.normed(self.decoder[-1].output(layers[-1]), len(self.decoder) - 1)  # (batch, H)
        weights, context = self.attention_contexts(top.unsqueeze(1), state)
        attentional = self.attentional(context.squeeze(1), top)
        changes = {"hidden": torch.stack(layers, dim=1)}
        if self.config.input_feeding:
            changes["feed"] = attentional
        return weights.squeeze(1), attentional, state.advanced(**changes)

    def teacher_forced_features(self, src, src_lengths, tgt_in, steps, rows):
        state = self.start(src, src_lengths)
        embedded = self.embedded_inputs(self.previous_embeddings(tgt_in))
        if self.config.input_feeding:  # h~_{t-1} feeds step t: one step at a time
            attentional = []
            for t in range(tgt_in.size(1)):
                _, step_attentional, state = self.decode_step(embedded[:, t], state)
                attentional.append(step_attentional)
            return self.output_features(self.drop(torch.stack(attentional, dim=1)[rows]))
        inputs = embedded
        for index, cell in enumerate(self.decoder):  # each layer over all steps, then the next
            if index:
                inputs = cell.input_proj(self.drop(outputs))
            outputs, _ = cell.run(inputs, steps, state["hidden"][:, index])
            outputs = self.normed(outputs, index)
        _, contexts = self.attention_contexts(outputs, state)  # all steps in one batched product
        return self.output_features(self.drop(self.attentional(contexts[rows], outputs[rows])))

    def step_features(self, state, prev_tokens):
        embedded = self.embedded_inputs(self.previous_embedding(state, prev_tokens))
        weights, attentional, state = self.decode_step(embedded, state)
        return self.output_features(self.drop(attentional)), state, weights

    @staticmethod
    def flops_per_pair(config: ModelConfig, src_len: int, tgt_len: int) -> int:
        H, E, A, gates = config.hidden_size, config.embed_dim, config.annotation_size, config.gates
        score, inner = config.attention_score, config.attention_size
        key = {"dot": 0, "general": flops.matmul(A, H), "concat": flops.matmul(A, inner or 0)}[score]
        query = flops.matmul(H, inner) if score == "concat" else 0  # W_a h_t of concat
        if config.attention == "local-p":
            query += flops.matmul(H, H) + flops.matmul(H, 1)  # v_p^T tanh(W_p h_t)
        per_position_pair = (flops.matmul(inner, 1) if score == "concat" else flops.matmul(H, 1)) \
            + flops.matmul(1, A)  # score, then a_t(s) h_s
        feed = H if config.input_feeding else 0
        layers = config.decoder_layers
        per_tgt_position = (flops.embedding(config)
                            + flops.matmul(E + feed, gates * H)  # first layer's input
                            + (layers - 1) * flops.matmul(H, gates * H)  # upper layers' inputs
                            + layers * flops.matmul(H, gates * H)  # recurrent products
                            + query + flops.matmul(A + H, H)  # W_c [c_t; h_t]
                            + flops.output_layer(config, H))  # W_s h~_t
        return (src_len * (flops.encoder_per_token(config) + key)
                + (tgt_len + 1) * (per_tgt_position + src_len * per_position_pair))
