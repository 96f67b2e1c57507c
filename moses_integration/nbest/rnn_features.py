"""Add the RNN score to a Moses n-best list as a named dense feature (`RNN0= -12.34`), so
that an n-best reranker or mert's extractor can use it, keeping every other byte.

Line format (moses/Manager.cpp OutputNBest): `id ||| hyp ||| features ||| total`, then, with
-include-segmentation-in-n-best, ` ||| 0-1=0-1 2=2 ...` (source range=target range per
phrase). With a segmentation the feature is the sum of log p over the hypothesis' phrase
pairs (what the phrase-table column gives the decoder); without one it is log p of the whole
hypothesis given its source sentence. The total (field 4) is left as the decoder wrote it.

Two passes over the list: the first checks every field of every line (nbest_lines, the checker
every n-best reader shares) and judges the list's language (language_check), so that a bad list
is refused in one line before a model scores anything or a byte is written, to a file or to
stdout; the second scores and writes."""

from __future__ import annotations

import re
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Sequence

import numpy as np

from rescorer.counts import counted
from rescorer.io.atomic_output import AtomicOutput

from ..errors import NbestFormatError
from ..line_files import decoded, open_binary_read, read_lines
from ..feature_field import dense_name_problem
from .language_check import TextChecks, check_language, check_utf8
from .nbest_lines import SEP, ListSummary, NbestChecker, NbestLine, checked_lines
from .segmentation import parse_segmentation, phrase_pairs

__all__ = ["Scorer", "parse_segmentation", "rescore_nbest", "LOG_FLOOR", "NbestModel", "NbestScored",
           "LineBar", "no_bar", "add_sentence_features", "iter_feature_values"]

Scorer = Callable[[Sequence[tuple[str, str]]], np.ndarray]
LineBar = Callable[[int], ContextManager[Any]]  # total lines -> a progress bar whose update(n) counts lines written
LOG_FLOOR = -100.0  # as in the phrase-table column: exp(-100) is the smallest score written


class _NoBar:
    def update(self, lines: int) -> None:
        pass


def no_bar(total: int) -> ContextManager[Any]:
    return nullcontext(_NoBar())


@dataclass(frozen=True)
class NbestScored:
    """What adding features to a list did, for the command's summary."""

    lines: int
    sentences: int
    names: list  # the features added, in the order written
    means: list  # the mean value written for each
    per_phrase: bool  # summed over each hypothesis's phrase pairs (else: the whole hypothesis)
    seconds: float

    def report(self, output: Path) -> str:
        means = ", ".join(f"{name} {mean:.3f}" for name, mean in zip(self.names, self.means))
        what = "each the sum over the hypothesis's phrase pairs" if self.per_phrase else "of whole hypotheses"
        rate = self.lines / self.seconds if self.seconds > 0 else 0.0
        return (f"lines in {self.lines}, out {self.lines} ({counted(self.sentences, 'sentence')}); "
                f"added {', '.join(name + '=' for name in self.names)} {what}; mean {means}; "
                f"{self.seconds:.1f} s, {rate:.0f} lines/s; wrote {output}")


def _floor(scores: np.ndarray, pairs: Sequence[tuple[str, str]], per_phrase: bool) -> np.ndarray:
    """Phrase pairs are floored at LOG_FLOOR exactly as the table column is (what the decoder
    sees); a sentence score is kept as is unless not finite, then LOG_FLOOR per target token."""
    if per_phrase:
        return np.maximum(np.nan_to_num(scores, nan=LOG_FLOOR, neginf=LOG_FLOOR), LOG_FLOOR)
    bad = ~np.isfinite(scores)
    floors = np.array([LOG_FLOOR * (len(t.split()) + 1) for _, t in pairs], dtype=float)
    return np.where(bad, floors, scores) if len(scores) else scores


def _with_features(line: NbestLine, added: bytes) -> bytes:
    """The line's bytes with `added` (b" NAME= value ...") after its last feature."""
    fields = list(line.fields)
    kept = fields[2].rstrip(b" ")
    fields[2] = kept + added + fields[2][len(kept):]
    return SEP.join(fields) + line.ending


