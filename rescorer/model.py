"""The RNN encoder-decoder of Cho et al. (2014), Appendix A, as a phrase-pair scorer.

Encoder: GRU over the source embeddings; c = tanh(V h_N).
Decoder: h_0 = tanh(V' c); a GRU whose update gate, reset gate and candidate all see c at every
step; e(y_0) = 0. Deep output s' = O_h h_t + O_y e(y_{t-1}) + O_c c, maxout over adjacent
pairs, then a softmax through the low-rank product G = G_l G_r.

Speed (a phrase table is scored once per pair, millions of times): every input projection
W e(x) of a sequence is one matmul before the recurrence, the context's gate contributions
C c and O_c c are computed once per pair, and the output layer is one matmul over all real
target positions, never over padding.

GRU form: by default the paper's, h~ = tanh(W e + U (r * h)). With `reset_after=True` the
cuDNN form h~ = tanh(W e + r * (U h + b)) is used instead: one fused recurrent matmul per step
instead of two, slightly different function, same parameter count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Optional

import torch
from torch import nn

from rescorer.vocabulary import EOS_ID, PAD_ID

PRESETS: dict[str, dict] = {
    # Appendix A: E=500 through rank 100, H=1000, 500 maxout units, G = G_l G_r with a
    # 500-wide inner dimension, 15,000-word shortlists.
    "paper": dict(embed_dim=500, embed_rank=100, hidden_size=1000, maxout_units=500,
                  output_rank=500, shortlist_size=15000),
    # The same architecture shrunk so a CPU trains it on a small table in minutes.
    "small": dict(embed_dim=128, embed_rank=64, hidden_size=256, maxout_units=128,
                  output_rank=128, shortlist_size=15000),
    # For tests and smoke runs: seconds, not minutes.
    "tiny": dict(embed_dim=32, embed_rank=16, hidden_size=48, maxout_units=32,
                 output_rank=32, shortlist_size=2000),
}


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the encoder-decoder; vocabulary sizes include the 3 special tokens."""

    src_vocab_size: int
    tgt_vocab_size: int
    embed_dim: int = 500
    embed_rank: Optional[int] = 100  # None: a full V x E embedding matrix
    hidden_size: int = 1000
    maxout_units: int = 500
    output_rank: int = 500
    reset_after: bool = False  # cuDNN-form GRU (see module docstring)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown model settings {sorted(unknown)}; valid: {sorted(known)}")
        return cls(**values)


class FactoredEmbedding(nn.Module):
    """A V x E embedding approximated by a V x R table times an R x E matrix (the paper's rank-100)."""

    def __init__(self, vocab_size: int, embed_dim: int, rank: Optional[int]):
        super().__init__()
        self.table = nn.Embedding(vocab_size, rank or embed_dim, padding_idx=PAD_ID)
        self.project = nn.Linear(rank, embed_dim, bias=False) if rank else None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        vectors = self.table(ids)
        return self.project(vectors) if self.project is not None else vectors


