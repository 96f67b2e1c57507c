"""Beam search over many sources at once, for translating whole files.

`search.beam_search` decodes one source; here B sources share every step, K rows each, so a
step is one (B*K, vocab) softmax instead of B small ones. The rule is the same (fairseq's: of
the 2K best continuations of a source, those of the first K that end with [EOS] are finished,
the first K that do not stay live; a source is done once K have finished), so beam 1 is greedy
decoding and every source gets exactly what `search.beam_search` gives it alone (which has no
`min_length`: a phrase has a word, a sentence may be asked for more). A finished source leaves
the batch.

Finished hypotheses are ranked by log p divided by the length penalty of Wu et al. (2016),
((5 + |y|) / 6) ** alpha with |y| counting [EOS]: alpha 0 ranks by log p itself, which
prefers short outputs; larger alphas favour longer ones. A hypothesis that ended only because
it reached the length bound ranks below every one that ended by the model's choice: with a
length penalty, a loop cut at the bound would otherwise win by its length alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models import PhraseScorer
from rescorer.models.base import in_eval_mode
from rescorer.models.search import Hypothesis

__all__ = ["Translation", "batch_beam_search", "length_penalty"]


@dataclass(frozen=True)
class Translation:
    hypothesis: Hypothesis
    score: float  # log p / length_penalty: what the hypotheses of a source are ranked by


def length_penalty(num_words: int, alpha: float) -> float:
    """Wu et al. (2016): ((5 + |y|) / 6) ** alpha, |y| = words + [EOS]."""
    return ((5.0 + num_words + 1) / 6.0) ** alpha


def _padded(sources: Sequence[Sequence[int]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(src) for src in sources], dtype=torch.long)
    src = torch.full((len(sources), int(lengths.max())), PAD_ID, dtype=torch.long)
    for row, ids in enumerate(sources):
        src[row, :len(ids)] = torch.tensor(list(ids), dtype=torch.long)
    return src.to(device), lengths.to(device)


@torch.inference_mode()
@in_eval_mode
def batch_beam_search(model: PhraseScorer, sources: Sequence[Sequence[int]], beam_size: int,
                      max_lengths: Sequence[int], alpha: float = 0.0,
                      nbest: int = 1, min_length: int = 1) -> list[list[Translation]]:
    """The `nbest` best of the `beam_size` targets beam search finds for each source, best first.

    `max_lengths[b]` bounds source b's target (at that length [EOS] is its only choice); before
    `min_length` tokens [EOS] is never a choice (the max length wins where it is shorter).
    """
    if beam_size < 1 or not 1 <= nbest <= beam_size:
        raise ValueError(f"need beam size >= 1 and 1 <= nbest <= beam size, found {beam_size}, {nbest}")
    if any(not src for src in sources) or any(length < 1 for length in max_lengths) or min_length < 1:
        raise ValueError("every source needs a word, and max and min lengths of at least 1")
    device = next(model.parameters()).device
    count, k = len(sources), beam_size
    if count == 0:
        return []
    src, lengths = _padded(sources, device)
    state = model.start(src, lengths).select(torch.arange(count, device=device).repeat_interleave(k))
    active = list(range(count))  # the sources still searching, in row-block order
    prefixes = [[()] * k for _ in range(count)]
    scores = torch.full((count, k), float("-inf"), dtype=torch.float64, device=device)
    scores[:, 0] = 0.0  # one live hypothesis per source at the start
    prev = torch.full((count * k,), PAD_ID, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(count)]
    step = 0
    while active:
        log_probs, state, _ = model.step(state, prev)
        vocab = log_probs.size(1)
        log_probs = log_probs.double().view(len(active), k, vocab)
        log_probs[:, :, PAD_ID] = float("-inf")
        if step < min_length:  # step 0: a translation has a word; a source's max length wins over it
            too_short = torch.tensor([step < max_lengths[b] for b in active], device=device)
            log_probs[too_short, :, EOS_ID] = float("-inf")
        must_end = torch.tensor([step >= max_lengths[b] for b in active], device=device)
        if bool(must_end.any()):
            ended = torch.full_like(log_probs, float("-inf"))
            ended[:, :, EOS_ID] = log_probs[:, :, EOS_ID]
            log_probs = torch.where(must_end.view(-1, 1, 1), ended, log_probs)
        candidates = (scores.unsqueeze(2) + log_probs).view(len(active), k * vocab)
        top_scores, top_index = candidates.topk(min(2 * k, k * vocab), dim=1)
        keep_rows, keep_words, keep_scores, still = [], [], [], []
        for block, (row_scores, row_index) in enumerate(zip(top_scores.tolist(), top_index.tolist())):
            source = active[block]
            rows, words, kept = _advance(row_scores, row_index, vocab, k, prefixes[source], finished[source],
                                         forced=step >= max_lengths[source])
            if len(finished[source]) >= k or not rows:
                continue
            while len(rows) < k:  # fewer than K live continuations: pad with dead rows
                rows.append(rows[0])
                words.append(words[0])
                kept.append(float("-inf"))
            prefixes[source] = [prefixes[source][row] + (word,) for row, word in zip(rows, words)]
            keep_rows += [block * k + row for row in rows]
            keep_words += words
            keep_scores.append(kept)
            still.append(source)
        if not still:
            break
        state = state.select(torch.tensor(keep_rows, dtype=torch.long, device=device))
        prev = torch.tensor(keep_words, dtype=torch.long, device=device)
        scores = torch.tensor(keep_scores, dtype=torch.float64, device=device)
        active = still
        step += 1
    return [_best(hypotheses, alpha, nbest) for hypotheses in finished]


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


def _best(hypotheses: list[Hypothesis], alpha: float, nbest: int) -> list[Translation]:
    ranked = [Translation(h, h.log_p / length_penalty(len(h.tokens), alpha)) for h in hypotheses]
    ranked.sort(key=lambda translation: (translation.hypothesis.forced_end, -translation.score))
    return ranked[:nbest]
