"""Tests for rescorer.io.score_format: what Moses reads back from the text we write."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rescorer.io.score_format import (MOSES_LOG_FLOOR, decode_moses_score, format_count_scores,
                                      format_log_scores, format_moses_scores)


def wide_log_probs() -> np.ndarray:
    """log p from 0 down to -150: a fine grid, tiny magnitudes, and the floor and its neighbours."""
    return np.concatenate([
        np.linspace(0.0, -150.0, 150_001),
        -np.geomspace(1e-300, 1.0, 1001),
        [-5e-324, -1e-12, -99.99999, -100.0, np.nextafter(-100.0, 0), np.nextafter(-100.0, -200), -100.00001,
         -1e4, -np.inf],
    ])


def test_moses_round_trip_within_1e4() -> None:
    log_probs = wide_log_probs()
    texts = format_moses_scores(log_probs)
    decoded = np.array([decode_moses_score(text) for text in texts])
    assert len(texts) == len(log_probs)
    assert np.abs(decoded - np.maximum(log_probs, MOSES_LOG_FLOOR)).max() < 1e-6
    values = np.array([float(text) for text in texts])
    assert values.min() > 0.0  # log(0) would be -inf
    assert values.max() <= 1.0  # log p <= 0 never prints above 1


def test_moses_round_trip_in_moses_32_bit_floats() -> None:
    """Moses parses scores as 32-bit floats, which are subnormal below exp(-87.3): a Moses limit."""
    log_probs = wide_log_probs()
    decoded = np.array([decode_moses_score(text, float32=True) for text in format_moses_scores(log_probs)])
    error = np.abs(decoded - np.maximum(log_probs, MOSES_LOG_FLOOR))
    assert error[log_probs >= -94.0].max() < 1e-4
    assert error.max() < 0.03


# (log p, the text Moses gets)
MOSES_TEXTS = [
    (0.0, "1"),
    (math.log(0.5), "0.5"),
    (math.log(0.125), "0.125"),
    (-1.0, "0.3678794"),
    (-100.0, "3.720076e-44"),
    (-150.0, "3.720076e-44"),
    (-math.inf, "3.720076e-44"),
]


@pytest.mark.parametrize("log_prob, text", MOSES_TEXTS, ids=[text for _, text in MOSES_TEXTS])
def test_moses_texts(log_prob: float, text: str) -> None:
    assert format_moses_scores(np.array([log_prob])) == [text]


def test_accepts_lists_and_2d_arrays_and_empty() -> None:
    assert format_moses_scores([0.0, math.log(0.25)]) == ["1", "0.25"]
    assert format_moses_scores(np.zeros((2, 1), dtype=np.float32)) == ["1", "1"]
    assert format_moses_scores(np.array([])) == []


# (function, bad values, words in the error)
BAD_VALUES = [
    (format_moses_scores, [0.0, math.nan], "log_probs[1] is nan"),
    (format_moses_scores, [math.inf], "log_probs[0] is inf"),
    (format_moses_scores, [-1.0, 90.0], "log_probs[1] is 90.0 (expected at most 88.7)"),
    (format_log_scores, [math.nan], "log_probs[0] is nan"),
    (format_count_scores, [1, 100], "counts[1] is 100.0 (expected -87.3 to 88.7)"),
    (format_count_scores, [math.nan], "counts[0] is nan"),
]


@pytest.mark.parametrize("function, values, words", BAD_VALUES, ids=[case[2] for case in BAD_VALUES])
def test_bad_values(function, values: list[float], words: str) -> None:
    with pytest.raises(ValueError) as caught:
        function(values)
    assert words in str(caught.value)


def test_log_scores() -> None:
    log_probs = wide_log_probs()
    values = np.array([float(text) for text in format_log_scores(log_probs)])
    floored = np.maximum(log_probs, MOSES_LOG_FLOOR)
    assert np.abs(values - floored).max() <= 1e-6 * np.abs(floored).max()
    assert format_log_scores([0.0, -1.5, -200.0, -math.inf]) == ["0", "-1.5", "-100", "-100"]


def test_log_scores_without_floor() -> None:
    assert format_log_scores([-200.0, -1e-20], floor=None) == ["-200", "-1e-20"]
    with pytest.raises(ValueError, match=r"log_probs\[1\] is -inf"):
        format_log_scores([0.0, -math.inf], floor=None)


@pytest.mark.parametrize("float32", [False, True], ids=["float64", "float32"])
def test_count_scores_round_trip(float32: bool) -> None:
    counts = np.arange(0, 41)
    decoded = [decode_moses_score(text, float32=float32) for text in format_count_scores(counts)]
    assert np.abs(np.array(decoded) - counts).max() < 1e-4
    assert format_count_scores([0, 1, 2]) == ["1", "2.718282", "7.389056"]


# (text in the table, log score Moses computes)
DECODES = [("1", 0.0), ("0.5", math.log(0.5)), ("0", -100.0), ("1e-300", -100.0), ("2.718282", 1.0000001)]


@pytest.mark.parametrize("text, expected", DECODES, ids=[text for text, _ in DECODES])
def test_decode_moses_score(text: str, expected: float) -> None:
    assert decode_moses_score(text) == pytest.approx(expected, abs=1e-6)


def test_decode_float32_underflow_is_the_floor() -> None:
    assert decode_moses_score("1e-46", float32=True) == MOSES_LOG_FLOOR  # rounds to 0 in a 32-bit float


def test_decode_refuses_negative() -> None:
    with pytest.raises(ValueError, match="negative"):
        decode_moses_score("-0.5")
