"""What every architecture shares: gold-token bookkeeping, the output layer, the step interface.

A model scores log p(target | source) with teacher forcing in one batched pass: the subclass
computes, at the real target positions only (never padding), the features that feed the last
layer G_l; this class turns them into log p(gold) a block of rows at a time, so the
(tokens, vocab) logits never exist all at once. The same model also decodes one step at a time
(`start`, `step`) for beam search and attention maps; summing `step`'s log-probabilities of the
gold words gives the teacher-forced score.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
from torch import nn
from torch.nn import functional as F

from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models import softmax
from rescorer.models.cells import RecurrentLayer
from rescorer.models.config import ModelConfig
from rescorer.models.embeddings import FactoredEmbedding, previous_word_embeddings
from rescorer.models.encoders import RecurrentEncoder
from rescorer.models.softmax import full_precision


def orthogonal_on_one_thread(block: torch.Tensor) -> None:
    """nn.init.orthogonal_ with torch on one thread: its QR rounds differently on 2 threads (up to
    2.2e-6), and the default recipe's first updates grew that into another model (RESULTS.md,
    Speed III parts 6 and 7); so a seed gives the same initial weights on any thread count."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        nn.init.orthogonal_(block)
    finally:
        torch.set_num_threads(threads)


@dataclass
class DecoderState:
    """Where incremental decoding stands: `position` words consumed, and batch-major tensors."""

    position: int
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.tensors[name]

    def select(self, index: torch.Tensor) -> "DecoderState":
        """The states of rows `index` (beam search keeps, reorders and repeats hypotheses)."""
        return DecoderState(self.position, {k: v.index_select(0, index) for k, v in self.tensors.items()})

    def advanced(self, **changes: torch.Tensor) -> "DecoderState":
        """The state after one more word, with some tensors replaced."""
        return DecoderState(self.position + 1, {**self.tensors, **changes})


def teacher_forcing(tgt: torch.Tensor, tgt_lengths: torch.Tensor):
    """Gold words, decoder inputs, steps and real positions of padded targets without [EOS].

    tgt: (batch, tgt_len). Returns gold (batch, tgt_len + 1) = y_1..y_M, [EOS], then padding;
    tgt_in (batch, tgt_len + 1) = y_0..y_M (y_0 any id: its embedding is zeroed); steps
    (batch,) = M + 1; rows, the (pair, step) indices of real positions.
    """
    batch = tgt.size(0)
    steps = tgt_lengths + 1
    gold = torch.cat([tgt, tgt.new_full((batch, 1), PAD_ID)], dim=1)
    gold[torch.arange(batch, device=tgt.device), tgt_lengths] = EOS_ID
    tgt_in = torch.cat([tgt.new_full((batch, 1), PAD_ID), tgt], dim=1)
    mask = torch.arange(tgt.size(1) + 1, device=tgt.device).unsqueeze(0) < steps.unsqueeze(1)
    return gold, tgt_in, steps, mask.nonzero(as_tuple=True)


def maxout(pre: torch.Tensor, units: int) -> torch.Tensor:
    """Maxout over adjacent pairs: (tokens, 2 * units) -> (tokens, units)."""
    return pre.view(-1, units, 2).amax(dim=-1)


