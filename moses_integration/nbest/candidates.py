"""Moses n-best lists as a reranker reads them: each sentence's hypotheses with their dense
features, named as Moses' extractor names them (`LM0= -52.4` is `LM0_0`, the i-th value of
`TranslationModel0=` is `TranslationModel0_i`), so that the weights mert or kbmira tune (in
the order of the extractor's feature file) apply by name.

Every field of every line is checked first, by the checker every n-best reader shares
(nbest_lines.py): a list read here is whole and fits its source, or it is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import NbestFormatError
from ..feature_field import feature_values
from .nbest_lines import checked_lines

__all__ = ["Candidate", "feature_values", "read_nbest", "rerank", "first_best"]


@dataclass(frozen=True)
class Candidate:
    words: str  # the hypothesis, stripped
    features: tuple  # ((name, value), ...) in the line's order, extractor names


def read_nbest(path: Path, sources: Sequence[str], source_name: str = "the source") -> list[list[Candidate]]:
    """The hypotheses of each sentence of `sources` (line i = sentence id i), in the list's order;
    nothing is returned unless every line was checked (nbest_lines.checked_lines)."""
    sentences: list[list[Candidate]] = [[] for _ in sources]
    for line in checked_lines(path, sources, source_name):
        sentences[line.sentence].append(Candidate(line.hypothesis, line.features))
    return sentences


def rerank(sentences: Sequence[Sequence[Candidate]], weights: Mapping[str, float]) -> list[str]:
    """Each sentence's hypothesis of highest weighted feature sum (the first of equals: the
    decoder's order); '' for a sentence without hypotheses. Every feature needs a weight."""
    best = []
    for candidates in sentences:
        chosen, top = "", None
        for candidate in candidates:
            try:
                score = sum(weights[name] * value for name, value in candidate.features)
            except KeyError as missing:
                raise NbestFormatError(f"no weight for feature {missing.args[0]}") from None
            if top is None or score > top:
                chosen, top = candidate.words, score
        best.append(chosen)
    return best


def first_best(sentences: Sequence[Sequence[Candidate]]) -> list[str]:
    """The decoder's own 1-best: the first hypothesis of each sentence."""
    return [candidates[0].words if candidates else "" for candidates in sentences]
