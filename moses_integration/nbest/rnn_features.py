"""Add the RNN score to a Moses n-best list as a named dense feature (`RNN0= -12.34`), so
that an n-best reranker or mert's extractor can use it, keeping every other byte.

Line format (moses/Manager.cpp OutputNBest): `id ||| hyp ||| features ||| total`, then, with
-include-segmentation-in-n-best, ` ||| 0-1=0-1 2=2 ...` (source range=target range per
phrase). With a segmentation the feature is the sum of log p over the hypothesis' phrase
pairs (what the phrase-table column gives the decoder); without one it is log p of the whole
hypothesis given its source sentence. The total (field 4) is left as the decoder wrote it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from rescorer.io.atomic_output import AtomicOutput

from ..errors import NbestFormatError
from ..line_files import decoded, open_binary_read, read_lines
from .language_check import TextChecks, check_language, check_utf8
from .segmentation import checked_segmentation, find_segmentation, parse_segmentation, phrase_pairs

__all__ = ["Scorer", "parse_segmentation", "rescore_nbest", "LOG_FLOOR", "SentenceModel",
           "add_sentence_features", "split_line"]

Scorer = Callable[[Sequence[tuple[str, str]]], np.ndarray]
SEP = b" ||| "
LOG_FLOOR = -100.0  # as in the phrase-table column: exp(-100) is the smallest score written


def _pairs_of(fields: list[bytes], source: str, mode: str, where: str) -> tuple[bool, list[tuple[str, str]]]:
    """(per_phrase, pairs) for one n-best line; a segmentation that does not fit the source and
    the hypothesis is refused (segmentation.checked_segmentation)."""
    hyp = decoded(fields[1])
    segmentation = find_segmentation(fields)
    if mode == "sentence" or (mode == "auto" and segmentation is None):
        return False, [(source, hyp.strip())]
    if segmentation is None:
        raise NbestFormatError(f"{where}: mode 'phrase' needs an n-best list written with "
                               "-include-segmentation-in-n-best")
    spans = checked_segmentation(segmentation, len(source.split()), len(hyp.split()), where)
    return True, phrase_pairs(source, hyp, spans)


def _floor(scores: np.ndarray, pairs: Sequence[tuple[str, str]], per_phrase: bool) -> np.ndarray:
    """Phrase pairs are floored at LOG_FLOOR exactly as the table column is (what the decoder
    sees); a sentence score is kept as is unless not finite, then LOG_FLOOR per target token."""
    if per_phrase:
        return np.maximum(np.nan_to_num(scores, nan=LOG_FLOOR, neginf=LOG_FLOOR), LOG_FLOOR)
    bad = ~np.isfinite(scores)
    floors = np.array([LOG_FLOOR * (len(t.split()) + 1) for _, t in pairs], dtype=float)
    return np.where(bad, floors, scores) if len(scores) else scores


def _flush(chunk: list, scorer: Scorer, name: bytes, out, per_phrase: bool) -> None:
    pairs = [pair for _, group in chunk for pair in group]
    scores = np.asarray(scorer(pairs), dtype=float) if pairs else np.zeros(0)
    scores = _floor(scores, pairs, per_phrase)
    position = 0
    for (fields, ending), group in chunk:
        value = float(scores[position:position + len(group)].sum())
        position += len(group)
        fields[2] = fields[2].rstrip(b" ") + b" " + name + b"= " + f"{value:.6g}".encode() \
            + fields[2][len(fields[2].rstrip(b" ")):]
        out.write(SEP.join(fields) + ending)
    chunk.clear()


def _judged_flush(chunk: list, lines_read: int, checks: TextChecks, nbest_path: Path, scorer: Scorer,
                  name: bytes, out, per_phrase: bool) -> None:
    """_flush, after judging the list's first chunk when it holds whole hypotheses (a phrase
    pair's words say too little of a list's language)."""
    if lines_read == len(chunk) and not per_phrase:
        check_language([group[0][1] for _, group in chunk], [checks.judge], nbest_path)
    _flush(chunk, scorer, name, out, per_phrase)


def _read_sources(source_path: Path, checks: Sequence[TextChecks]) -> list[str]:
    """The decoder's input, each line checked as the models ask (UTF-8 for a subword model)."""
    sources = read_lines(source_path)
    for line_no, line in enumerate(sources, start=1):
        check_utf8(line, f"{source_path}:{line_no}", checks)
    return sources


