"""The translations of many sources at once, for translating whole files: the one beam search
(rescorer.models.search.beam_search_many, which `search.beam_search` runs on one source), its
finished hypotheses ranked with a length penalty.

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

from rescorer.models import PhraseScorer
from rescorer.models.base import in_eval_mode
from rescorer.models.search import Hypothesis, beam_search_many

__all__ = ["Translation", "batch_beam_search", "length_penalty"]


@dataclass(frozen=True)
class Translation:
    hypothesis: Hypothesis
    score: float  # log p / length_penalty: what the hypotheses of a source are ranked by


def length_penalty(num_words: int, alpha: float) -> float:
    """Wu et al. (2016): ((5 + |y|) / 6) ** alpha, |y| = words + [EOS]."""
    return ((5.0 + num_words + 1) / 6.0) ** alpha


@torch.inference_mode()
@in_eval_mode
def batch_beam_search(model: PhraseScorer, sources: Sequence[Sequence[int]], beam_size: int,
                      max_lengths: Sequence[int], alpha: float = 0.0,
                      nbest: int = 1, min_length: int = 1) -> list[list[Translation]]:
    """The `nbest` best of the `beam_size` targets beam search finds for each source, best first
    (rescorer.models.search.beam_search_many, which says what `max_lengths` and `min_length` do)."""
    if beam_size < 1 or not 1 <= nbest <= beam_size:
        raise ValueError(f"need beam size >= 1 and 1 <= nbest <= beam size, found {beam_size}, {nbest}")
    finished = beam_search_many(model, sources, beam_size, max_lengths, min_length)
    return [_best(hypotheses, alpha, nbest) for hypotheses in finished]


def _best(hypotheses: list[Hypothesis], alpha: float, nbest: int) -> list[Translation]:
    ranked = [Translation(h, h.log_p / length_penalty(len(h.tokens), alpha)) for h in hypotheses]
    ranked.sort(key=lambda translation: (translation.hypothesis.forced_end, -translation.score))
    return ranked[:nbest]
