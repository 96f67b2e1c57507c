"""Moses n-best lists as a reranker reads them: each sentence's hypotheses with their dense
features, named as Moses' extractor names them (`LM0= -52.4` is `LM0_0`, the i-th value of
`TranslationModel0=` is `TranslationModel0_i`), so that the weights mert or kbmira tune (in
the order of the extractor's feature file) apply by name.

Line format (moses/Manager.cpp OutputNBest): `id ||| hypothesis ||| features ||| total`, maybe
followed by alignment fields. A name with `_` is a sparse feature to the extractor (mert/Data.cpp
InitFeatureMap) and, like it, is skipped here with its value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import NbestFormatError
from ..line_files import decoded, open_binary_read
from .rnn_features import split_line

__all__ = ["Candidate", "feature_values", "read_nbest", "check_every_sentence", "rerank", "first_best"]


@dataclass(frozen=True)
class Candidate:
    words: str  # the hypothesis, stripped
    features: tuple  # ((name, value), ...) in the line's order, extractor names


def feature_values(field: str) -> list[tuple[str, float]]:
    """`LM0= -52.4 TM0= -1 -2` -> [("LM0_0", -52.4), ("TM0_0", -1.0), ("TM0_1", -2.0)]."""
    values, name, index = [], None, 0
    tokens = field.split()
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if token.endswith("="):
            if "_" in token:  # a sparse feature: the extractor skips its value as well
                position += 1
                continue
            name, index = token[:-1], 0
            continue
        if name is None:
            raise ValueError(f"value {token!r} before any feature name")
        values.append((f"{name}_{index}", float(token)))
        index += 1
    return values


def read_nbest(path: Path, num_sentences: int) -> list[list[Candidate]]:
    """The hypotheses of sentences 0 .. num_sentences - 1, in the list's order (a sentence the
    decoder gave none has an empty list); every line must have the first line's features."""
    sentences: list[list[Candidate]] = [[] for _ in range(num_sentences)]
    names = None
    with open_binary_read(path) as handle:
        for line_no, raw in enumerate(handle, start=1):
            line = decoded(raw).rstrip("\r\n")
            if not line.strip():
                continue
            where = f"{path}:{line_no}"
            fields = split_line(line, where, num_sentences, "the set")
            sentence = int(fields[0])
            try:
                features = tuple(feature_values(fields[2]))
            except ValueError as error:
                raise NbestFormatError(f"{where}: bad features field ({error})") from None
            line_names = [name for name, _ in features]
            if names is None:
                names = line_names
            elif line_names != names:
                raise NbestFormatError(f"{where}: features {' '.join(line_names)} differ from the first "
                                       f"line's {' '.join(names)}")
            sentences[sentence].append(Candidate(fields[1].strip(), features))
    return sentences


def check_every_sentence(path: Path, num_sentences: int, source_name: str) -> None:
    """A given n-best list holds at least one hypothesis for each of the source's sentences.

    Moses gives every sentence of its input a line (an empty hypothesis where decoding failed),
    so a sentence without any was lost on the way (a list cut short, the list of another
    source), and reranking would score it as an empty translation. Read before any work, so
    that the refusal names the user's file and the sentences missing."""
    seen = bytearray(num_sentences)
    with open_binary_read(path) as handle:
        for line_no, raw in enumerate(handle, start=1):
            body = raw.rstrip(b"\r\n")
            if body.strip():
                seen[int(split_line(body, f"{path}:{line_no}", num_sentences, source_name)[0])] = 1
    missing = [sentence for sentence, found in enumerate(seen) if not found]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise NbestFormatError(f"{path}: no hypotheses for {len(missing)} of the {num_sentences} sentences of "
                               f"{source_name} (ids {shown}); Moses writes at least one line per sentence: "
                               f"expected the n-best list of this source")


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
