"""A whole Moses n-best list with its phrase segmentation, read into arrays for reranking
without the decoder (the proxy bench): each line's features by extractor name, and the phrase
pairs the decoder used, so that a phrase-table column can be summed over them.

Every field of every line is checked before the list is used, so that nothing downstream
is computed from a line that Moses could not have written for this source:
- `id ||| hypothesis ||| features ||| total ||| segmentation [||| alignment]`, ids in order,
  each within the source and every source sentence present;
- the features parse and name the same dense features on every line; the total is a number;
- the segmentation translates each source word once and writes the hypothesis in order
  (segmentation.py); the word alignment, when present, stays inside both sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ..errors import NbestFormatError
from ..line_files import decoded, open_binary_read
from .candidates import feature_values
from .segmentation import Span, checked_segmentation, find_segmentation

__all__ = ["NbestList", "read_nbest_list"]

_ALIGNMENT = re.compile(rb"^\s*(\d+-\d+(\s+\d+-\d+)*)?\s*$")
_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")


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
        picked = [np.arange(self.starts[s], self.starts[s + 1]) for s in sentence_ids]
        index = np.concatenate(picked) if picked else np.zeros(0, dtype=int)
        starts = np.concatenate([[0], np.cumsum([len(p) for p in picked])]).astype(int)
        return NbestList(self.path, list(self.feature_names), self.features[index], starts,
                         [self.hypotheses[i] for i in index], [self.segmentations[i] for i in index],
                         [self.sources[s] for s in sentence_ids], self.line_numbers[index])


def _number(text: str, where: str, what: str) -> float:
    if not _NUMBER.match(text):
        raise NbestFormatError(f"{where}: {what} {text.strip()[:40]!r} is not a number")
    return float(text)


def _check_alignment(fields: Sequence[bytes], segmentation: bytes, source_words: int, target_words: int,
                     where: str) -> None:
    """The word alignment field after the segmentation, if any: `s-t` pairs inside both sentences."""
    after = list(fields[fields.index(segmentation) + 1:])
    if not after:
        return
    if len(after) > 1 or not _ALIGNMENT.match(after[0]):
        shown = b" ||| ".join(after).decode("utf-8", "replace")[:60]
        raise NbestFormatError(f"{where}: expected a word alignment 's-t ...' after the segmentation, "
                               f"found {shown!r}")
    for pair in after[0].split():
        s, t = (int(x) for x in pair.split(b"-"))
        if s >= source_words or t >= target_words:
            raise NbestFormatError(f"{where}: alignment point {pair.decode()} outside the sentence pair "
                                   f"({source_words} source, {target_words} target word(s))")


def _parse_line(raw: bytes, where: str, sources: Sequence[str], source_name: str):
    body = raw.rstrip(b"\r\n")
    fields = body.split(b" ||| ")
    if len(fields) < 5 or not fields[0].strip().isdigit():
        raise NbestFormatError(f"{where}: expected 'id ||| hypothesis ||| features ||| total ||| "
                               f"segmentation', found {len(fields)} field(s)")
    sentence = int(fields[0])
    if sentence >= len(sources):
        raise NbestFormatError(f"{where}: sentence id {sentence} but {source_name} has only "
                               f"{len(sources)} sentence(s)")
    hypothesis = " ".join(decoded(fields[1]).split())
    try:
        features = feature_values(decoded(fields[2]))
    except ValueError as error:
        raise NbestFormatError(f"{where}: bad features field ({error})") from None
    _number(decoded(fields[3]), where, "total")
    segmentation = find_segmentation(fields)
    if segmentation is None:
        raise NbestFormatError(f"{where}: no phrase segmentation; write the list with Moses' "
                               "-include-segmentation-in-n-best")
    source_words, target_words = len(sources[sentence].split()), len(hypothesis.split())
    spans = checked_segmentation(segmentation, source_words, target_words, where)
    _check_alignment(fields, segmentation, source_words, target_words, where)
    return sentence, hypothesis, features, spans


def read_nbest_list(path: Path, sources: Sequence[str], source_name: Optional[str] = None) -> NbestList:
    """Read and check the n-best list of `sources` (line i is sentence id i): one line naming
    the file, the line and the problem for the first line that does not fit."""
    source_name = source_name or "the source"
    names: Optional[list] = None
    rows: list = []
    hypotheses: list = []
    segmentations: list[list[tuple[Span, Span]]] = []
    counts = np.zeros(len(sources), dtype=np.int64)
    last = -1
    with open_binary_read(path) as handle:
        for line_no, raw in enumerate(handle, start=1):
            where = f"{path}:{line_no}"
            if not raw.strip():
                raise NbestFormatError(f"{where}: empty line; Moses writes none in an n-best list")
            sentence, hypothesis, features, spans = _parse_line(raw, where, sources, source_name)
            if sentence < last:
                raise NbestFormatError(f"{where}: sentence id {sentence} after {last}; Moses writes "
                                       "the sentences in order")
            line_names = [name for name, _ in features]
            if names is None:
                names = line_names
            elif line_names != names:
                raise NbestFormatError(f"{where}: features {' '.join(line_names)} differ from the first "
                                       f"line's {' '.join(names)}")
            last = sentence
            counts[sentence] += 1
            rows.append([value for _, value in features])
            hypotheses.append(hypothesis)
            segmentations.append(spans)
    missing = np.flatnonzero(counts == 0)
    if len(missing):
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise NbestFormatError(f"{path}: no hypotheses for {len(missing)} of the {len(sources)} sentences of "
                               f"{source_name} (ids {shown}); expected the n-best list of this source")
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    return NbestList(Path(path), names or [], np.asarray(rows, dtype=np.float64), starts, hypotheses,
                     segmentations, list(sources), np.arange(1, len(rows) + 1))
