"""The exact line search: hand-made envelopes with known answers, and random lists checked
against rescoring every point of a fine grid."""

import numpy as np
import pytest

from moses_integration.nbest.bleu_statistics import corpus_bleu
from moses_integration.nbest.extractor_files import NbestArrays
from moses_integration.nbest.line_search import LEFT_STEP, RIGHT_STEP, LineSearch
from moses_integration.nbest.mert_search import one_best, tuned_bleu

ORIGIN, AXIS = np.array([1.0, 0.0]), np.array([0.0, 1.0])  # intercept = f[0], slope = f[1]


def stats(m1, m2, m3, m4, length=10):
    return [m1, length, m2, length - 1, m3, length - 2, m4, length - 3, length]


def nbest(*sentences) -> NbestArrays:
    """sentences: lists of (features, stats) pairs."""
    rows = [row for sentence in sentences for row in sentence]
    return NbestArrays(names=["F_0", "G_0"], features=np.array([f for f, _ in rows], dtype=float),
                       stats=np.array([s for _, s in rows]),
                       starts=np.cumsum([0] + [len(s) for s in sentences]),
                       sentence_ids=np.arange(len(sentences)))


# Sentence A: lines y = 0, y = x - 1 and y = 2x - 3 take turns at x = 1 and x = 2; y = 0.5x - 0.6
# is never on top (at slope 0.5 the chord of the first two is at -0.5), and has the best
# statistics, so an envelope that kept it would choose it. Sentence B: y = 1.5 until x = 1.5,
# then y = x. Intervals: (-inf, 1) a0 b1, (1, 1.5) a1 b1, (1.5, 2) a1 b0, (2, inf) a2 b0.
A = [([0, 0], stats(5, 3, 2, 1)), ([-1, 1], stats(8, 6, 4, 2)), ([-3, 2], stats(4, 2, 1, 1)),
     ([-0.6, 0.5], stats(10, 9, 8, 7))]
B = [([0, 1], stats(5, 3, 2, 1)), ([1.5, 0], stats(9, 7, 5, 3))]


def test_the_best_interval_is_taken_at_its_midpoint():
    arrays = nbest(A, B)
    found = LineSearch(arrays)(ORIGIN, AXIS)
    assert found.step == 1.25  # midpoint of (1, 1.5)
    assert found.bleu == corpus_bleu(arrays.stats[[1, 5]])
    assert one_best(arrays, ORIGIN + found.step * AXIS).tolist() == [1, 5]
    assert LineSearch(arrays).envelope(ORIGIN, AXIS).rows.tolist() == [0, 1, 2, 5, 4]


@pytest.mark.parametrize("best, step", [
    (0, 1 - LEFT_STEP),  # the unbounded interval on the left: mert's first breakpoint - 1000
    (3, 2 + RIGHT_STEP),  # on the right: the last breakpoint + 0.1
    (2, 1.75),
])
def test_each_interval_can_win(best, step):
    chosen = [(0, 5), (1, 5), (1, 4), (2, 4)][best]  # each interval's 1-best rows (A, then B + 4)
    rows = [(f, stats(1, 1, 1, 1)) for f, _ in A] + [(f, stats(1, 1, 1, 1)) for f, _ in B]
    for row in chosen:
        rows[row] = (rows[row][0], stats(9, 8, 7, 6))
    arrays = nbest(rows[:4], rows[4:])
    start = ORIGIN + 1.25 * AXIS  # in (1, 1.5), which never wins here: the line moves
    found = LineSearch(arrays)(start, AXIS)
    assert found.step == pytest.approx(step - 1.25)
    assert found.bleu == tuned_bleu(arrays, start + found.step * AXIS) == corpus_bleu(arrays.stats[list(chosen)])


def test_the_line_stays_when_its_interval_is_among_the_best():
    flat = nbest([([0, 0], stats(5, 3, 2, 1)), ([-1, 1], stats(5, 3, 2, 1))])  # same BLEU both sides of x = 1
    assert LineSearch(flat)(ORIGIN + 3 * AXIS, AXIS).step == 0.0


def test_equal_slopes_and_identical_lines():
    # Three lines of slope 1: the highest wins; of the two identical ones, the first row.
    sentence = [([0, 1], stats(1, 1, 1, 1)), ([2, 1], stats(2, 1, 1, 1)), ([2, 1], stats(3, 1, 1, 1)),
                ([0, 0], stats(4, 1, 1, 1))]
    arrays = nbest(sentence)
    assert LineSearch(arrays).envelope(ORIGIN, AXIS).rows.tolist() == [3, 1]
    assert one_best(arrays, ORIGIN).tolist() == [1]


@pytest.mark.parametrize("seed", range(6))
def test_random_lists_agree_with_rescoring_a_grid(seed):
    """Integer features (many equal slopes and ties) and real ones; every point of a fine grid
    scores at most the line search's BLEU, and its chosen point scores exactly that."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, size=30)
    integer = seed % 2 == 0
    features = rng.integers(-5, 5, size=(sizes.sum(), 4)) if integer else rng.normal(size=(sizes.sum(), 4))
    totals = rng.integers(5, 30, size=sizes.sum())
    matches = np.minimum(rng.integers(0, 30, size=(sizes.sum(), 4)), totals[:, None] - np.arange(4))
    stat_rows = np.column_stack([matches[:, 0], totals, matches[:, 1], totals - 1, matches[:, 2],
                                 totals - 2, matches[:, 3], totals - 3, rng.integers(5, 30, size=sizes.sum())])
    arrays = NbestArrays(["a", "b", "c", "d"], features.astype(float), stat_rows,
                         np.concatenate([[0], np.cumsum(sizes)]), np.arange(30))
    search = LineSearch(arrays)
    for trial in range(5):
        origin, direction = rng.normal(size=4), rng.normal(size=4) if trial else np.eye(4)[seed % 4]
        found = search(origin, direction)
        assert found.bleu == tuned_bleu(arrays, origin + found.step * direction)
        grid = [tuned_bleu(arrays, origin + x * direction) for x in np.linspace(-20, 20, 1001)]
        assert max(grid) <= found.bleu
