"""Moses' `extractor` without Moses: an n-best list's dense features and each hypothesis's BLEU
statistics against the references, written in the extractor's own text format, so that the
tuning step keeps the files mert would read (and Moses' mert can read these).

    FEATURES_TXT_BEGIN_0 <sentence> <hypotheses> <dims> <names ...>
    <values of each hypothesis>
    FEATURES_TXT_END_0

and the same with SCORES_TXT_BEGIN_0 ... 9 BLEU for the statistics (bleu_statistics.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from rescorer.io.atomic_output import atomic_paths

from ..line_files import read_lines
from .bleu_statistics import bleu_statistics
from .candidates import read_nbest
from .extractor_files import unique_order

__all__ = ["extract_in_python"]


def _value(value: float) -> str:
    return f"{value:g}"


def extract_in_python(nbest_path: Path, sources: Sequence[str], ref_paths: Sequence[Path], features_path: Path,
                      scores_path: Path) -> None:
    """Write the extractor's two files for `nbest_path`, the list of `sources` (checked against
    them), both whole or neither."""
    sentences = read_nbest(nbest_path, sources)
    references = [read_lines(path) for path in ref_paths]
    names = next((list(name for name, _ in candidates[0].features) for candidates in sentences if candidates), [])
    hypotheses = [candidate.words for candidates in sentences for candidate in candidates]
    refs = [[stream[s] for stream in references] for s, candidates in enumerate(sentences) for _ in candidates]
    stats = bleu_statistics(hypotheses, refs) if hypotheses else np.zeros((0, 9), dtype=np.int64)
    features_text, scores_text, row = [], [], 0
    for sentence, candidates in enumerate(sentences):
        values = np.array([[value for _, value in candidate.features] for candidate in candidates], dtype=np.float64)
        sentence_stats = stats[row:row + len(candidates)]
        row += len(candidates)
        # the extractor keeps one of each (features, statistics) and reorders as it drops
        keep = unique_order([f.tobytes() + s.tobytes() for f, s in zip(values, sentence_stats)])
        features_text.append(f"FEATURES_TXT_BEGIN_0 {sentence} {len(keep)} {len(names)} {' '.join(names)} \n")
        scores_text.append(f"SCORES_TXT_BEGIN_0 {sentence} {len(keep)} 9 BLEU\n")
        for index in keep:
            features_text.append("".join(_value(value) + " " for value in values[index]) + "\n")
            scores_text.append("".join(f"{int(v)} " for v in sentence_stats[index]) + "\n")
        features_text.append("FEATURES_TXT_END_0\n")
        scores_text.append("SCORES_TXT_END_0\n")
    with atomic_paths(features_path, scores_path) as (features, scores):
        features.write_text("".join(features_text), encoding="utf-8")
        scores.write_text("".join(scores_text), encoding="utf-8")