class PhraseScorer(nn.Module):
    """Base of every architecture: (src, tgt) id batches -> log p(tgt | src) per pair."""

    # Target positions whose logits are computed together: (on an accelerator, on the CPU)
    OUTPUT_BLOCK_ROWS = (16384, 512)

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config

    # -- built by subclasses: embeddings and encoder first, deep output and softmax last --------
    def add_embeddings_and_encoder(self) -> None:
        """Source and target embeddings, and the encoder of the config's cell, layers and directions."""
        config = self.config
        self.src_embed = FactoredEmbedding(config.src_vocab_size, config.embed_dim, config.embed_rank)
        self.tgt_embed = FactoredEmbedding(config.tgt_vocab_size, config.embed_dim, config.embed_rank)
        self.encoder = RecurrentEncoder(config)

    def add_decoder_norms(self, hidden_size: int, layers: int = 1) -> None:
        """LayerNorms of the decoder layers' outputs h_t when the config asks for them (Ba et al. 2016,
        here on the outputs, not inside the cell: the recurrence itself is the paper's)."""
        self.decoder_norms = (nn.ModuleList(nn.LayerNorm(hidden_size) for _ in range(layers))
                              if self.config.layer_norm else None)

    def normed(self, outputs: torch.Tensor, layer: int = 0) -> torch.Tensor:
        """Decoder layer `layer`'s outputs, layer-normalized if the config says so."""
        return self.decoder_norms[layer](outputs) if self.decoder_norms is not None else outputs

    def add_deep_output(self, hidden_size: int, context_size: int) -> None:
        """s' = O_h h + O_y e(y_{t-1}) + O_c c, then maxout (Cho et al., Bahdanau et al.)."""
        pre_maxout, embed = 2 * self.config.maxout_units, self.config.embed_dim
        self.deep_hidden = nn.Linear(hidden_size, pre_maxout)  # O_h
        self.deep_prev = nn.Linear(embed, pre_maxout, bias=False)  # O_y
        self.deep_context = nn.Linear(context_size, pre_maxout, bias=False)  # O_c

    def add_output_layer(self, input_size: int) -> None:
        """Softmax weights G = G_l G_r (G_r absent when output_rank is None)."""
        rank = self.config.output_rank
        self.output_right = nn.Linear(input_size, rank, bias=False) if rank else None  # G_r
        self.output_left = nn.Linear(rank or input_size, self.config.tgt_vocab_size)  # G_l

    def reset_parameters(self) -> None:
        """Cho et al. Appendix A: weights N(0, 0.01), recurrent matrices orthogonal, biases zero;
        LayerNorms at gain 1, bias 0."""
        for name, param in self.named_parameters():
            if "norms." in name:
                nn.init.ones_(param) if name.endswith("weight") else nn.init.zeros_(param)
            elif name.endswith("bias"):
                nn.init.zeros_(param)
            else:
                nn.init.normal_(param, mean=0.0, std=0.01)
        with torch.no_grad():
            for layer in self.modules():
                if isinstance(layer, RecurrentLayer):
                    for block in layer.recurrent_blocks():
                        orthogonal_on_one_thread(block)
            for embedding in (self.src_embed, self.tgt_embed):
                embedding.table.weight[PAD_ID].zero_()

    # -- shared computations -----------------------------------------------------------------
    def drop(self, values: torch.Tensor) -> torch.Tensor:
        """Dropout at the config's rate in train mode; the values themselves otherwise (and at
        rate 0, so that training without dropout draws no random numbers and repeats as before)."""
        if not self.training or not self.config.dropout:
            return values
        return F.dropout(values, self.config.dropout, training=True)

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        """e(x_j) for a batch of padded sources: (batch, src_len, E), dropped out in training."""
        return self.drop(self.src_embed(src))

    def previous_embeddings(self, tgt_in: torch.Tensor) -> torch.Tensor:
        """e(y_{t-1}) for every decoder step, e(y_0) = 0: (batch, steps, E), dropped out in training."""
        return self.drop(previous_word_embeddings(self.tgt_embed, tgt_in))

    def deep_output(self, hidden: torch.Tensor, prev_embed: torch.Tensor,
                    context_part: torch.Tensor) -> torch.Tensor:
        """Maxout of the deep output, projected by G_r: features for G_l, (tokens, rank)."""
        pre_maxout = self.deep_hidden(self.drop(hidden)) + self.deep_prev(prev_embed) + context_part
        return self.output_features(self.drop(maxout(pre_maxout, self.config.maxout_units)))

    def output_features(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.output_right(hidden) if self.output_right is not None else hidden

    def gold_log_probs(self, features: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """log p(gold) = logit[gold] - logsumexp(logits), a block of rows at a time.

        The (rows, vocab) logits never exist all at once, so memory stays bounded however large
        the batch (a GPU batch of 131k tokens would otherwise need 8 GB of fp32 logits), and no
        full log-softmax is written; on the CPU the sum skips the bias copy and the row maximum
        (rescorer.models.softmax).
        """
        block = self.OUTPUT_BLOCK_ROWS[features.device.type == "cpu"]
        return softmax.gold_log_probs(self.output_left, features, gold, block)

    def token_log_probs(self, src: torch.Tensor, src_lengths: torch.Tensor,
                        tgt: torch.Tensor, tgt_lengths: torch.Tensor,
                        sampled: Optional[softmax.SampledWords] = None, smoothing: float = 0.0) -> torch.Tensor:
        """log p(y_t | y_<t, x) for every target position, end of sequence included.

        src: (batch, src_len) padded ids; tgt: (batch, tgt_len) padded ids WITHOUT [EOS];
        lengths are real lengths. Returns (batch, tgt_len + 1), zero at padding. With `sampled`
        words (training only) the softmax is the sampled one (rescorer.models.softmax). With
        `smoothing` eps > 0 (training only, full softmax), each position holds the label-smoothed
        objective (1 - eps) log p(y_t) + eps * mean_w log p(w) instead.
        """
        gold, tgt_in, steps, rows = teacher_forcing(tgt, tgt_lengths)
        features = self.teacher_forced_features(src, src_lengths, tgt_in, steps, rows)
        if smoothing:
            if sampled is not None:
                raise ValueError("label smoothing is defined on the whole softmax, not a sampled one")
            block = self.OUTPUT_BLOCK_ROWS[features.device.type == "cpu"]
            picked = softmax.smoothed_log_probs(self.output_left, features, gold[rows], block, smoothing)
        elif sampled is None:
            picked = self.gold_log_probs(features, gold[rows])
        else:
            picked = softmax.sampled_gold_log_probs(self.output_left, features, gold[rows], sampled)
        out = torch.zeros(gold.shape, device=tgt.device, dtype=picked.dtype)
        out[rows] = picked
        return out

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor,
                tgt: torch.Tensor, tgt_lengths: torch.Tensor,
                sampled: Optional[softmax.SampledWords] = None, smoothing: float = 0.0) -> torch.Tensor:
        """log p(target | source) per pair: (batch,); with `smoothing`, the pair's label-smoothed
        objective (token_log_probs)."""
        return self.token_log_probs(src, src_lengths, tgt, tgt_lengths, sampled, smoothing).sum(dim=1)

    def step(self, state: DecoderState, prev_tokens: torch.Tensor
             ) -> tuple[torch.Tensor, DecoderState, Optional[torch.Tensor]]:
        """One decoder step: log p(. | y_<t, x) (batch, vocab) in float32 (float64 for a
        float64 model), the next state, and the
        attention weights (batch, src_len) or None. prev_tokens (batch,) holds y_{t-1}; it is
        ignored at the first step, whose previous-word embedding is 0."""
        features, state, attention = self.step_features(state, prev_tokens)
        logits = full_precision(self.output_left(features))
        return torch.log_softmax(logits, dim=-1), state, attention

    def source_summary(self, src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
        """One vector per source phrase, for maps of phrase representations (Cho et al. Fig. 5):
        the mean of the top layer's annotations over the real positions, (batch, A). cho2014
        returns its summary c instead."""
        annotations = self.encoder(self.embed_source(src), src_lengths).annotations  # (batch, src_len, A)
        real = (torch.arange(src.size(1), device=src.device).unsqueeze(0) < src_lengths.unsqueeze(1))
        total = (annotations * real.unsqueeze(-1).to(annotations.dtype)).sum(dim=1)
        return total / src_lengths.unsqueeze(1).to(annotations.dtype)

    def previous_embedding(self, state: DecoderState, prev_tokens: torch.Tensor) -> torch.Tensor:
        """e(y_{t-1}) for a step: (batch, E), zero at the first step."""
        embedded = self.tgt_embed(prev_tokens)
        return torch.zeros_like(embedded) if state.position == 0 else self.drop(embedded)

    def full_precision_modules(self) -> set[str]:
        """Modules that `--precision int8` leaves in fp32 (rescorer.models.quantization): the output
        layer, whose logits int8 would have to rescale in several passes, and any layer whose
        weight the architecture slices."""
        return {"output_left"}

    # -- what each architecture provides ---------------------------------------------------------
    def teacher_forced_features(self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor,
                                steps: torch.Tensor, rows: tuple) -> torch.Tensor:
        """Features for G_l at the real target positions `rows`: (tokens, rank)."""
        raise NotImplementedError

    def start(self, src: torch.Tensor, src_lengths: torch.Tensor) -> DecoderState:
        """Encode a batch of sources: the decoder state before the first target word."""
        raise NotImplementedError

    def step_features(self, state: DecoderState, prev_tokens: torch.Tensor
                      ) -> tuple[torch.Tensor, DecoderState, Optional[torch.Tensor]]:
        raise NotImplementedError

    @staticmethod
    def flops_per_pair(config: ModelConfig, src_len: int, tgt_len: int) -> int:
        """Matmul FLOPs of scoring one unpadded pair with teacher forcing (see rescorer.models.flops)."""
        raise NotImplementedError


def in_eval_mode(decode: Callable) -> Callable:
    """Run `decode(model, ...)` with the model in eval mode (no dropout: a search's log p is the
    model's), then put it back in the mode it was in (a trainer may decode mid-training)."""

    @functools.wraps(decode)
    def wrapper(model: nn.Module, *args, **kwargs):
        was_training = model.training
        model.eval()
        try:
            return decode(model, *args, **kwargs)
        finally:
            model.train(was_training)

    return wrapper


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