def split_line(body, where: str, num_sentences: int, source_name: str) -> list:
    """The ' ||| ' fields of an n-best line (bytes or str, without its line end), checked:
    at least four, a sentence id first, and a sentence the source has."""
    fields = body.split(SEP if isinstance(body, bytes) else SEP.decode())
    if len(fields) < 4 or not fields[0].strip().isdigit():
        raise NbestFormatError(f"{where}: expected 'id ||| hypothesis ||| features ||| total', "
                               f"found {len(fields)} field(s)")
    if int(fields[0]) >= num_sentences:
        raise NbestFormatError(f"{where}: sentence id {int(fields[0])} but {source_name} has only "
                               f"{num_sentences} lines")
    return fields


def _checked_lines(src, nbest_path: Path, sources: list, source_path: Path, taken: re.Pattern):
    """(where, fields, line end) of each n-best line, checked by split_line; a line whose
    features already hold one to be added (`taken`, the name its group 2) is refused."""
    for count, line in enumerate(src, start=1):
        body = line.rstrip(b"\r\n")
        where = f"{nbest_path}:{count}"
        fields = split_line(body, where, len(sources), str(source_path))
        found = taken.search(fields[2])
        if found:
            raise NbestFormatError(f"{where}: the features already contain {found.group(2).decode()}=")
        yield where, fields, line[len(body):]


def rescore_nbest(nbest_path: Path, out_path: Path, source_path: Path, scorer: Scorer,
                  feature_name: str = "RNN0", mode: str = "auto", chunk_lines: int = 5000,
                  force: bool = False, checks: TextChecks = TextChecks()) -> int:
    """Write `nbest_path` to `out_path` with `feature_name= value` added to each line's features.

    `source_path` is the decoder's input (line i = sentence id i); gzip in/out is handled by
    magic bytes / `.gz` name. `out_path` appears only once complete (AtomicOutput); an existing
    one is replaced only with `force`. A list or source the model cannot read as its own is
    refused (`checks`, language_check). Returns the number of lines written."""
    if mode not in ("auto", "sentence", "phrase"):
        raise ValueError(f"mode must be auto, sentence or phrase, found {mode!r}")
    sources = _read_sources(source_path, [checks])
    name = feature_name.encode()
    chunk: list = []
    count = 0
    per_phrase = False
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open_binary_read(nbest_path) as src, \
            AtomicOutput(out_path, force=force, input_path=nbest_path) as out:
        taken = re.compile(rb"(^|\s)(" + re.escape(name) + rb")=")
        for count, (where, fields, ending) in enumerate(_checked_lines(src, nbest_path, sources, source_path,
                                                                       taken), start=1):
            sentence_id = int(fields[0])
            check_utf8(decoded(fields[1]).strip(), where, [checks])
            line_per_phrase, group = _pairs_of(fields, sources[sentence_id], mode, where)
            if chunk and line_per_phrase != per_phrase:
                _judged_flush(chunk, count - 1, checks, nbest_path, scorer, name, out, per_phrase)
            per_phrase = line_per_phrase
            chunk.append(((fields, ending), group))
            if len(chunk) >= chunk_lines:
                _judged_flush(chunk, count, checks, nbest_path, scorer, name, out, per_phrase)
        _judged_flush(chunk, count, checks, nbest_path, scorer, name, out, per_phrase)
    return count