def _read_sources(source_path: Path, checks: Sequence[TextChecks]) -> list[str]:
    """The decoder's input, each line checked as the models ask (UTF-8 for a subword model)."""
    sources = read_lines(source_path)
    for line_no, line in enumerate(sources, start=1):
        check_utf8(line, f"{source_path}:{line_no}", checks)
    return sources


def _checked_list(nbest_path: Path, sources: list, source_path: Path, adding: Sequence[str],
                  checks: Sequence[TextChecks], judged_lines: int,
                  needs_segmentation: bool = False) -> tuple[ListSummary, list[str]]:
    """The first pass: every line checked, none kept but the first `judged_lines` hypotheses (for
    the language check); a list whose features already hold one to be added is refused. Each
    line is scored on its own, so a list of some of the source's sentences is taken."""
    checker = NbestChecker(nbest_path, sources, str(source_path), needs_segmentation=needs_segmentation,
                           checks=checks, every_sentence=False)
    first: list[str] = []
    with open_binary_read(nbest_path) as handle:
        for raw in handle:
            line = checker.check(raw)
            if len(first) < judged_lines:
                first.append(line.hypothesis)
    listed = checker.finish()
    taken = [name for name in adding if f"{name}_0" in listed.feature_names]
    if taken:
        raise NbestFormatError(f"{nbest_path}:1: the features already contain {taken[0]}=")
    return listed, first


def _second_pass(nbest_path: Path, sources: list, source_path: Path, checks: Sequence[TextChecks],
                 needs_segmentation: bool = False) -> Iterable[NbestLine]:
    """The lines again, checked again (a list changed between the passes is not written on)."""
    return checked_lines(nbest_path, sources, str(source_path), needs_segmentation=needs_segmentation,
                         checks=checks, every_sentence=False)


@dataclass(frozen=True)
class NbestModel:
    """A model whose log p becomes features of n-best lines: `NAME= log p` and, with per_word
    (add_sentence_features), `NAMEPerWord= log p / words`, words of the side the model predicts
    (the hypothesis for a source->target model, the source sentence for a target->source one)."""

    name: str
    scorer: Scorer  # (source, hypothesis) pairs -> log p, oriented by the model itself
    predicts_source: bool = False
    # what the model asks of the list and its sources (language_check): a list in its language and
    # tokenization, UTF-8 text for a subword model
    checks: TextChecks = TextChecks()

    def __post_init__(self):
        problem = dense_name_problem(self.name)
        if problem:
            raise ValueError(problem)


def rescore_nbest(nbest_path: Path, out_path: Path, source_path: Path, model: NbestModel,
                  mode: str = "auto", chunk_lines: int = 5000, force: bool = False,
                  bar: LineBar = no_bar) -> NbestScored:
    """Write `nbest_path` to `out_path` with `model.name= log p` added to each line's features:
    of the whole hypothesis, or (mode phrase; auto with a segmented list) summed over its phrase pairs.

    `source_path` is the decoder's input (line i = sentence id i); gzip in/out is handled by
    magic bytes / `.gz` name. `out_path` appears only once complete (AtomicOutput); an existing
    one is replaced only with `force`. A list or source the model cannot read as its own is
    refused (`model.checks`, language_check). `bar(total)` shows the lines written."""
    if mode not in ("auto", "sentence", "phrase"):
        raise ValueError(f"mode must be auto, sentence or phrase, found {mode!r}")
    started = time.perf_counter()
    checks = model.checks
    sources = _read_sources(source_path, [checks])
    listed, first = _checked_list(nbest_path, sources, source_path, [model.name], [checks], chunk_lines,
                                  needs_segmentation=mode == "phrase")
    per_phrase = mode == "phrase" or (mode == "auto" and listed.segmented)
    if not per_phrase:  # a phrase pair's words say too little of a list's language
        check_language(first, [checks.judge], nbest_path)
    name = model.name.encode()
    total = 0.0
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with AtomicOutput(out_path, force=force, input_path=nbest_path) as out, bar(listed.lines) as progress:
        chunk: list = []
        for line in _second_pass(nbest_path, sources, source_path, [checks], needs_segmentation=mode == "phrase"):
            source = sources[line.sentence]
            pairs = (phrase_pairs(source, line.hypothesis, line.segmentation or []) if per_phrase
                     else [(source, line.hypothesis)])
            chunk.append((line, pairs))
            if len(chunk) >= chunk_lines:
                total += _flush(chunk, model.scorer, name, out, per_phrase, progress)
        total += _flush(chunk, model.scorer, name, out, per_phrase, progress)
    return NbestScored(listed.lines, listed.sentences, [model.name], [total / max(listed.lines, 1)], per_phrase,
                       time.perf_counter() - started)


