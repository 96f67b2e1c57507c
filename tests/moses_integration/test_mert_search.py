"""The numpy MERT on the real mert-moses.pl directory: mert's reported points score what mert
said, and from mert's start the search reaches at least mert's dev BLEU."""

import re

import numpy as np
import pytest

from moses_integration.nbest.extractor_files import NbestArrays, read_extractor_files
from moses_integration.nbest.mert_search import one_best, optimize, search_from, tuned_bleu
from moses_integration.nbest.line_search import LineSearch
from tests.fake_moses import FIXTURES, needs_fixtures

TUNING = FIXTURES / "tuning"
BEST_POINT = re.compile(r"Best point:\s*(.*?)\s*=> (\S+)")


def mert_iteration(run: int):
    """(arrays of runs 1..run, init.opt rows (3, K), mert's best weights (K,), its BLEU)."""
    arrays = read_extractor_files([TUNING / f"run{i}.features.dat.gz" for i in range(1, run + 1)],
                                  [TUNING / f"run{i}.scores.dat.gz" for i in range(1, run + 1)])
    found = BEST_POINT.search((TUNING / f"run{run}.mert.log").read_text())
    return (arrays, np.loadtxt(TUNING / f"run{run}.init.opt"), np.array(found.group(1).split(), dtype=float),
            float(found.group(2)))


@needs_fixtures
@pytest.mark.parametrize("run", [1, 2, 11])
def test_mert_best_point_scores_what_mert_reported(run):
    """Iteration N's mert read the files of runs 1..N; its point, printed to 6 digits, gives
    back its BLEU (run 1: 0.400371, run 2: 0.399581, run 11: 0.400271) within 1e-4."""
    arrays, _, weights, reported = mert_iteration(run)
    assert arrays.num_sentences == 842
    assert tuned_bleu(arrays, weights) == pytest.approx(reported, abs=1e-4)


@needs_fixtures
def test_from_merts_start_the_search_reaches_merts_bleu():
    """Run 1's data (49,881 hypotheses), start and restart bounds, 20 restarts as mert-moses.pl
    ran it: mert reported 0.400371; about 10 s on one core."""
    arrays, init, _, reported = mert_iteration(1)
    weights, bleu = optimize(arrays, init[0], restarts=20, seed=0, lower=init[1], upper=init[2])
    assert bleu >= reported - 5e-7  # mert prints 6 digits
    assert np.abs(weights).sum() == pytest.approx(1.0)
    assert tuned_bleu(arrays, weights) == pytest.approx(bleu, abs=1e-12)


def tiny() -> NbestArrays:
    """Three sentences of four hypotheses, two features; the stats make the BLEU landscape."""
    rng = np.random.default_rng(3)
    features = rng.normal(size=(12, 2))
    lengths = rng.integers(6, 12, size=12)
    matches = np.minimum(rng.integers(1, 8, size=(12, 4)), lengths[:, None] - np.arange(4))
    stats = np.column_stack([matches[:, 0], lengths, matches[:, 1], lengths - 1, matches[:, 2], lengths - 2,
                             matches[:, 3], lengths - 3, np.full(12, 9)])
    return NbestArrays(["a_0", "b_0"], features, stats, np.array([0, 4, 8, 12]), np.arange(3))


def test_the_search_finds_the_best_direction_of_a_tiny_list():
    """Two features: BLEU depends only on the weights' direction, so a fine sweep of angles
    finds the best any weights reach; restarts get there too."""
    arrays = tiny()
    angles = np.linspace(0, 2 * np.pi, 20001)
    best = max(tuned_bleu(arrays, np.array([np.cos(a), np.sin(a)])) for a in angles)
    weights, bleu = optimize(arrays, np.array([1.0, 0.0]), restarts=10, seed=1, lower=-1.0, upper=1.0)
    assert bleu == pytest.approx(best, abs=1e-12)
    assert tuned_bleu(arrays, weights) == bleu


def test_a_run_stops_when_a_round_gains_nothing():
    arrays = tiny()
    search = LineSearch(arrays)
    first = search_from(search, np.array([1.0, 0.0]))
    again = search_from(search, first.weights)  # from its own end point: nothing left to gain
    assert again.bleu == first.bleu
    np.testing.assert_array_equal(again.weights, first.weights)


def test_one_best_takes_the_first_of_equal_scores():
    arrays = NbestArrays(["a_0"], np.array([[1.0], [2.0], [2.0], [0.0], [0.0]]), np.zeros((5, 9), dtype=int),
                         np.array([0, 3, 5]), np.arange(2))
    assert one_best(arrays, np.array([1.0])).tolist() == [1, 3]
    assert one_best(arrays, np.array([-1.0])).tolist() == [0, 3]
