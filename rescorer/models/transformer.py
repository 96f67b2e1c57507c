"""A Transformer encoder-decoder (Vaswani et al. 2017) as a phrase or sentence scorer (`--arch transformer`).

Built from torch.nn's TransformerEncoderLayer and TransformerDecoderLayer (their weights and
sublayers), pre-norm (Wang et al. 2019: LayerNorm before each sublayer, one more after the last
layer of each stack), ReLU feed-forward, sinusoidal positions added to embeddings scaled by
sqrt(d). The model width d is `embed_dim`, the feed-forward width `hidden_size`. The target
embedding table is also the output layer's weight (`tied_embeddings`, on by default; Press &
Wolf 2017). As in the recurrent models, the decoder's first input is the zero vector (plus
position 0), so p(y_1 | x) depends on the source only.

The sublayers are called here rather than through the layers' forward, and step-by-step
decoding is incremental with a key/value cache (as fairseq, Marian and OpenNMT-py decode):
`start` projects the encoder's outputs once per decoder layer into the cross-attention's keys
and values, and each step projects the new position only, appends its self-attention key and
value to the layer's cache and attends over the cache, O(d^2) per step and layer for the
projections. The step computes attention from nn.MultiheadAttention's own parameters (its
in_proj split into queries, keys and values, and out_proj), so the model file and the
teacher-forced pass are unchanged; the cross-attention weights of the last layer, averaged over
heads, are the attention map.
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from rescorer.models import flops
from rescorer.models.attention import source_mask
from rescorer.models.base import DecoderState, PhraseScorer
from rescorer.models.config import ModelConfig
from rescorer.models.embeddings import FactoredEmbedding, previous_word_embeddings


def sinusoids(first: int, count: int, width: int, like: torch.Tensor) -> torch.Tensor:
    """Positions first .. first+count-1: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...),
    (count, width) in `like`'s dtype and device (computed in float64, so every position of a
    step-by-step decoding equals that of the batched pass)."""
    positions = torch.arange(first, first + count, dtype=torch.float64, device=like.device).unsqueeze(1)
    rates = torch.exp(torch.arange(0, width, 2, dtype=torch.float64, device=like.device)
                      * (-math.log(10000.0) / width))
    table = torch.zeros(count, width, dtype=torch.float64, device=like.device)
    table[:, 0::2] = torch.sin(positions * rates)
    table[:, 1::2] = torch.cos(positions * rates[:width // 2])
    return table.to(like.dtype)


def causal_mask(steps: int, device: torch.device) -> torch.Tensor:
    """(steps, steps), True where position t may not look: every later position."""
    return torch.ones(steps, steps, dtype=torch.bool, device=device).triu(1)


class Transformer(PhraseScorer):
    """Self-attention encoder; decoder with causal self-attention and attention to the source."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        d = config.embed_dim
        self.src_embed = FactoredEmbedding(config.src_vocab_size, d, None)
        self.tgt_embed = FactoredEmbedding(config.tgt_vocab_size, d, None)
        sizes = dict(d_model=d, nhead=config.attention_heads, dim_feedforward=config.hidden_size,
                     dropout=config.dropout, activation="relu", batch_first=True, norm_first=True)
        self.encoder_layers = nn.ModuleList(nn.TransformerEncoderLayer(**sizes)
                                            for _ in range(config.encoder_layers))
        self.decoder_layers = nn.ModuleList(nn.TransformerDecoderLayer(**sizes)
                                            for _ in range(config.decoder_layers))
        self.encoder_norm = nn.LayerNorm(d)
        self.decoder_norm = nn.LayerNorm(d)
        self.add_output_layer(d)
        if config.tied_embeddings:
            self.output_left.weight = self.tgt_embed.table.weight
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices, zero biases, LayerNorms at 1 and 0, embeddings N(0, d^-1/2)
        (scaled by sqrt(d) on input: unit variance), [PAD]'s row 0."""
        for name, param in self.named_parameters():
            if "norm" in name.split(".")[-2]:
                continue  # LayerNorm: weight 1, bias 0 as built
            if param.dim() > 1:
                nn.init.xavier_uniform_(param)
            else:
                nn.init.zeros_(param)
        with torch.no_grad():
            for embedding in (self.src_embed, self.tgt_embed):
                nn.init.normal_(embedding.table.weight, mean=0.0, std=self.config.embed_dim ** -0.5)
                embedding.table.weight[0].zero_()

    def full_precision_modules(self) -> set[str]:
        # Attention's output projections are called by nn.MultiheadAttention with their weights
        # as tensors, not as modules
        return super().full_precision_modules() | {
            f"{stack}.{index}.{attention}.out_proj"
            for stack, layers in (("encoder_layers", self.encoder_layers), ("decoder_layers", self.decoder_layers))
            for index in range(len(layers))
            for attention in (("self_attn",) if stack == "encoder_layers" else ("self_attn", "multihead_attn"))}

    # -- the pieces ----------------------------------------------------------------------------
    def positioned(self, embedded: torch.Tensor, first: int = 0) -> torch.Tensor:
        """sqrt(d) e + PE from position `first` on, dropped out in training: (batch, len, d)."""
        d = self.config.embed_dim
        return self.drop(embedded * math.sqrt(d) + sinusoids(first, embedded.size(1), d, embedded))

    @staticmethod
    def feed_forward(layer: nn.Module, x: torch.Tensor, norm: nn.Module, dropout: nn.Module) -> torch.Tensor:
        hidden = layer.dropout(layer.activation(layer.linear1(norm(x))))
        return x + dropout(layer.linear2(hidden))

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The top layer's outputs (batch, src_len, d) and the padding mask (batch, src_len), True at padding."""
        padding = ~source_mask(src_lengths, src.size(1))
        x = self.positioned(self.src_embed(src))
        for layer in self.encoder_layers:
            normed = layer.norm1(x)
            attended = layer.self_attn(normed, normed, normed, key_padding_mask=padding, need_weights=False)[0]
            x = self.feed_forward(layer, x + layer.dropout1(attended), layer.norm2, layer.dropout2)
        return self.encoder_norm(x), padding

    def decoder_layer(self, layer: nn.Module, x: torch.Tensor, memory: torch.Tensor, padding: torch.Tensor,
                      mask: torch.Tensor) -> torch.Tensor:
        """One decoder layer for every position of x (batch, n, d), its self-attention under the
        causal mask: the teacher-forced pass."""
        normed = layer.norm1(x)
        attended = layer.self_attn(normed, normed, normed, attn_mask=mask, need_weights=False)[0]
        x = x + layer.dropout1(attended)
        normed = layer.norm2(x)
        attended = layer.multihead_attn(normed, memory, memory, key_padding_mask=padding, need_weights=False)[0]
        x = x + layer.dropout2(attended)
        return self.feed_forward(layer, x, layer.norm3, layer.dropout3)

    # -- incremental decoding: the attentions' own weights, keys and values cached -------------
    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, n, d) -> (batch, heads, n, d / heads): batch first, as DecoderState.select needs."""
        heads = self.config.attention_heads
        return x.view(x.size(0), x.size(1), heads, -1).transpose(1, 2)

    def source_keys_values(self, attention: nn.MultiheadAttention,
                           memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The cross-attention's keys and values of the encoder's outputs, (batch, heads, src_len, d/heads) each."""
        d = self.config.embed_dim  # in_proj's rows: queries, keys, values
        keys, values = F.linear(memory, attention.in_proj_weight[d:], attention.in_proj_bias[d:]).chunk(2, dim=-1)
        return self.split_heads(keys), self.split_heads(values)

    def attend(self, attention: nn.MultiheadAttention, queries: torch.Tensor, keys: torch.Tensor,
               values: torch.Tensor, allowed: Optional[torch.Tensor], weights: bool
               ) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Attention of one position's queries (batch, heads, 1, d/heads) over cached keys and
        values, through out_proj: (batch, 1, d), and with `weights` the attention weights averaged
        over heads (batch, 1, keys) (nn.MultiheadAttention's need_weights). `allowed` (batch, 1, 1,
        keys) is False at the source's padding; None lets every key be read."""
        dropout = attention.dropout if self.training else 0.0
        averaged = None
        if weights:
            scores = (queries * keys.size(-1) ** -0.5) @ keys.transpose(-2, -1)
            if allowed is not None:
                scores = scores.masked_fill(~allowed, float("-inf"))
            alpha = torch.softmax(scores, dim=-1)
            averaged = alpha.mean(dim=1)
            attended = F.dropout(alpha, dropout, training=True) @ values if dropout else alpha @ values
        else:
            attended = F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed, dropout_p=dropout)
        attended = attended.transpose(1, 2).reshape(queries.size(0), 1, self.config.embed_dim)
        return attention.out_proj(attended), averaged

    def step_layer(self, index: int, layer: nn.Module, x: torch.Tensor, state: DecoderState, changes: dict,
                   weights: bool) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Decoder layer `index` for the new position x (batch, 1, d): its self-attention key and
        value appended to the layer's cache (in `changes`), the source's read from `state`."""
        attention = layer.self_attn
        queries, keys, values = (self.split_heads(part) for part in
                                 F.linear(layer.norm1(x), attention.in_proj_weight, attention.in_proj_bias)
                                 .chunk(3, dim=-1))
        keys = torch.cat([state[f"self_keys{index}"], keys], dim=2)
        values = torch.cat([state[f"self_values{index}"], values], dim=2)
        changes[f"self_keys{index}"], changes[f"self_values{index}"] = keys, values
        attended, _ = self.attend(attention, queries, keys, values, None, weights=False)
        x = x + layer.dropout1(attended)
        attention = layer.multihead_attn
        d = self.config.embed_dim
        queries = self.split_heads(F.linear(layer.norm2(x), attention.in_proj_weight[:d], attention.in_proj_bias[:d]))
        attended, averaged = self.attend(attention, queries, state[f"source_keys{index}"],
                                         state[f"source_values{index}"], state["allowed"], weights)
        x = x + layer.dropout2(attended)
        return self.feed_forward(layer, x, layer.norm3, layer.dropout3), averaged

    # -- the PhraseScorer interface ------------------------------------------------------------
    def teacher_forced_features(self, src, src_lengths, tgt_in, steps, rows):
        memory, padding = self.encode(src, src_lengths)
        x = self.positioned(previous_word_embeddings(self.tgt_embed, tgt_in))  # (batch, steps, d)
        mask = causal_mask(x.size(1), x.device)
        for layer in self.decoder_layers:
            x = self.decoder_layer(layer, x, memory, padding, mask)
        return self.decoder_norm(x[rows])

    def start(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        """The source's keys and values for every decoder layer's cross-attention, projected once,
        and empty self-attention caches; (batch, ...) each, so that `select` reorders them."""
        memory, padding = self.encode(src, src_lengths)
        tensors = {"allowed": ~padding[:, None, None, :]}  # (batch, 1, 1, src_len)
        for index, layer in enumerate(self.decoder_layers):
            keys, values = self.source_keys_values(layer.multihead_attn, memory)
            tensors[f"source_keys{index}"], tensors[f"source_values{index}"] = keys, values
            tensors[f"self_keys{index}"] = tensors[f"self_values{index}"] = keys[:, :, :0]
        return DecoderState(0, tensors)

    def step_features(self, state, prev_tokens):
        embedded = self.tgt_embed(prev_tokens).unsqueeze(1)  # (batch, 1, d)
        if state.position == 0:
            embedded = torch.zeros_like(embedded)
        x = self.positioned(embedded, state.position)
        changes, last = {}, len(self.decoder_layers) - 1
        for index, layer in enumerate(self.decoder_layers):
            x, attention = self.step_layer(index, layer, x, state, changes, weights=index == last)
        return self.decoder_norm(x.squeeze(1)), state.advanced(**changes), attention.squeeze(1)

    def source_summary(self, src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
        """The mean of the encoder's outputs over the real positions: (batch, d)."""
        memory, padding = self.encode(src, src_lengths)
        real = (~padding).unsqueeze(-1).to(memory.dtype)
        return (memory * real).sum(dim=1) / src_lengths.unsqueeze(1).to(memory.dtype)

    @staticmethod
    def flops_per_pair(config: ModelConfig, src_len: int, tgt_len: int) -> int:
        d, inner = config.embed_dim, config.hidden_size
        feed_forward = flops.matmul(d, inner) + flops.matmul(inner, d)
        per_position_pair = 2 * flops.matmul(d, 1)  # q.k over the heads, then alpha v
        per_src_token = (config.encoder_layers * (flops.matmul(d, 3 * d) + flops.matmul(d, d) + feed_forward)
                         + config.decoder_layers * flops.matmul(d, 2 * d))  # keys and values of the source
        per_tgt_position = (config.decoder_layers * (flops.matmul(d, 3 * d) + flops.matmul(d, d)  # self
                                                     + 2 * flops.matmul(d, d)  # source: queries, output
                                                     + feed_forward)
                            + flops.output_layer(config, d))
        steps = tgt_len + 1
        return (src_len * per_src_token + steps * per_tgt_position
                + per_position_pair * (config.encoder_layers * src_len * src_len
                                       + config.decoder_layers * (steps * steps + steps * src_len)))
