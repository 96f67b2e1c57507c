"""Target phrases proposed by a model itself: beam search, greedy decoding and sampling.

All three run on the architectures' incremental interface (`model.start`, `model.step`,
`state.select`), so every architecture decodes the same way. A hypothesis's log p is the
model's own log p(target, [EOS] | source), summed in float64: the score `rescore score` gives
that pair (sampling with a temperature draws from the sharpened distribution, but reports the
model's log p). [PAD] is never proposed, nor an empty target ([EOS] first): a phrase-table
target has at least one word. [UNK] may be proposed, as in the paper's Table 3.

Every search runs the model in eval mode (no dropout), then leaves it in the mode it was in.

At `max_length` words a hypothesis must end: [EOS] is then its only choice (fairseq does the
same), so every result is a complete target whose log p is real; `forced_end` marks those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import torch

from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models import DecoderState, PhraseScorer
from rescorer.models.base import in_eval_mode

__all__ = ["Hypothesis", "beam_search", "greedy_decode", "sample"]


@dataclass(frozen=True)
class Hypothesis:
    tokens: tuple[int, ...]  # target word ids, [EOS] excluded
    log_p: float  # log p(tokens, [EOS] | source), natural log
    forced_end: bool = False  # ended because it reached max_length


def _start(model: PhraseScorer, src_ids: Sequence[int], rows: int) -> DecoderState:
    """The decoder state for one source, repeated over `rows` hypotheses."""
    if not src_ids:
        raise ValueError("an empty source phrase has nothing to decode from")
    device = next(model.parameters()).device
    src = torch.tensor([list(src_ids)], dtype=torch.long, device=device)  # (1, src_len)
    lengths = torch.tensor([len(src_ids)], dtype=torch.long, device=device)
    state = model.start(src, lengths)
    return state.select(torch.zeros(rows, dtype=torch.long, device=device))


def _next_log_probs(model: PhraseScorer, state: DecoderState, prev: torch.Tensor,
                    must_end: bool) -> tuple[torch.Tensor, DecoderState]:
    """log p(. | y_<t, x) as float64 (rows, vocab) with the choices a step may not make at
    -inf: [PAD] always, [EOS] at the first step (a target phrase has a word), every word but
    [EOS] when must_end."""
    first = state.position == 0
    log_probs, state, _ = model.step(state, prev)
    log_probs = log_probs.double()
    if must_end:
        ended = torch.full_like(log_probs, float("-inf"))
        ended[:, EOS_ID] = log_probs[:, EOS_ID]
        return ended, state
    log_probs[:, PAD_ID] = float("-inf")
    if first:
        log_probs[:, EOS_ID] = float("-inf")
    return log_probs, state


@torch.inference_mode()
@in_eval_mode
def beam_search(model: PhraseScorer, src_ids: Sequence[int], beam_size: int,
                max_length: int) -> list[Hypothesis]:
    """The `beam_size` best targets beam search finds, by descending log p; distinct.

    At each step the live hypotheses' 2K best continuations are ranked; those of the first K
    that end with [EOS] are finished, and the first K that do not stay live (fairseq's rule,
    which keeps K live hypotheses and makes K = 1 exactly greedy decoding). The search stops
    once K hypotheses have finished.
    """
    if beam_size < 1 or max_length < 1:
        raise ValueError(f"beam size and max length must be at least 1, found {beam_size}, {max_length}")
    state = _start(model, src_ids, 1)
    device = next(model.parameters()).device
    prefixes: list[tuple[int, ...]] = [()]
    scores = torch.zeros(1, dtype=torch.float64, device=device)  # (live,)
    prev = torch.full((1,), PAD_ID, dtype=torch.long, device=device)
    finished: list[Hypothesis] = []
    for length in range(max_length + 1):
        log_probs, state = _next_log_probs(model, state, prev, must_end=length == max_length)
        candidates = (scores.unsqueeze(1) + log_probs).view(-1)  # (live * vocab,)
        top_scores, top_index = candidates.topk(min(2 * beam_size, candidates.numel()))
        vocab = log_probs.size(1)
        rows, words, kept = [], [], []
        for rank, (score, index) in enumerate(zip(top_scores.tolist(), top_index.tolist())):
            if score == float("-inf"):
                break
            row, word = divmod(index, vocab)
            if word == EOS_ID:
                if rank < beam_size:
                    finished.append(Hypothesis(prefixes[row], score, forced_end=length == max_length))
            elif len(rows) < beam_size:
                rows.append(row)
                words.append(word)
                kept.append(score)
        if len(finished) >= beam_size or not rows:
            break
        state = state.select(torch.tensor(rows, dtype=torch.long, device=device))
        prefixes = [prefixes[row] + (word,) for row, word in zip(rows, words)]
        scores = torch.tensor(kept, dtype=torch.float64, device=device)
        prev = torch.tensor(words, dtype=torch.long, device=device)
    finished.sort(key=lambda hypothesis: -hypothesis.log_p)
    return finished[:beam_size]


@torch.inference_mode()
@in_eval_mode
def greedy_decode(model: PhraseScorer, src_ids: Sequence[int], max_length: int) -> Hypothesis:
    """The most probable word at every step until [EOS] (or max_length words)."""
    state = _start(model, src_ids, 1)
    tokens: list[int] = []
    log_p = 0.0
    prev = torch.full((1,), PAD_ID, dtype=torch.long, device=next(model.parameters()).device)
    for length in range(max_length + 1):
        log_probs, state = _next_log_probs(model, state, prev, must_end=length == max_length)
        best, word = log_probs[0].max(dim=0)
        log_p += float(best)
        if int(word) == EOS_ID:
            return Hypothesis(tuple(tokens), log_p, forced_end=length == max_length)
        tokens.append(int(word))
        prev = word.view(1)
    raise AssertionError("unreachable: the last step can only choose [EOS]")


@torch.inference_mode()
@in_eval_mode
def sample(model: PhraseScorer, src_ids: Sequence[int], num_samples: int, max_length: int,
           temperature: float = 1.0, generator: Optional[torch.Generator] = None) -> list[Hypothesis]:
    """`num_samples` targets drawn word by word from p(. | y_<t, x)^(1/temperature), in draw order.

    The same generator state gives the same samples (on the same device and torch version).
    """
    if num_samples < 1 or max_length < 1 or not temperature > 0:
        raise ValueError(f"need samples >= 1, max length >= 1 and temperature > 0, found "
                         f"{num_samples}, {max_length}, {temperature}")
    state = _start(model, src_ids, num_samples)
    device = next(model.parameters()).device
    alive = list(range(num_samples))  # which sample each live row is
    tokens: list[list[int]] = [[] for _ in range(num_samples)]
    log_p = torch.zeros(num_samples, dtype=torch.float64, device=device)
    results: list[Optional[Hypothesis]] = [None] * num_samples
    prev = torch.full((num_samples,), PAD_ID, dtype=torch.long, device=device)
    for length in range(max_length + 1):
        must_end = length == max_length
        log_probs, state = _next_log_probs(model, state, prev, must_end)  # (live, vocab)
        if must_end:
            words = torch.full((len(alive),), EOS_ID, dtype=torch.long, device=device)
        else:
            probs = torch.softmax(log_probs / temperature, dim=-1)
            words = torch.multinomial(probs, 1, generator=generator).squeeze(1)  # (live,)
        rows = torch.tensor(alive, dtype=torch.long, device=device)
        log_p[rows] += log_probs.gather(1, words.unsqueeze(1)).squeeze(1)
        keep = []
        for row, (number, word) in enumerate(zip(alive, words.tolist())):
            if word == EOS_ID:
                results[number] = Hypothesis(tuple(tokens[number]), float(log_p[number]), must_end)
            else:
                tokens[number].append(word)
                keep.append(row)
        if not keep:
            break
        keep_index = torch.tensor(keep, dtype=torch.long, device=device)
        state = state.select(keep_index)
        prev = words.index_select(0, keep_index)
        alive = [alive[row] for row in keep]
    return [result for result in results if result is not None]