class GRULayer(nn.Module):
    """One GRU whose input projections are precomputed by the caller for all steps.

    Gates are stacked [z, r, candidate] along the last dimension, each `hidden_size` wide.
    """

    def __init__(self, input_size: int, hidden_size: int, reset_after: bool):
        super().__init__()
        self.hidden_size = hidden_size
        self.reset_after = reset_after
        self.input_proj = nn.Linear(input_size, 3 * hidden_size)  # W_z, W_r, W stacked
        if reset_after:
            self.recurrent = nn.Linear(hidden_size, 3 * hidden_size)  # [U_z; U_r; U], b_hn
        else:
            self.recurrent_gates = nn.Linear(hidden_size, 2 * hidden_size, bias=False)  # [U_z; U_r]
            self.recurrent_cand = nn.Linear(hidden_size, hidden_size, bias=False)  # U

    def recurrent_blocks(self) -> list[torch.Tensor]:
        """The three H x H recurrent matrices U_z, U_r, U, as views into the weights."""
        weights = [self.recurrent.weight] if self.reset_after else [
            self.recurrent_gates.weight, self.recurrent_cand.weight]
        return [block for weight in weights for block in weight.split(self.hidden_size)]

    def step(self, inputs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """One step. inputs: (batch, 3H) = W e(x_t) (+ C c in the decoder); hidden: (batch, H)."""
        size = self.hidden_size
        if self.reset_after:
            recurrent = self.recurrent(hidden)
            gates = torch.sigmoid(inputs[:, :2 * size] + recurrent[:, :2 * size])
            update, reset = gates[:, :size], gates[:, size:]
            candidate = torch.tanh(inputs[:, 2 * size:] + reset * recurrent[:, 2 * size:])
        else:
            gates = torch.sigmoid(inputs[:, :2 * size] + self.recurrent_gates(hidden))
            update, reset = gates[:, :size], gates[:, size:]
            candidate = torch.tanh(inputs[:, 2 * size:] + self.recurrent_cand(reset * hidden))
        # Paper: h_t = z * h_{t-1} + (1 - z) * h~_t
        return candidate + update * (hidden - candidate)

    def run(self, inputs: torch.Tensor, lengths: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """All steps. inputs: (batch, time, 3H); returns every state (batch, time, H).

        Past a sequence's length its state is carried unchanged, so the last column holds h_N.
        """
        states = []
        for t in range(inputs.size(1)):
            new_hidden = self.step(inputs[:, t], hidden)
            hidden = torch.where((lengths > t).unsqueeze(1), new_hidden, hidden)
            states.append(hidden)
        return torch.stack(states, dim=1)


class EncoderDecoder(nn.Module):
    """Scores log p(target phrase | source phrase) with teacher forcing, one batched pass."""

    # Target positions whose logits are computed together: (on an accelerator, on the CPU)
    OUTPUT_BLOCK_ROWS = (16384, 512)

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        H, E = config.hidden_size, config.embed_dim
        self.src_embed = FactoredEmbedding(config.src_vocab_size, E, config.embed_rank)
        self.tgt_embed = FactoredEmbedding(config.tgt_vocab_size, E, config.embed_rank)
        self.encoder = GRULayer(E, H, config.reset_after)
        self.context = nn.Linear(H, H)  # V: c = tanh(V h_N)
        self.decoder_init = nn.Linear(H, H)  # V': h'_0 = tanh(V' c)
        self.decoder = GRULayer(E, H, config.reset_after)
        self.context_to_gates = nn.Linear(H, 3 * H, bias=False)  # [C_z; C_r; C]
        self.deep_hidden = nn.Linear(H, 2 * config.maxout_units)  # O_h
        self.deep_prev = nn.Linear(E, 2 * config.maxout_units, bias=False)  # O_y
        self.deep_context = nn.Linear(H, 2 * config.maxout_units, bias=False)  # O_c
        self.output_right = nn.Linear(config.maxout_units, config.output_rank, bias=False)  # G_r
        self.output_left = nn.Linear(config.output_rank, config.tgt_vocab_size)  # G_l
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Appendix A: weights N(0, 0.01), recurrent matrices orthogonal, biases zero."""
        for name, param in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(param)
            else:
                nn.init.normal_(param, mean=0.0, std=0.01)
        with torch.no_grad():
            for layer in (self.encoder, self.decoder):
                for block in layer.recurrent_blocks():
                    nn.init.orthogonal_(block)
            for table in (self.src_embed.table, self.tgt_embed.table):
                table.weight[PAD_ID].zero_()

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
        """src: (batch, src_len) ids; returns c: (batch, H)."""
        inputs = self.encoder.input_proj(self.src_embed(src))  # (batch, src_len, 3H)
        hidden = inputs.new_zeros(src.size(0), self.config.hidden_size)
        states = self.encoder.run(inputs, src_lengths, hidden)
        return torch.tanh(self.context(states[:, -1]))

    def decoder_states(self, context: torch.Tensor, tgt_in: torch.Tensor,
                       tgt_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder states h'_t and the previous-word embeddings e(y_{t-1}).

        tgt_in: (batch, steps) ids of y_0..y_{steps-1}, column 0 ignored since e(y_0) = 0.
        Returns states (batch, steps, H) and prev_embed (batch, steps, E).
        """
        prev_embed = self.tgt_embed(tgt_in)
        prev_embed = torch.cat([torch.zeros_like(prev_embed[:, :1]), prev_embed[:, 1:]], dim=1)
        inputs = self.decoder.input_proj(prev_embed) + self.context_to_gates(context).unsqueeze(1)
        hidden = torch.tanh(self.decoder_init(context))
        return self.decoder.run(inputs, tgt_lengths, hidden), prev_embed

    def output_hidden(self, states: torch.Tensor, prev_embed: torch.Tensor,
                      context_part: torch.Tensor) -> torch.Tensor:
        """Deep output s (maxout), projected by G_r: (tokens, H), (tokens, E) -> (tokens, rank)."""
        pre_maxout = self.deep_hidden(states) + self.deep_prev(prev_embed) + context_part
        maxout = pre_maxout.view(-1, self.config.maxout_units, 2).amax(dim=-1)
        return self.output_right(maxout)

    def output_logits(self, states: torch.Tensor, prev_embed: torch.Tensor,
                      context_part: torch.Tensor) -> torch.Tensor:
        """Softmax logits G_l G_r s for (tokens, ...) rows -> (tokens, vocab)."""
        return self.output_left(self.output_hidden(states, prev_embed, context_part))

    def gold_log_probs(self, hidden: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """log p(gold) = logit[gold] - logsumexp(logits), a block of rows at a time.

        The (rows, vocab) logits never exist all at once, so memory stays bounded however large
        the batch (a GPU batch of 131k tokens would otherwise need 8 GB of fp32 logits), and no
        full log-softmax is written. On the CPU it is as fast as cross-entropy.
        """
        block = self.OUTPUT_BLOCK_ROWS[hidden.device.type == "cpu"]
        pieces = []
        for start in range(0, hidden.size(0), block):
            logits = self.output_left(hidden[start:start + block])
            if logits.dtype not in (torch.float32, torch.float64):
                logits = logits.float()  # the softmax in full precision, also under bf16 autocast
            block_gold = gold[start:start + block].unsqueeze(1)
            pieces.append(logits.gather(1, block_gold).squeeze(1) - torch.logsumexp(logits, dim=1))
        return torch.cat(pieces) if pieces else hidden.new_zeros(0, dtype=torch.float32)

    def token_log_probs(self, src: torch.Tensor, src_lengths: torch.Tensor,
                        tgt: torch.Tensor, tgt_lengths: torch.Tensor) -> torch.Tensor:
        """log p(y_t | y_<t, x) for every target position, end of sequence included.

        src: (batch, src_len) padded ids; tgt: (batch, tgt_len) padded ids WITHOUT [EOS];
        lengths are real lengths (tgt_lengths without [EOS]). Returns (batch, tgt_len + 1),
        zero at padding.
        """
        batch, tgt_len = tgt.shape
        steps = tgt_lengths + 1  # the words, then [EOS]
        # Targets y_1..y_M, [EOS]: (batch, tgt_len + 1)
        gold = torch.cat([tgt, tgt.new_full((batch, 1), PAD_ID)], dim=1)
        gold[torch.arange(batch, device=tgt.device), tgt_lengths] = EOS_ID
        # Inputs y_0..y_M, y_0 being any id (its embedding is zeroed)
        tgt_in = torch.cat([tgt.new_full((batch, 1), PAD_ID), tgt], dim=1)

        context = self.encode(src, src_lengths)
        states, prev_embed = self.decoder_states(context, tgt_in, steps)
        mask = torch.arange(tgt_len + 1, device=tgt.device).unsqueeze(0) < steps.unsqueeze(1)
        rows = mask.nonzero(as_tuple=True)
        # O_c c once per pair, then broadcast to that pair's real positions
        context_part = self.deep_context(context)[rows[0]]
        hidden = self.output_hidden(states[rows], prev_embed[rows], context_part)
        picked = self.gold_log_probs(hidden, gold[rows])
        out = torch.zeros(batch, tgt_len + 1, device=tgt.device, dtype=picked.dtype)
        out[rows] = picked
        return out

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor,
                tgt: torch.Tensor, tgt_lengths: torch.Tensor) -> torch.Tensor:
        """log p(target | source) per pair: (batch,)."""
        return self.token_log_probs(src, src_lengths, tgt, tgt_lengths).sum(dim=1)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
