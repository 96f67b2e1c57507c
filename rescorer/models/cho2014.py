"""The RNN encoder-decoder of Cho et al. (2014), Appendix A, as a phrase-pair scorer (`--arch cho2014`).

Encoder: an RNN over the source embeddings; c = tanh(V h_N) (h_N: the top layer's final output,
[->h_N; <-h_1] when bidirectional). Decoder: h_0 = tanh(V' c); an RNN whose every gate and
candidate also sees C c at every step (for an LSTM: the input, forget and output gates and
the new memory, as for the GRU); e(y_0) = 0. Deep output s' = O_h h_t + O_y e(y_{t-1}) + O_c c,
maxout over adjacent pairs, then a softmax through G = G_l G_r.

Speed (a phrase table is scored once per pair, millions of times): every input projection
W e(x) of a sequence is one matmul before the recurrence, the context's contributions C c and
O_c c are computed once per pair, and the output layer runs over real target positions only.

Parameter names are those of version-1 model files (0.1.0), except that the encoder's layers
now sit under `encoder.forward_layers` (the checkpoint module renames them on load).
"""

from __future__ import annotations

import torch
from torch import nn

from rescorer.models import flops
from rescorer.models.base import DecoderState, PhraseScorer
from rescorer.models.cells import build_layer
from rescorer.models.config import ModelConfig


class Cho2014(PhraseScorer):
    """Scores log p(target phrase | source phrase) through one summary vector c."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        H, E = config.hidden_size, config.embed_dim
        self.add_embeddings_and_encoder()
        self.context = nn.Linear(config.annotation_size, H)  # V: c = tanh(V h_N)
        self.decoder_init = nn.Linear(H, H)  # V': h'_0 = tanh(V' c)
        self.decoder = build_layer(config.cell, E, H, config.reset_after)
        self.context_to_gates = nn.Linear(H, config.gates * H, bias=False)  # [C_z; C_r; C]
        self.add_decoder_norms(H)
        self.add_deep_output(H, H)
        self.add_output_layer(config.maxout_units)
        self.reset_parameters()

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
        """src: (batch, src_len) ids; returns c: (batch, H)."""
        encoded = self.encoder(self.embed_source(src), src_lengths)
        return torch.tanh(self.context(encoded.final_outputs[-1]))

    def source_summary(self, src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
        """The summary c itself (the paper's phrase representation, Fig. 5): (batch, H)."""
        return self.encode(src, src_lengths)

    def teacher_forced_features(self, src, src_lengths, tgt_in, steps, rows):
        context = self.encode(src, src_lengths)
        prev_embed = self.previous_embeddings(tgt_in)  # (batch, steps, E)
        inputs = self.decoder.input_proj(prev_embed) + self.context_to_gates(context).unsqueeze(1)
        start = self.decoder.initial_state(torch.tanh(self.decoder_init(context)))
        states, _ = self.decoder.run(inputs, steps, start)  # (batch, steps, H)
        # O_c c once per pair, then copied to that pair's real positions. index_select, not
        # [rows[0]]: the backward of indexing with repeated indices adds with atomics on two or
        # more CPU threads, in an order that depends on timing (training was not repeatable)
        context_part = self.deep_context(context).index_select(0, rows[0])
        return self.deep_output(self.normed(states[rows]), prev_embed[rows], context_part)

    def start(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        context = self.encode(src, src_lengths)
        hidden = self.decoder.initial_state(torch.tanh(self.decoder_init(context)))
        return DecoderState(0, {"hidden": hidden, "context_gates": self.context_to_gates(context),
                                "deep_context": self.deep_context(context)})

    def step_features(self, state, prev_tokens):
        prev = self.previous_embedding(state, prev_tokens)  # (batch, E)
        hidden = self.decoder.step(self.decoder.input_proj(prev) + state["context_gates"], state["hidden"])
        features = self.deep_output(self.normed(self.decoder.output(hidden)), prev, state["deep_context"])
        return features, state.advanced(hidden=hidden), None

    @staticmethod
    def flops_per_pair(config: ModelConfig, src_len: int, tgt_len: int) -> int:
        H, E, gates = config.hidden_size, config.embed_dim, config.gates
        pre_maxout = 2 * config.maxout_units
        per_pair = (flops.matmul(config.annotation_size, H)  # c = tanh(V h_N)
                    + flops.matmul(H, H)  # h'_0 = tanh(V' c)
                    + flops.matmul(H, gates * H)  # C c for every gate
                    + flops.matmul(H, pre_maxout))  # O_c c
        per_tgt_position = (flops.embedding(config)  # e(y_{t-1})
                            + flops.matmul(E, gates * H)  # W' e(y_{t-1})
                            + flops.matmul(H, gates * H)  # U' h'_{t-1}
                            + flops.matmul(H, pre_maxout)  # O_h h'_t
                            + flops.matmul(E, pre_maxout)  # O_y e(y_{t-1})
                            + flops.output_layer(config, config.maxout_units))  # G_l G_r s_t
        return src_len * flops.encoder_per_token(config) + per_pair + (tgt_len + 1) * per_tgt_position
