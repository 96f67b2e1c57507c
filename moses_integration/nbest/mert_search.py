"""Och's (2003) MERT as Moses's `mert` runs it by default (the "powell" optimizer, which is
mert/Optimizer.cpp SimpleOptimizer), in numpy, so n-best lists tune with no Moses binary.

From each start point (the given one, then `restarts` uniform random ones, as `mert -n`):
every round, an exact line search along each coordinate axis from the current point; the
round moves to the best of those points if it beats the current BLEU. Rounds stop once a
round gains no more than `epsilon` (mert's kEPS, 1e-4; the last gain is still kept). The best
start's end point wins (the first on a tie), scaled so sum |w| = 1 as mert writes it.
"""

from __future__ import annotations

import logging
from typing import NamedTuple, Union

import numpy as np

from .bleu_statistics import corpus_bleu
from .extractor_files import NbestArrays
from .line_search import LineSearch

__all__ = ["MertResult", "one_best", "optimize", "search_from", "tuned_bleu"]

log = logging.getLogger(__name__)

Bound = Union[float, np.ndarray]  # a scalar, or one (K,) value per feature


class MertResult(NamedTuple):
    weights: np.ndarray  # (K,), sum |w| = 1
    bleu: float  # corpus BLEU (0..1) of the 1-best under weights


def one_best(arrays: NbestArrays, weights: np.ndarray) -> np.ndarray:
    """(sentences,) row of each sentence's highest-scoring hypothesis under weights (K,); the
    first row on a tie, as mert's Get1bests."""
    scores = arrays.features @ weights  # (hyps,)
    tops = np.maximum.reduceat(scores, arrays.starts[:-1])  # (sentences,)
    at_top = np.flatnonzero(scores == tops[arrays.row_sentences])  # rows, ascending
    owner = arrays.row_sentences[at_top]
    return at_top[np.concatenate([[True], owner[1:] != owner[:-1]])]


def tuned_bleu(arrays: NbestArrays, weights: np.ndarray) -> float:
    """Corpus BLEU (0..1) of the 1-best hypotheses under weights (K,)."""
    return corpus_bleu(arrays.stats[one_best(arrays, weights)])


def search_from(search: LineSearch, start: np.ndarray, epsilon: float = 1e-4) -> MertResult:
    """One run of mert's coordinate search from start (K,); the end point is not normalized."""
    point = np.asarray(start, dtype=np.float64).copy()
    best_bleu = tuned_bleu(search.arrays, point)
    axes = np.eye(len(point))
    while True:
        round_start = best_bleu
        best_point = point
        for axis in axes:
            found = search(point, axis)
            if found.bleu > best_bleu:
                best_bleu, best_point = found.bleu, point + found.step * axis
        point = best_point
        if best_bleu - round_start <= epsilon:
            return MertResult(point, best_bleu)


def optimize(arrays: NbestArrays, start: np.ndarray, restarts: int = 20, seed: int = 0,
             lower: Bound = 0.0, upper: Bound = 1.0, epsilon: float = 1e-4) -> MertResult:
    """Weights (K,) that maximize the dev BLEU of the 1-best, searched from start (K,) and from
    `restarts` points drawn uniformly in [lower, upper] per feature (mert -n, init.opt's second
    and third lines), with numpy's generator seeded by `seed`; returns the best, sum |w| = 1."""
    start = np.asarray(start, dtype=np.float64)
    if start.shape != (arrays.features.shape[1],):
        raise ValueError(f"start has {start.size} weights, the features {arrays.features.shape[1]}")
    rng = np.random.default_rng(seed)
    starts = [start] + [rng.uniform(lower, upper, size=start.shape) for _ in range(restarts)]
    search = LineSearch(arrays)
    best = None
    for number, point in enumerate(starts):
        result = search_from(search, point, epsilon)
        log.debug("mert start %d: BLEU %.6f", number, result.bleu)
        if best is None or result.bleu > best.bleu:
            best = result
    norm = np.abs(best.weights).sum()
    weights = best.weights / norm if norm > 0 else best.weights
    return MertResult(weights, best.bleu)
