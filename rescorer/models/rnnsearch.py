"""RNNsearch, Bahdanau et al. (2015), as a phrase-pair scorer (`--arch rnnsearch`).

Encoder: bidirectional by default, annotations h_j = [->h_j; <-h_j]. At each target step i:
e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j), alpha_i = softmax over the real source positions,
c_i = sum_j alpha_ij h_j; the deep output t_i = maxout(U_o s_{i-1} + V_o e(y_{i-1}) + C_o c_i)
gives p(y_i) through G (the paper's appendix uses s_{i-1} here; its main text writes s_i), and
the state moves on: s_i = f(s_{i-1}, y_{i-1}, c_i) with C c_i in every gate and the candidate.
s_0 = tanh(W_s <-h_1) (the backward RNN's final state; a unidirectional encoder's final
state without --bidirectional); e(y_0) = 0.

Speed: U_a h_j once per pair, not per step; W e(y_{i-1}) for all steps in one matmul; the deep
output and G over the real target positions after the loop, in one matmul each.
"""

from __future__ import annotations

import torch
from torch import nn

from rescorer.models import flops
from rescorer.models.attention import AdditiveAttention, attend, masked_softmax, source_mask
from rescorer.models.base import DecoderState, PhraseScorer
from rescorer.models.cells import build_layer
from rescorer.models.config import ModelConfig


class RNNsearch(PhraseScorer):
    """Additive attention recomputed at every target step from the previous decoder state."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        H, E, A = config.hidden_size, config.embed_dim, config.annotation_size
        self.add_embeddings_and_encoder()
        self.attention = AdditiveAttention(H, A, config.attention_size)
        self.decoder_init = nn.Linear(H, H)  # W_s: s_0 = tanh(W_s <-h_1)
        self.decoder = build_layer(config.cell, E, H, config.reset_after)
        self.context_to_gates = nn.Linear(A, config.gates * H, bias=False)  # [C_z; C_r; C] c_i
        self.add_decoder_norms(H)  # of s_{i-1} where attention and the deep output read it
        self.add_deep_output(H, A)  # U_o, V_o, C_o
        self.add_output_layer(config.maxout_units)
        self.reset_parameters()

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        """Annotations (batch, src_len, A), their keys U_a h_j and s_0: the state before step 1."""
        encoded = self.encoder(self.embed_source(src), src_lengths)
        last_direction = encoded.final_outputs[-1][:, -self.config.hidden_size:]  # <-h_1 (or ->h_N)
        state = self.decoder.initial_state(torch.tanh(self.decoder_init(last_direction)))
        return DecoderState(0, {"hidden": state, "annotations": encoded.annotations,
                                "keys": self.attention.keys(encoded.annotations), "src_lengths": src_lengths})

    def align(self, hidden: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, torch.Tensor]:
        """alpha_i (batch, src_len) and c_i (batch, A) for the previous state's output s_{i-1} (batch, H)."""
        keys = state["keys"]
        allowed = source_mask(state["src_lengths"], keys.size(1)).unsqueeze(1)
        weights = masked_softmax(self.attention.scores(hidden.unsqueeze(1), keys), allowed)
        return weights.squeeze(1), attend(weights, state["annotations"]).squeeze(1)

    def teacher_forced_features(self, src, src_lengths, tgt_in, steps, rows):
        state = self.encode(src, src_lengths)
        prev_embed = self.previous_embeddings(tgt_in)  # (batch, steps, E)
        inputs = self.decoder.input_proj(prev_embed)  # (batch, steps, gates * H)
        recurrent = state["hidden"]
        previous, contexts = [], []  # s_{i-1} and c_i of every step
        for i in range(tgt_in.size(1)):
            hidden = self.normed(self.decoder.output(recurrent))
            _, context = self.align(hidden, state)
            previous.append(hidden)
            contexts.append(context)
            if i + 1 < tgt_in.size(1):  # s_i; the last step's is never used
                recurrent = self.decoder.step(inputs[:, i] + self.context_to_gates(context), recurrent)
        previous, contexts = torch.stack(previous, dim=1), torch.stack(contexts, dim=1)
        return self.deep_output(previous[rows], prev_embed[rows], self.deep_context(contexts[rows]))

    def start(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        return self.encode(src, src_lengths)

    def step_features(self, state, prev_tokens):
        prev = self.previous_embedding(state, prev_tokens)  # (batch, E)
        hidden = self.normed(self.decoder.output(state["hidden"]))  # s_{i-1}
        weights, context = self.align(hidden, state)
        features = self.deep_output(hidden, prev, self.deep_context(context))
        recurrent = self.decoder.step(self.decoder.input_proj(prev) + self.context_to_gates(context),
                                      state["hidden"])
        return features, state.advanced(hidden=recurrent), weights

    @staticmethod
    def flops_per_pair(config: ModelConfig, src_len: int, tgt_len: int) -> int:
        H, E, A, gates = config.hidden_size, config.embed_dim, config.annotation_size, config.gates
        inner, pre_maxout = config.attention_size, 2 * config.maxout_units
        per_src_token = flops.encoder_per_token(config) + flops.matmul(A, inner)  # U_a h_j
        per_tgt_position = (flops.embedding(config)
                            + flops.matmul(E, gates * H)  # W e(y_{i-1})
                            + flops.matmul(H, inner)  # W_a s_{i-1}
                            + flops.matmul(H, pre_maxout) + flops.matmul(E, pre_maxout)  # U_o, V_o
                            + flops.matmul(A, pre_maxout)  # C_o c_i
                            + flops.output_layer(config, config.maxout_units))
        per_position_pair = flops.matmul(inner, 1) + flops.matmul(1, A)  # v_a^T tanh(.), alpha_ij h_j
        per_transition = flops.matmul(H, gates * H) + flops.matmul(A, gates * H)  # U s_{i-1}, C c_i
        return (src_len * per_src_token + flops.matmul(H, H)  # W_s
                + (tgt_len + 1) * (per_tgt_position + src_len * per_position_pair)
                + tgt_len * per_transition)
