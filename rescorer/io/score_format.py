"""How scores are written into a Moses phrase table.

Moses reads every phrase-table score as a 32-bit float, takes its natural log and floors it at
-100 (TransformScore, FloorScore in moses/Util.h). So a model log-probability must be written as
exp(log p), printed with enough digits that Moses' log() gives log p back: '%.7g' has a relative
error below 5e-7, hence a log error below 5e-7.

One limit is Moses' own: a 32-bit float is subnormal below exp(-87.3), so Moses cannot hold
exp(log p) precisely there; the value Moses recovers is off by up to ~1e-4 at log p = -95 and
~0.02 at -100. Our text is exact; `decode_moses_score(text, float32=True)` shows what Moses sees.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "SCORE_FORMATS",
    "MOSES_LOG_FLOOR",
    "MAX_COUNT",
    "format_moses_scores",
    "format_log_scores",
    "format_count_scores",
    "new_score_tokens",
    "decode_moses_score",
    "score_column",
    "column_index",
]

SCORE_FORMATS = ("prob", "log")  # exp(log p), for Moses, which takes logs; or raw log p
MOSES_LOG_FLOOR = -100.0  # Moses floors log(score) here (LOWEST_SCORE)
_FLOAT32_LOG_MAX = 88.7  # exp() of more overflows Moses' 32-bit floats
_FLOAT32_LOG_MIN_NORMAL = -87.3  # exp() of less is a subnormal 32-bit float
_FORMAT = "%.7g"
# The largest count whose exp() a 32-bit float holds (exp(88) = 1.65e38 < 3.4e38): the word
# penalty of a target with more unknown words is written as exp(MAX_COUNT), and counted.
MAX_COUNT = 88


def _as_checked_array(values: ArrayLike, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).ravel()
    bad = np.isnan(array) | (array == np.inf)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what}[{index}] is {array[index]} (expected a number, -inf or finite)")
    return array


def format_moses_scores(log_probs: ArrayLike) -> list[str]:
    """exp(max(log p, -100)) as text whose log() is log p (floored at -100) within 5e-7.

    -inf is fine (it becomes the floor); NaN, +inf and log p > 88.7 (which would overflow
    Moses' float) raise ValueError. Flooring first means no score prints as 0, whose log is -inf.
    """
    array = np.maximum(_as_checked_array(log_probs, "log_probs"), MOSES_LOG_FLOOR)
    if array.size and array.max() > _FLOAT32_LOG_MAX:
        index = int(array.argmax())
        raise ValueError(f"log_probs[{index}] is {array[index]} (expected at most {_FLOAT32_LOG_MAX})")
    return [_FORMAT % value for value in np.exp(array).tolist()]


def format_log_scores(log_probs: ArrayLike, floor: float | None = MOSES_LOG_FLOOR) -> list[str]:
    """log p as text ('--score-format log'), floored at `floor` (None: not floored, -inf refused)."""
    array = _as_checked_array(log_probs, "log_probs")
    if floor is not None:
        array = np.maximum(array, floor)
    elif np.isneginf(array).any():
        index = int(np.flatnonzero(np.isneginf(array))[0])
        raise ValueError(f"log_probs[{index}] is -inf (expected a finite number when floor is None)")
    return [_FORMAT % value for value in array.tolist()]


def format_count_scores(counts: ArrayLike) -> list[str]:
    """exp(count) as text, so that Moses' log() reads the count back (a word-penalty-like column).

    Counts must lie in [-87.3, 88.7], where exp(count) is a normal 32-bit float in Moses.
    """
    array = _as_checked_array(counts, "counts")
    outside = (array < _FLOAT32_LOG_MIN_NORMAL) | (array > _FLOAT32_LOG_MAX)
    if outside.any():
        index = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"counts[{index}] is {array[index]} (expected {_FLOAT32_LOG_MIN_NORMAL} to {_FLOAT32_LOG_MAX})"
        )
    return [_FORMAT % value for value in np.exp(array).tolist()]


def new_score_tokens(columns: Sequence[ArrayLike], format_scores: Callable[[ArrayLike], list[str]],
                     counts: Optional[ArrayLike] = None) -> Iterator[tuple[str, ...]]:
    """Each line's new score tokens: its value in every column as `format_scores` writes it, then
    its count as exp(count), capped at MAX_COUNT (the caller counts the capped ones)."""
    texts = [format_scores(column) for column in columns]
    if counts is not None:
        texts.append(format_count_scores(np.minimum(counts, MAX_COUNT)))
    return zip(*texts)


def decode_moses_score(text: str, float32: bool = False) -> float:
    """max(log(float(text)), -100): the log score Moses computes from one phrase-table score.

    float32=True rounds the number to a 32-bit float first, as Moses does; a score that is
    0 (or rounds to 0) decodes to the floor, as in Moses.
    """
    value = float(text)
    if float32:
        value = float(np.float32(value))
    if value <= 0.0:
        if value == 0.0:
            return MOSES_LOG_FLOOR
        raise ValueError(f"score {text!r} is negative (expected a probability-like number > 0)")
    return max(math.log(value), MOSES_LOG_FLOOR)


def score_column(text) -> int:
    """A score column as the command line counts it, from 1 (-1: a line's last score); a
    ValueError says why `text` is none."""
    try:
        column = int(text)
    except (TypeError, ValueError):
        raise ValueError(f"expected a column number, found {text!r}") from None
    if column == 0:
        raise ValueError("columns count from 1 (1 is a line's first score, -1 its last); 0 is not a column")
    return column


def column_index(column: int) -> int:
    """The 0-based (or negative) index of a column counted from 1."""
    return column - 1 if column > 0 else column