def iter_feature_values(path: Path, feature_name: str) -> Iterable[float]:
    """Values of one dense feature in an n-best list (for checks and tests)."""
    pattern = re.compile(re.escape(feature_name) + r"= (\S+)")
    with open_binary_read(path) as handle:
        for line in handle:
            match = pattern.search(decoded(line).split(" ||| ")[2])
            if match:
                yield float(match.group(1))


@dataclass(frozen=True)
class SentenceModel:
    """A sentence model's features for n-best reranking: `NAME= log p` and, with per_word,
    `NAMEPerWord= log p / words`, words of the side the model predicts (the hypothesis for a
    source->target model, the source sentence for a target->source one)."""

    name: str
    scorer: Scorer  # (source, hypothesis) pairs -> log p, oriented by the model itself
    predicts_source: bool = False
    # what the model asks of the list and its sources (language_check): a list in its language and
    # tokenization, UTF-8 text for a subword model
    checks: TextChecks = TextChecks()

    def __post_init__(self):
        if "_" in self.name or not self.name or " " in self.name:
            raise ValueError(f"feature name {self.name!r}: Moses' extractor reads a name with '_' as a "
                             f"sparse feature; use letters and digits")


def add_sentence_features(nbest_path: Path, out_path: Path, source_path: Path,
                          models: Sequence[SentenceModel], per_word: bool = True,
                          chunk_lines: int = 20000, force: bool = False) -> int:
    """Write `nbest_path` to `out_path` with every model's features added to each line (after
    the decoder's own, in the order given), every other byte kept; a list or source a model
    cannot read as its own is refused (its `checks`). Returns the lines written."""
    checks = [model.checks for model in models]
    sources = _read_sources(source_path, checks)
    chunk: list = []
    count = 0
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open_binary_read(nbest_path) as src, \
            AtomicOutput(out_path, force=force, input_path=nbest_path) as out:
        names = b"|".join(re.escape(model.name.encode()) for model in models)
        taken = re.compile(rb"(^|\s)(" + names + rb")(PerWord)?=")
        for count, (where, fields, ending) in enumerate(_checked_lines(src, nbest_path, sources, source_path,
                                                                       taken), start=1):
            source, hypothesis = sources[int(fields[0])], decoded(fields[1]).strip()
            check_utf8(hypothesis, where, checks)
            chunk.append((fields, ending, source, hypothesis))
            if len(chunk) >= chunk_lines:
                if count == len(chunk):
                    _check_vocabulary(chunk, models, nbest_path)
                _write_sentence_features(chunk, models, per_word, out)
        if count == len(chunk):
            _check_vocabulary(chunk, models, nbest_path)
        _write_sentence_features(chunk, models, per_word, out)
    return count


def _check_vocabulary(chunk: list, models: Sequence[SentenceModel], nbest_path: Path) -> None:
    """Refuse, in one line, a list whose first lines (`chunk`) a model does not read as its own."""
    check_language([hypothesis for _, _, _, hypothesis in chunk], [model.checks.judge for model in models],
                   nbest_path)


def _write_sentence_features(chunk: list, models: Sequence[SentenceModel], per_word: bool, out) -> None:
    pairs = [(source, hypothesis) for _, _, source, hypothesis in chunk]
    added = [b""] * len(chunk)
    for model in models:
        scores = _floor(np.asarray(model.scorer(pairs), dtype=float) if pairs else np.zeros(0), pairs, False)
        for row, ((source, hypothesis), value) in enumerate(zip(pairs, scores)):
            text = f" {model.name}= {value:.6g}"
            if per_word:
                words = len((source if model.predicts_source else hypothesis).split())
                text += f" {model.name}PerWord= {value / max(words, 1):.6g}"
            added[row] += text.encode()
    for (fields, ending, _, _), extra in zip(chunk, added):
        kept = fields[2].rstrip(b" ")
        fields[2] = kept + extra + fields[2][len(kept):]
        out.write(SEP.join(fields) + ending)
    chunk.clear()
