"""A hypothesis's phrase segmentation, as Moses prints it with `-include-segmentation-in-n-best`:
`0-1=0-1 2=2 ...`, one `source span=target span` per phrase pair in target order (0-based,
inclusive; `i` alone when a side has one word).

A phrase-based decoder translates every source word exactly once and writes the target phrases
one after another, so a segmentation that is well formed but leaves a source word out, uses one
twice, or points past either sentence did not come from the decoder with this source: it is
refused rather than scored, since a sum over the wrong phrase pairs is a wrong feature."""

from __future__ import annotations

import re
from typing import Optional, Sequence

from ..errors import NbestFormatError

__all__ = ["Span", "SEGMENTATION", "parse_segmentation", "checked_segmentation", "phrase_pairs",
           "find_segmentation"]

Span = tuple[int, int]  # half-open [start, end)
SEGMENTATION = re.compile(rb"^\s*\d+(-\d+)?=\d+(-\d+)?(\s+\d+(-\d+)?=\d+(-\d+)?)*\s*$")


_SEGMENT_PARTS = re.compile(rb"(\d+)(?:-(\d+))?=(\d+)(?:-(\d+))?")


def parse_segmentation(field: bytes) -> list[tuple[Span, Span]]:
    """`0-1=0-1 2=2` -> [((0, 2), (0, 2)), ((2, 3), (2, 3))]: half-open source/target spans.
    The field's form is not checked here: see `checked_segmentation`."""
    spans = []
    for s0, s1, t0, t1 in _SEGMENT_PARTS.findall(field):
        source, target = int(s0), int(t0)
        spans.append(((source, int(s1 or s0) + 1), (target, int(t1 or t0) + 1)))
    return spans


def _problem(spans: Sequence[tuple[Span, Span]], source_words: int, target_words: int) -> Optional[str]:
    covered = [False] * source_words
    next_target = 0
    for (s0, s1), (t0, t1) in spans:
        shown = f"{s0}-{s1 - 1}={t0}-{t1 - 1}"
        if s1 <= s0 or t1 <= t0:
            return f"segment {shown}: a span ends before it starts"
        if s1 > source_words:
            return f"segment {shown}: source span past the source's {source_words} word(s)"
        if t0 != next_target:
            return (f"segment {shown}: target spans must follow each other from word 0 "
                    f"(expected one starting at {next_target})")
        if t1 > target_words:
            return f"segment {shown}: target span past the hypothesis's {target_words} word(s)"
        if any(covered[s0:s1]):
            return f"segment {shown}: source words {s0}-{s1 - 1} overlap an earlier segment"
        covered[s0:s1] = [True] * (s1 - s0)
        next_target = t1
    if next_target != target_words:
        return f"the segments cover {next_target} of the hypothesis's {target_words} word(s)"
    if not all(covered):
        return f"source word {covered.index(False)} is in no segment (the source has {source_words} word(s))"
    return None


def checked_segmentation(field: bytes, source_words: int, target_words: int,
                         where: str) -> list[tuple[Span, Span]]:
    """The spans of `field`, refused in one line (`where: ...`) unless they translate each of the
    source's words once and write the hypothesis's words in order, each once. An empty field is
    no segments: what Moses writes for an empty hypothesis of an empty source line."""
    if field.strip() and not SEGMENTATION.match(field):
        raise NbestFormatError(f"{where}: segmentation {field.decode('utf-8', 'replace').strip()[:60]!r} "
                               "is not 'i-j=k-l ...'")
    spans = parse_segmentation(field)
    problem = _problem(spans, source_words, target_words)
    if problem:
        raise NbestFormatError(f"{where}: {problem}")
    return spans


def find_segmentation(fields: Sequence[bytes]) -> Optional[bytes]:
    """The segmentation among an n-best line's fields after the total (the word alignment that
    may follow has no '='), or None."""
    return next((field for field in fields[4:] if SEGMENTATION.match(field)), None)


def phrase_pairs(source: str, hypothesis: str, spans: Sequence[tuple[Span, Span]]) -> list[tuple[str, str]]:
    """The (source phrase, target phrase) pairs that the spans select, in target order."""
    src_words, tgt_words = source.split(), hypothesis.split()
    return [(" ".join(src_words[s0:s1]), " ".join(tgt_words[t0:t1])) for (s0, s1), (t0, t1) in spans]
