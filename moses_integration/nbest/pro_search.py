"""Hopkins and May's (2011) PRO, tuning as ranking, in numpy: an optimizer of n-best weights
that, unlike MERT's line search, is known to keep working when the features are many.

For each sentence, GAMMA random pairs of its hypotheses are drawn; the pairs whose sentence
BLEU+1 differs by more than ALPHA are kept, at most XI of them, those that differ most. A
logistic regression without bias then learns, from each pair's feature difference, which
hypothesis is the better one; its weights, scaled to sum |w| = 1, are the tuned weights.
Sentence BLEU+1 is Moses' (mert's sentenceLevelBleuPlusOne: 1 added to the matches and counts
of every order; bleu_statistics.bleu_of_totals with plus_one). Moses runs the same recipe in mert-moses.pl --pairwise-ranked, over several
decoding iterations and with megam as the classifier; here there is one iteration over fixed
lists, and the classifier is fitted by Newton's method with an L2 penalty of L2 (a N(0, 1)
prior on each weight).
"""

from __future__ import annotations

import numpy as np

from .bleu_statistics import bleu_of_totals
from .extractor_files import NbestArrays
from .mert_search import MertResult, tuned_bleu

__all__ = ["GAMMA", "ALPHA", "XI", "sampled_pairs", "optimize_pro"]

GAMMA, ALPHA, XI = 5000, 0.05, 50  # Hopkins and May's sampler: pairs drawn, BLEU gap kept, pairs kept
L2 = 1.0
NEWTON_ROUNDS = 50


def sampled_pairs(arrays: NbestArrays, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(better rows, worse rows): each sentence's sampled pairs whose BLEU+1 differ by more than
    ALPHA, the XI most different of them."""
    rng = np.random.default_rng(seed)
    bleu = bleu_of_totals(arrays.stats, plus_one=True)  # each hypothesis's sentence BLEU+1
    better, worse = [], []
    for start, end in zip(arrays.starts[:-1], arrays.starts[1:]):
        if end - start < 2:
            continue
        first, second = rng.integers(start, end, size=(2, GAMMA))
        gap = bleu[first] - bleu[second]
        kept = np.flatnonzero(np.abs(gap) > ALPHA)
        kept = kept[np.argsort(-np.abs(gap[kept]), kind="stable")[:XI]]
        better.append(np.where(gap[kept] > 0, first[kept], second[kept]))
        worse.append(np.where(gap[kept] > 0, second[kept], first[kept]))
    if not better:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(better), np.concatenate(worse)


def _logistic_weights(differences: np.ndarray) -> np.ndarray:
    """w minimizing sum log(1 + exp(-w . d)) + L2 / 2 |w|^2 over the rows d (better minus worse),
    the loss of a classifier without bias that sees each pair in both orders; Newton's method."""
    weights = np.zeros(differences.shape[1])
    for _ in range(NEWTON_ROUNDS):
        margins = differences @ weights
        p_wrong = 1.0 / (1.0 + np.exp(np.clip(margins, -500, 500)))  # sigmoid(-margin)
        gradient = -(differences * p_wrong[:, None]).sum(axis=0) + L2 * weights
        curvature = p_wrong * (1.0 - p_wrong)
        hessian = (differences * curvature[:, None]).T @ differences + L2 * np.eye(len(weights))
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-10:
            break
    return weights


def optimize_pro(arrays: NbestArrays, seed: int = 0) -> MertResult:
    """PRO's weights (K,) for the lists, sum |w| = 1, with their dev BLEU (0..1) of the 1-best;
    `seed` draws the pairs. Lists that give no pair (every hypothesis alike) keep all weights 0."""
    better, worse = sampled_pairs(arrays, seed)
    if len(better) == 0:
        return MertResult(np.zeros(arrays.features.shape[1]), tuned_bleu(arrays, np.zeros(arrays.features.shape[1])))
    weights = _logistic_weights(arrays.features[better] - arrays.features[worse])
    norm = np.abs(weights).sum()
    weights = weights / norm if norm > 0 else weights
    return MertResult(weights, tuned_bleu(arrays, weights))
