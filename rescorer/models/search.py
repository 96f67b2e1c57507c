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

__all__ = ["Hypothesis", "beam_search", "beam_search_many", "greedy_decode", "sample"]


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
    state = model.start(*_padded([src_ids], device))
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


def beam_search(model: PhraseScorer, src_ids: Sequence[int], beam_size: int,
                max_length: int) -> list[Hypothesis]:
    """The `beam_size` best targets beam search finds for one source, by descending log p;
    distinct (`beam_search_many`'s search, on one source, which refuses bad settings). The
    search goes on while a live hypothesis still beats the K-th finished one: ranked by raw log
    p, a longer target can be the best (`rescore generate`'s Table 3)."""
    return beam_search_many(model, [src_ids], beam_size, [max_length], until_unbeaten=True)[0][:beam_size]


@torch.inference_mode()
@in_eval_mode
def beam_search_many(model: PhraseScorer, sources: Sequence[Sequence[int]], beam_size: int,
                     max_lengths: Sequence[int], min_length: int = 1,
                     until_unbeaten: bool = False) -> list[list[Hypothesis]]:
    """Beam search over many sources at once: every hypothesis each source's search finished, by
    descending log p (K or a few more; `beam_search` keeps the K best, `batch_beam_search`
    ranks them with a length penalty).

    B sources share every step, K rows each, so a step is one (B*K, vocab) softmax instead of B
    small ones; the first step has one row per source (its one live hypothesis), which makes one
    source no slower than a search of its own (benchmarks/drivers/translation_speed.py). Of the 2K best
    continuations of a source, those of the first K that end with [EOS] are finished, the first
    K that do not stay live (fairseq's rule, which keeps K live hypotheses and makes K = 1 exactly
    greedy decoding); a source is done once K have finished, and leaves the batch. With
    `until_unbeaten` it goes on until no live hypothesis scores above the K-th best finished one
    (log p only falls as a target grows, so none of them can overtake it any more): the K best
    by raw log p, where the first rule, made for a length penalty, can stop while a longer
    target that beats them all is still live.
    `max_lengths[b]` bounds source b's target (at that length [EOS] is its only choice); before
    `min_length` tokens [EOS] is never a choice (the max length wins where it is shorter).
    """
    if beam_size < 1:
        raise ValueError(f"need beam size >= 1, found {beam_size}")
    if any(not src for src in sources) or any(length < 1 for length in max_lengths) or min_length < 1:
        raise ValueError("every source needs a word, and max and min lengths of at least 1")
    device = next(model.parameters()).device
    count, k = len(sources), beam_size
    if count == 0:
        return []
    src, lengths = _padded(sources, device)
    state = model.start(src, lengths)
    active = list(range(count))  # the sources still searching, in row-block order
    width = 1  # rows per source: one live hypothesis at the start, K after the first step
    prefixes = [[()] for _ in range(count)]
    scores = torch.zeros((count, 1), dtype=torch.float64, device=device)
    prev = torch.full((count,), PAD_ID, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(count)]
    step = 0
    while active:
        log_probs, state, _ = model.step(state, prev)
        vocab = log_probs.size(1)
        log_probs = log_probs.double().view(len(active), width, vocab)
        log_probs[:, :, PAD_ID] = float("-inf")
        if step < min_length:  # step 0: a translation has a word; a source's max length wins over it
            too_short = torch.tensor([step < max_lengths[b] for b in active], device=device)
            log_probs[too_short, :, EOS_ID] = float("-inf")
        must_end = torch.tensor([step >= max_lengths[b] for b in active], device=device)
        if bool(must_end.any()):
            ended = torch.full_like(log_probs, float("-inf"))
            ended[:, :, EOS_ID] = log_probs[:, :, EOS_ID]
            log_probs = torch.where(must_end.view(-1, 1, 1), ended, log_probs)
        candidates = (scores.unsqueeze(2) + log_probs).view(len(active), width * vocab)
        top_scores, top_index = candidates.topk(min(2 * k, width * vocab), dim=1)
        keep_rows, keep_words, keep_scores, still = [], [], [], []
        for block, (row_scores, row_index) in enumerate(zip(top_scores.tolist(), top_index.tolist())):
            source = active[block]
            rows, words, kept = _advance(row_scores, row_index, vocab, k, prefixes[source], finished[source],
                                         forced=step >= max_lengths[source])
            if not rows or _done(finished[source], kept, k, until_unbeaten):
                continue
            while len(rows) < k:  # fewer than K live continuations: pad with dead rows
                rows.append(rows[0])
                words.append(words[0])
                kept.append(float("-inf"))
            prefixes[source] = [prefixes[source][row] + (word,) for row, word in zip(rows, words)]
            keep_rows += [block * width + row for row in rows]
            keep_words += words
            keep_scores.append(kept)
            still.append(source)
        if not still:
            break
        state = state.select(torch.tensor(keep_rows, dtype=torch.long, device=device))
        prev = torch.tensor(keep_words, dtype=torch.long, device=device)
        scores = torch.tensor(keep_scores, dtype=torch.float64, device=device)
        active = still
        width = k
        step += 1
    for hypotheses in finished:
        hypotheses.sort(key=lambda hypothesis: -hypothesis.log_p)
    return finished


def _padded(sources: Sequence[Sequence[int]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(src) for src in sources], dtype=torch.long)
    src = torch.full((len(sources), int(lengths.max())), PAD_ID, dtype=torch.long)
    for row, ids in enumerate(sources):
        src[row, :len(ids)] = torch.tensor(list(ids), dtype=torch.long)
    return src.to(device), lengths.to(device)


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


def _done(finished: list, live_scores: list, k: int, until_unbeaten: bool) -> bool:
    """Whether a source's search can stop: K finished, and (until_unbeaten) no live hypothesis
    above the K-th best of them."""
    if len(finished) < k:
        return False
    return not until_unbeaten or max(live_scores) <= sorted(h.log_p for h in finished)[-k]


def _advance(row_scores: list, row_index: list, vocab: int, k: int, prefixes: list,
             finished: list, forced: bool) -> tuple[list, list, list]:
    """One source's step: finish the [EOS] continuations among its first K, keep K live ones."""
    rows, words, kept = [], [], []
    for rank, (score, index) in enumerate(zip(row_scores, row_index)):
        if score == float("-inf"):
            break
        row, word = divmod(index, vocab)
        if word == EOS_ID:
            if rank < k:
                finished.append(Hypothesis(prefixes[row], score, forced_end=forced))
        elif len(rows) < k:
            rows.append(row)
            words.append(word)
            kept.append(score)
    return rows, words, kept
