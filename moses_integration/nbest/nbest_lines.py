"""The lines of a Moses n-best list, every field of every line checked by one checker, which
every n-best reader of the project calls (`moses rescore-nbest`, the scoring step of `moses
rerank` and of the ablation's reranked rows, rerank's reading of the lists, the proxy bench),
so that nothing is computed from a line that Moses could not have written for this source.

What Moses writes (moses/Manager.cpp, OutputNBest), one line per hypothesis, each ending in '\\n':

    id ||| hypothesis ||| features ||| total [||| segmentation] [||| word alignment]

The fields are split at '|||' and trimmed, as Moses' extractor reads them (mert/Data.cpp): Moses
versions space an empty hypothesis differently, and the extractor is what reads the list next.
Checked, in one line naming the file, the line and the problem:
- the id: a sentence number of the source; the ids in order; every sentence of the source with at
  least one line (Moses writes one for each, an empty hypothesis for an empty source line);
- the hypothesis: any words, or none; UTF-8 where a model reads only that (`checks`);
- the features: `Name= v v ...`, finite numbers; a name with '_' is a sparse feature, one value
  the extractor skips; each dense name once, and the same dense names on every line;
- the total: a finite number;
- the segmentation (`-include-segmentation-in-n-best`): each source word translated once and the
  hypothesis written in order (segmentation.py); required where the caller sums over phrase pairs;
- the word alignment (`-print-alignment-info-in-n-best`): `s-t` points inside both sentences;
- nothing else after them, the same fields on every line, no empty line. A line may end in
  '\\r\\n'; the ending is kept for whoever writes the line back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

from ..errors import NbestFormatError
from ..line_files import decoded, open_binary_read
from ..feature_field import NUMBER, feature_values
from .language_check import TextChecks, check_utf8
from .segmentation import checked_segmentation

__all__ = ["SEP", "NbestLine", "NbestChecker", "ListSummary", "feature_values", "check_line", "checked_lines",
           "check_nbest"]

SEP = b"|||"
FIELDS = "'id ||| hypothesis ||| features ||| total'"
SEGMENTED_FIELDS = "'id ||| hypothesis ||| features ||| total ||| segmentation'"
NO_SEGMENTATION = "no phrase segmentation; write the list with Moses' -include-segmentation-in-n-best"

_ALIGNMENT = re.compile(rb"^\d+-\d+(\s+\d+-\d+)*$")


@dataclass(frozen=True)
class NbestLine:
    """One checked line: its fields as read (split at '|||', untrimmed: joined by '|||' again and
    followed by `ending`, they give the line's bytes) and what they say."""

    where: str  # FILE:LINE, for messages
    fields: list  # bytes
    ending: bytes  # b"\n", b"\r\n", or b"" for a last line without one
    sentence: int
    hypothesis: str  # the text (line_files.decoded), stripped
    features: tuple  # ((extractor name, value), ...), dense features only: LM0_0, TranslationModel0_2, ...
    segmentation: Optional[list]  # [(source span, target span), ...] in target order; None: the line has none
    extra_fields: str  # what follows the total: "", "segmentation", "alignment", "both" or "blank" (one empty field)


def _number(text: str, where: str, what: str) -> float:
    """A finite number as Moses prints one (`-2.48802`, `1e-05`), or one line saying what it is not."""
    if not NUMBER.match(text):
        raise NbestFormatError(f"{where}: {what} {text[:40]!r} is not a number")
    number = float(text)
    if not math.isfinite(number):
        raise NbestFormatError(f"{where}: {what} {text[:40]} is not a finite number")
    return number


def _extra(fields: Sequence[bytes], where: str, needs_segmentation: bool) -> tuple[Optional[bytes], Optional[bytes], str]:
    """(segmentation, word alignment, what follows the total) of one line: each is None when the
    line has none. A field with '=' is a segmentation (checked_segmentation says if it is a good
    one): a word alignment has none. One empty field after the total is what Moses writes for a
    hypothesis without words (no segments) or without alignment points: it is read as a
    segmentation when one is required, else left undecided ("blank") for the list to decide
    (NbestChecker)."""
    after = [field.strip() for field in fields[4:]]
    if not after:
        if needs_segmentation:
            raise NbestFormatError(f"{where}: expected {SEGMENTED_FIELDS}, found {len(fields)} field(s); "
                                   f"write the list with Moses' -include-segmentation-in-n-best")
        return None, None, ""
    segmented = b"=" in after[0] or (not after[0] and (len(after) > 1 or needs_segmentation))
    if needs_segmentation and not segmented:
        raise NbestFormatError(f"{where}: {NO_SEGMENTATION}")
    if len(after) > 2 and not segmented:
        raise NbestFormatError(f"{where}: expected at most a segmentation and a word alignment after the total, "
                               f"found {len(after)} fields")
    if len(after) > 2 or (len(after) == 2 and after[1] and not _ALIGNMENT.match(after[1])):
        shown = " ||| ".join(part.decode("utf-8", "replace") for part in after[1:])[:60]
        raise NbestFormatError(f"{where}: expected a word alignment 's-t ...' after the segmentation, "
                               f"found {shown!r}")
    if len(after) == 2:
        if not segmented:
            raise NbestFormatError(f"{where}: expected a segmentation 'i-j=k-l ...' before the word alignment, "
                                   f"found {after[0].decode('utf-8', 'replace')[:60]!r}")
        return after[0], after[1], "both"
    if segmented:
        return after[0], None, "segmentation"
    if _ALIGNMENT.match(after[0]):
        return None, after[0], "alignment"
    if not after[0]:
        return None, None, "blank"
    raise NbestFormatError(f"{where}: expected a segmentation 'i-j=k-l ...' or a word alignment 's-t ...' "
                           f"after the total, found {after[0].decode('utf-8', 'replace')[:60]!r}")


def _check_alignment(alignment: bytes, source_words: int, target_words: int, where: str) -> None:
    points = [int(number) for number in alignment.replace(b"-", b" ").split()]
    if points and (max(points[0::2]) >= source_words or max(points[1::2]) >= target_words):
        s, t = next((s, t) for s, t in zip(points[0::2], points[1::2]) if s >= source_words or t >= target_words)
        raise NbestFormatError(f"{where}: alignment point {s}-{t} outside the sentence pair "
                               f"({source_words} source, {target_words} target word(s))")


def check_line(raw: bytes, where: str, sources: Sequence[str], source_name: str = "the source", *,
               needs_segmentation: bool = False, checks: Sequence[TextChecks] = ()) -> NbestLine:
    """Every field of one n-best line (with its line ending or without), checked against the
    source sentences (`sources`, line i = sentence id i): one NbestFormatError naming `where` for
    the first problem. What a line is checked against the lines before it is NbestChecker's."""
    body = raw[:-1] if raw.endswith(b"\n") else raw
    body = body[:-1] if body.endswith(b"\r") else body
    if not body.strip():
        raise NbestFormatError(f"{where}: empty line; Moses writes none in an n-best list")
    fields = body.split(SEP)
    if len(fields) < 4:
        expected = SEGMENTED_FIELDS if needs_segmentation else FIELDS
        raise NbestFormatError(f"{where}: expected {expected}, found {len(fields)} field(s)")
    sentence_text = fields[0].strip()
    if not sentence_text.isdigit():  # bytes: ASCII digits only
        raise NbestFormatError(f"{where}: sentence id {sentence_text.decode('utf-8', 'replace')[:40]!r} is not "
                               f"a number")
    sentence = int(sentence_text)
    if sentence >= len(sources):
        raise NbestFormatError(f"{where}: sentence id {sentence} but {source_name} has only {len(sources)} "
                               f"sentence(s)")
    hypothesis = decoded(fields[1]).strip()
    check_utf8(hypothesis, where, checks)
    try:
        features = tuple(feature_values(decoded(fields[2])))
    except ValueError as error:
        raise NbestFormatError(f"{where}: bad features field ({error})") from None
    _number(decoded(fields[3]).strip(), where, "total")
    source_words, target_words = len(sources[sentence].split()), len(hypothesis.split())
    segmentation, alignment, extra = _extra(fields, where, needs_segmentation)
    spans = None if segmentation is None else checked_segmentation(segmentation, source_words, target_words, where)
    if alignment:
        _check_alignment(alignment, source_words, target_words, where)
    return NbestLine(where, fields, raw[len(body):], sentence, hypothesis, features, spans, extra)


@dataclass(frozen=True)
class ListSummary:
    """What a whole checked list holds."""

    lines: int
    sentences: int  # the sentences with at least one line
    feature_names: list  # the dense features of every line, extractor names
    segmented: bool  # the lines have phrase segmentations


class NbestChecker:
    """The checks of one list read line by line, in order: each line alone (check_line) and
    against the lines before it (ids in order, the same features, the same fields after the
    total); `finish` checks that every sentence of the source has a line, unless `every_sentence`
    is False: a caller that scores each line on its own (rescore-nbest) takes a list of some of
    the source's sentences (a slice of a list), where a reranker would read a missing sentence
    as an empty translation."""

    def __init__(self, path: Path, sources: Sequence[str], source_name: str = "the source", *,
                 needs_segmentation: bool = False, checks: Sequence[TextChecks] = (),
                 every_sentence: bool = True) -> None:
        self.path, self.sources, self.source_name = path, sources, source_name
        self.needs_segmentation, self.checks, self.every_sentence = needs_segmentation, checks, every_sentence
        self.counts = [0] * len(sources)
        self.lines = 0
        self.last_sentence = -1
        self.segmented = False
        self.first: Optional[NbestLine] = None
        self.extra = ""  # what the list has after the total, once a line says ("blank" says nothing)
        self.extra_line = ""  # the line that said it

    def check(self, raw: bytes) -> NbestLine:
        self.lines += 1
        where = f"{self.path}:{self.lines}"
        line = check_line(raw, where, self.sources, self.source_name, needs_segmentation=self.needs_segmentation,
                          checks=self.checks)
        first = self.first
        if first is None:
            self.first = first = line
        if line.sentence < self.last_sentence:
            raise NbestFormatError(f"{where}: sentence id {line.sentence} after {self.last_sentence}; Moses writes "
                                   "the sentences in order")
        names = [name for name, _ in line.features]
        first_names = [name for name, _ in first.features]
        if names != first_names:
            raise NbestFormatError(f"{where}: features {' '.join(names)} differ from the first line's "
                                   f"{' '.join(first_names)}")
        if len(line.fields) != len(first.fields):
            raise NbestFormatError(f"{where}: {len(line.fields)} fields, but the first line has {len(first.fields)}: "
                                   f"Moses writes every line of a list with the same fields")
        self._check_extra(line, where)
        self.counts[line.sentence] += 1
        self.last_sentence = line.sentence
        self.segmented = self.segmented or line.segmentation is not None
        return line

    def _check_extra(self, line: NbestLine, where: str) -> None:
        """A list has a segmentation on every line or on none, and so for a word alignment. A single
        empty field after the total fits either on a line without words; on one with words it is
        an empty word alignment (a segmentation would cover them)."""
        kind = line.extra_fields
        if kind == "blank":
            if not line.hypothesis:
                return
            kind = "alignment"
        if kind in ("both", "") or kind == self.extra:
            return
        if not self.extra:
            self.extra, self.extra_line = kind, where
            return
        named = {"segmentation": "a segmentation", "alignment": "a word alignment"}
        raise NbestFormatError(f"{where}: {named[kind]} after the total, but {named[self.extra]} at "
                               f"{self.extra_line}: Moses writes every line of a list with the same fields")

    def finish(self) -> ListSummary:
        """Every sentence of the source has a line; what the list holds."""
        missing = [sentence for sentence, count in enumerate(self.counts) if not count]
        if missing and self.every_sentence:
            shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
            raise NbestFormatError(f"{self.path}: no hypotheses for {len(missing)} of the {len(self.sources)} sentences "
                                   f"of {self.source_name} (ids {shown}); Moses writes at least one line per sentence: "
                                   f"expected the n-best list of this source")
        if not self.lines:
            raise NbestFormatError(f"{self.path}: an empty n-best list; Moses writes at least one line per sentence "
                                   f"of its input")
        names = [name for name, _ in self.first.features] if self.first is not None else []
        return ListSummary(self.lines, len(self.sources) - len(missing), names, self.segmented)


def checked_lines(path: Path, sources: Sequence[str], source_name: str = "the source", *,
                  needs_segmentation: bool = False, checks: Sequence[TextChecks] = (),
                  every_sentence: bool = True) -> Iterator[NbestLine]:
    """The lines of the list at `path` (gzip and the other compressions told by their bytes), each
    checked (NbestChecker) as it is read; the check that every sentence has a line comes after
    the last. A caller that must not act on a bad list reads it whole first (check_nbest)."""
    checker = NbestChecker(path, sources, source_name, needs_segmentation=needs_segmentation, checks=checks,
                           every_sentence=every_sentence)
    with open_binary_read(path) as handle:
        for raw in handle:
            yield checker.check(raw)
    checker.finish()


def check_nbest(path: Path, sources: Sequence[str], source_name: str = "the source", *,
                needs_segmentation: bool = False, checks: Sequence[TextChecks] = (),
                every_sentence: bool = True) -> ListSummary:
    """Check the whole list at `path` (see checked_lines), keeping none of it: what a command
    does before it scores or writes anything."""
    checker = NbestChecker(path, sources, source_name, needs_segmentation=needs_segmentation, checks=checks,
                           every_sentence=every_sentence)
    with open_binary_read(path) as handle:
        for raw in handle:
            checker.check(raw)
    return checker.finish()

