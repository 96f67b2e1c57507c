"""A whole Moses n-best list with its phrase segmentation, read into arrays for reranking
without the decoder (the proxy bench): each line's features by extractor name, and the phrase
pairs the decoder used, so that a phrase-table column can be summed over them.

Every field of every line is checked before the list is used (nbest_lines, the checker every
n-best reader shares), the segmentation required, so that nothing downstream is computed from a
line that Moses could not have written for this source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from .nbest_lines import checked_lines
from .segmentation import Span

__all__ = ["NbestList", "read_nbest_list"]


@dataclass
class NbestList:
    """The hypotheses of sentences 0 .. num_sentences - 1, each sentence's together."""

    path: Path
    feature_names: list  # extractor names: LM0_0, TranslationModel0_2, ...
    features: np.ndarray  # (hypotheses, features) float64
    starts: np.ndarray  # (sentences + 1,) offsets: sentence s is rows starts[s]:starts[s+1]
    hypotheses: list  # the words of each hypothesis, stripped
    segmentations: list  # each hypothesis's [(source span, target span), ...] in target order
    sources: list  # the source sentence of each sentence id
    line_numbers: np.ndarray  # (hypotheses,) each row's line in `path`, for messages

    @property
    def num_sentences(self) -> int:
        return len(self.starts) - 1

    def sentence_of_rows(self) -> np.ndarray:
        """(hypotheses,) the sentence id of each row."""
        return np.repeat(np.arange(self.num_sentences), np.diff(self.starts))

    def rows(self, sentence_ids: Sequence[int]) -> "NbestList":
        """The list of those sentences only, renumbered from 0 in the order given (e.g. the
        odd lines of a dev set, on which MERT tunes)."""
        return self._picked([np.arange(self.starts[s], self.starts[s + 1]) for s in sentence_ids],
                            [self.sources[s] for s in sentence_ids])

    def first(self, size: int) -> "NbestList":
        """Each sentence's first `size` hypotheses, the decoder's best (a list is in its order):
        the list Moses writes when asked for a `size`-best list."""
        return self._picked([np.arange(start, min(end, start + size))
                             for start, end in zip(self.starts[:-1], self.starts[1:])], list(self.sources))

    def _picked(self, picked: list, sources: list) -> "NbestList":
        """The rows `picked` (one array of row numbers per sentence) of the sentences `sources`."""
        index = np.concatenate(picked) if picked else np.zeros(0, dtype=int)
        starts = np.concatenate([[0], np.cumsum([len(p) for p in picked])]).astype(int)
        return NbestList(self.path, list(self.feature_names), self.features[index], starts,
                         [self.hypotheses[i] for i in index], [self.segmentations[i] for i in index],
                         sources, self.line_numbers[index])


def read_nbest_list(path: Path, sources: Sequence[str], source_name: Optional[str] = None) -> NbestList:
    """Read and check the n-best list of `sources` (line i is sentence id i): one line naming
    the file, the line and the problem for the first line that does not fit."""
    sentences: list = []
    rows: list = []
    hypotheses: list = []
    segmentations: list[list[tuple[Span, Span]]] = []
    names: list = []
    for line in checked_lines(Path(path), sources, source_name or "the source", needs_segmentation=True):
        names = names or [name for name, _ in line.features]
        sentences.append(line.sentence)
        rows.append([value for _, value in line.features])
        hypotheses.append(" ".join(line.hypothesis.split()))
        segmentations.append(line.segmentation)
    counts = np.bincount(np.asarray(sentences, dtype=np.int64), minlength=len(sources))
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    return NbestList(Path(path), names, np.asarray(rows, dtype=np.float64).reshape(len(rows), -1),
                     starts, hypotheses, segmentations, list(sources), np.arange(1, len(rows) + 1))
