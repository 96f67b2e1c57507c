"""The naive way to score pairs, as tutorials write it: the baseline our scorer must beat 5x.

Same architecture and sizes as rescorer's model (Cho et al. 2014: factorized embeddings, GRU
encoder, summary vector c, GRU decoder fed c at every step, deep output with maxout, output
layer G = G_l G_r), but written step by step: batches of 64 pairs in file order without
sorting by length, ``nn.GRUCell`` in a Python loop over time, the decoder's input the
concatenation [embedding; c] so that C c is recomputed each step, and a full log-softmax at
every step. Weights are random: throughput does not depend on them.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: rescorer, benchmarks
from benchmarks.helpers.pairs import sample_pairs  # noqa: E402

__all__ = ["NaiveSizes", "NaiveEncoderDecoder", "build_ids", "score_naive", "PRESETS"]


@dataclass
class NaiveSizes:
    src_vocab_size: int = 15000
    tgt_vocab_size: int = 15000
    embed_dim: int = 500
    embed_rank: Optional[int] = 100
    hidden_size: int = 1000
    maxout_units: int = 500
    output_rank: Optional[int] = 500


PRESETS: Dict[str, NaiveSizes] = {"paper": NaiveSizes()}

PAD, UNK, BOS, EOS = 0, 1, 2, 3


def _embedding(vocab_size: int, embed_dim: int, rank: Optional[int]) -> nn.Module:
    if rank is None:
        return nn.Embedding(vocab_size, embed_dim, padding_idx=PAD)
    return nn.Sequential(nn.Embedding(vocab_size, rank, padding_idx=PAD), nn.Linear(rank, embed_dim, bias=False))


class NaiveEncoderDecoder(nn.Module):
    def __init__(self, sizes) -> None:
        super().__init__()
        h, e, m = sizes.hidden_size, sizes.embed_dim, sizes.maxout_units
        self.src_embed = _embedding(sizes.src_vocab_size, e, sizes.embed_rank)
        self.tgt_embed = _embedding(sizes.tgt_vocab_size, e, sizes.embed_rank)
        self.encoder_cell = nn.GRUCell(e, h)
        self.summary = nn.Linear(h, h)  # c = tanh(V h_N)
        self.init_state = nn.Linear(h, h)  # h'_0 = tanh(V' c)
        self.decoder_cell = nn.GRUCell(e + h, h)  # input [e(y_{i-1}); c]
        self.out_h = nn.Linear(h, 2 * m)
        self.out_y = nn.Linear(e, 2 * m, bias=False)
        self.out_c = nn.Linear(h, 2 * m, bias=False)
        if sizes.output_rank is None:
            self.output = nn.Linear(m, sizes.tgt_vocab_size)
        else:
            self.output = nn.Sequential(nn.Linear(m, sizes.output_rank, bias=False),
                                        nn.Linear(sizes.output_rank, sizes.tgt_vocab_size))

    def forward(self, src: torch.Tensor, src_lens: torch.Tensor, tgt: torch.Tensor, tgt_lens: torch.Tensor) -> torch.Tensor:
        """Sum of log p(tgt | src) per pair, shape (batch,). ``src`` (batch, src_len),
        ``tgt`` (batch, tgt_len) padded with PAD; EOS is scored after the last target token."""
        batch = src.size(0)
        h = src.new_zeros(batch, self.encoder_cell.hidden_size, dtype=torch.float)
        src_emb = self.src_embed(src)  # (batch, src_len, embed)
        for t in range(src.size(1)):
            new_h = self.encoder_cell(src_emb[:, t], h)
            keep = (t < src_lens).unsqueeze(1)  # padded steps leave the state alone
            h = torch.where(keep, new_h, h)
        c = torch.tanh(self.summary(h))
        state = torch.tanh(self.init_state(c))
        # Decoder inputs: BOS then the target; gold outputs: the target then EOS.
        dec_in = torch.cat([tgt.new_full((batch, 1), BOS), tgt], dim=1)
        gold = torch.cat([tgt, tgt.new_full((batch, 1), PAD)], dim=1)
        gold[torch.arange(batch), tgt_lens] = EOS
        total = src.new_zeros(batch, dtype=torch.float)
        for t in range(dec_in.size(1)):
            y = self.tgt_embed(dec_in[:, t])  # (batch, embed)
            state = self.decoder_cell(torch.cat([y, c], dim=1), state)
            pre = self.out_h(state) + self.out_y(y) + self.out_c(c)  # (batch, 2 maxout)
            s = pre.view(batch, -1, 2).max(dim=2).values  # maxout, pool 2
            log_probs = torch.log_softmax(self.output(s), dim=-1)  # (batch, vocab)
            step = log_probs.gather(1, gold[:, t:t + 1]).squeeze(1)
            total = total + torch.where(t <= tgt_lens, step, torch.zeros_like(step))
        return total


Pair = Tuple[List[str], List[str]]


def _vocab(sentences, size: int) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for tokens in sentences:
        for tok in tokens:
            counts[tok] = counts.get(tok, 0) + 1
    words = sorted(counts, key=lambda w: (-counts[w], w))[: size - 4]
    return {w: i + 4 for i, w in enumerate(words)}


def build_ids(pairs: Sequence[Pair], sizes) -> List[Tuple[List[int], List[int]]]:
    """Map tokens to ids with the most frequent words of the sample; others become UNK."""
    src_vocab = _vocab((s for s, _ in pairs), sizes.src_vocab_size)
    tgt_vocab = _vocab((t for _, t in pairs), sizes.tgt_vocab_size)
    return [([src_vocab.get(w, UNK) for w in s], [tgt_vocab.get(w, UNK) for w in t]) for s, t in pairs]


def _pad(seqs: List[List[int]]) -> Tuple[torch.Tensor, torch.Tensor]:
    lens = torch.tensor([len(s) for s in seqs])
    out = torch.full((len(seqs), int(lens.max())), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out, lens


@torch.inference_mode()
def score_naive(model: NaiveEncoderDecoder, ids: Sequence[Tuple[List[int], List[int]]], batch_size: int = 64) -> torch.Tensor:
    """log p(tgt | src) for every pair, in file order, batches of ``batch_size`` unsorted."""
    scores = []
    for start in range(0, len(ids), batch_size):
        chunk = ids[start:start + batch_size]
        src, src_lens = _pad([s for s, _ in chunk])
        tgt, tgt_lens = _pad([t for _, t in chunk])
        scores.append(model(src, src_lens, tgt, tgt_lens))
    return torch.cat(scores)


def measure(ids: Sequence[Tuple[List[int], List[int]]], sizes, batch_size: int = 64, seed: int = 0,
            model: Optional[NaiveEncoderDecoder] = None) -> Dict[str, float]:
    """Pairs/s and target tokens/s of :func:`score_naive` on encoded pairs (ids < vocabulary sizes)."""
    if model is None:
        torch.manual_seed(seed)
        model = NaiveEncoderDecoder(sizes).eval()
        score_naive(model, ids[: 2 * batch_size], batch_size)  # warm-up
    start = time.perf_counter()
    scores = score_naive(model, ids, batch_size)
    seconds = time.perf_counter() - start
    if scores.shape[0] != len(ids) or not torch.isfinite(scores).all():
        raise RuntimeError("naive baseline produced missing or non-finite scores")
    tgt_tokens = sum(len(t) + 1 for _, t in ids)
    return {"pairs": len(ids), "seconds": seconds, "pairs_per_s": len(ids) / seconds,
            "tgt_tokens_per_s": tgt_tokens / seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    sizes = PRESETS["paper"]
    result = measure(build_ids(sample_pairs(args.pairs), sizes), sizes, args.batch_size)
    print(f"naive baseline, paper sizes: {result['pairs_per_s']:.1f} pairs/s, "
          f"{result['tgt_tokens_per_s']:.1f} target tokens/s ({result['pairs']} pairs, {result['seconds']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