def _flush(chunk: list, scorer: Scorer, name: bytes, out, per_phrase: bool, progress) -> float:
    """Score and write the chunk's lines; returns the sum of the values written."""
    pairs = [pair for _, group in chunk for pair in group]
    scores = np.asarray(scorer(pairs), dtype=float) if pairs else np.zeros(0)
    scores = _floor(scores, pairs, per_phrase)
    position, total = 0, 0.0
    for line, group in chunk:
        value = float(scores[position:position + len(group)].sum())
        position += len(group)
        total += value
        out.write(_with_features(line, b" " + name + b"= " + f"{value:.6g}".encode()))
    progress.update(len(chunk))
    chunk.clear()
    return total


def iter_feature_values(path: Path, feature_name: str) -> Iterable[float]:
    """Values of one dense feature in an n-best list (for checks and tests)."""
    pattern = re.compile(re.escape(feature_name) + r"= (\S+)")
    with open_binary_read(path) as handle:
        for line in handle:
            match = pattern.search(decoded(line).split("|||")[2])
            if match:
                yield float(match.group(1))


def add_sentence_features(nbest_path: Path, out_path: Path, source_path: Path,
                          models: Sequence[NbestModel], per_word: bool = True,
                          chunk_lines: int = 20000, force: bool = False, bar: LineBar = no_bar) -> NbestScored:
    """Write `nbest_path` to `out_path` with every model's features added to each line (after
    the decoder's own, in the order given), every other byte kept; a list or source a model
    cannot read as its own is refused (its `checks`). `bar(total)` shows the lines written."""
    started = time.perf_counter()
    checks = [model.checks for model in models]
    sources = _read_sources(source_path, checks)
    adding = [name for model in models for name in (model.name, model.name + "PerWord")]
    listed, first = _checked_list(nbest_path, sources, source_path, adding, checks, chunk_lines)
    check_language(first, [model.checks.judge for model in models], nbest_path)
    names = _names(models, per_word)
    totals = np.zeros(len(names))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with AtomicOutput(out_path, force=force, input_path=nbest_path) as out, bar(listed.lines) as progress:
        chunk: list = []
        for line in _second_pass(nbest_path, sources, source_path, checks):
            chunk.append((line, sources[line.sentence]))
            if len(chunk) >= chunk_lines:
                totals += _write_sentence_features(chunk, models, per_word, out, progress)
        totals += _write_sentence_features(chunk, models, per_word, out, progress)
    return NbestScored(listed.lines, listed.sentences, names, list(totals / max(listed.lines, 1)), False,
                       time.perf_counter() - started)


def _write_sentence_features(chunk: list, models: Sequence[NbestModel], per_word: bool, out,
                             progress) -> np.ndarray:
    """Score and write the chunk's lines; returns the sum of each feature written."""
    pairs = [(source, line.hypothesis) for line, source in chunk]
    columns = []
    for model in models:
        scores = _floor(np.asarray(model.scorer(pairs), dtype=float) if pairs else np.zeros(0), pairs, False)
        columns.append(scores)
        if per_word:
            words = [len((source if model.predicts_source else hypothesis).split()) for source, hypothesis in pairs]
            columns.append(scores / np.maximum(words, 1))
    for row, (line, _) in enumerate(chunk):
        added = "".join(f" {name}= {column[row]:.6g}" for name, column in zip(_names(models, per_word), columns))
        out.write(_with_features(line, added.encode()))
    progress.update(len(chunk))
    chunk.clear()
    return np.array([column.sum() for column in columns]) if columns and len(pairs) else np.zeros(len(columns))


def _names(models: Sequence[NbestModel], per_word: bool) -> list[str]:
    return [name for model in models for name in ([model.name, model.name + "PerWord"] if per_word else [model.name])]
