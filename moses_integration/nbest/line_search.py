"""Och's (2003) exact line search: corpus BLEU of the 1-best along w + x·d for every x at once.

Along the line, hypothesis k of a sentence scores w·f_k + x·(d·f_k), a line in x. The
sentence's 1-best is the line on top, so it changes only where the upper envelope of its
lines bends. Every sentence's bends (breakpoints), sorted together, cut the x axis into
intervals on which the whole corpus's 1-best choice, hence its BLEU, is constant; summing the
statistics' changes across breakpoints gives BLEU on every interval without rescoring.

The envelope is the upper convex hull of the points (slope, intercept), computed for all
sentences at once with numpy:
1. per sentence and slope, only the highest line (the first row on a tie);
2. a line is dropped when a line of lower slope and one of higher slope are both at least as
   high at x = 0 (it is then under their chord): the prefix and suffix maxima, per sentence;
3. then, repeatedly, every line on or under the chord of its two neighbours is dropped (such
   a point is never a hull vertex, so dropping them all at once is safe) until none is.
What depends only on the direction (the slopes' order) is kept between searches, so tuning
along the coordinate axes sorts each axis once.

The chosen x follows mert (mert/Optimizer.cpp LineOptimize): the leftmost interval with the
best BLEU, at its midpoint, or 1000 left of the first breakpoint for the unbounded interval on
the left and 0.1 right of the last for the one on the right (values mert took from cmert).
Two differences: when the interval holding x = 0 is among the best, the line stays at 0 (mert
snaps any chosen x within 1.5e-4 of 0 to 0, even outside its interval); and breakpoints are
exact in float64, where mert works in float32 and merges a sentence's breakpoints closer than
1e-4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bleu_statistics import bleu_of_totals
from .extractor_files import NbestArrays

__all__ = ["LineSearch", "LineStep", "LEFT_STEP", "RIGHT_STEP"]

LEFT_STEP = 1000.0  # x = first breakpoint - LEFT_STEP when the leftmost interval wins (cmert)
RIGHT_STEP = 0.1  # x = last breakpoint + RIGHT_STEP when the rightmost interval wins
KEPT_DIRECTIONS = 32  # slope orders kept (each at most 48 bytes a hypothesis); the oldest goes first


@dataclass(frozen=True)
class LineStep:
    step: float  # x: the best point on the line is origin + step * direction
    bleu: float  # corpus BLEU (0..1) there


@dataclass(frozen=True)
class _SlopeOrder:
    """Rows by (sentence, slope), in runs of equal slope ("groups"): fixed by the direction."""
    rows: np.ndarray  # (hyps,) rows sorted by sentence, then slope; stable, so by row on ties
    row_groups: np.ndarray  # (hyps,) the group of each position in rows
    group_starts: np.ndarray  # (G,) where each group begins in rows
    group_slopes: np.ndarray  # (G,) its slope d·f
    group_sentences: np.ndarray  # (G,) its sentence
    group_ranks: np.ndarray  # (G,) its place among its sentence's groups
    width: int  # most groups in one sentence


def _slope_order(slopes: np.ndarray, sentences: np.ndarray) -> _SlopeOrder:
    rows = np.lexsort((slopes, sentences))
    s, m = sentences[rows], slopes[rows]
    new_group = np.concatenate([[True], (s[1:] != s[:-1]) | (m[1:] != m[:-1])])
    starts = np.flatnonzero(new_group)
    group_sentences = s[starts]
    first_group = np.flatnonzero(np.concatenate([[True], group_sentences[1:] != group_sentences[:-1]]))
    ranks = np.arange(len(starts)) - np.repeat(first_group, np.diff(np.append(first_group, len(starts))))
    return _SlopeOrder(rows, np.cumsum(new_group) - 1, starts, m[starts], group_sentences, ranks,
                       int(ranks.max()) + 1)


@dataclass(frozen=True)
class _Envelope:
    """Each sentence's lines on its upper envelope, sentence by sentence, left to right."""
    rows: np.ndarray  # (E,)
    sentences: np.ndarray  # (E,)
    slopes: np.ndarray  # (E,) d·f
    intercepts: np.ndarray  # (E,) w·f


def _staircase(heights: np.ndarray, order: _SlopeOrder, num_sentences: int) -> np.ndarray:
    """(G,) bool: the groups left after step 2, given each group's height (G,) at x = 0."""
    grid = np.full((order.width + 2, num_sentences), -np.inf)  # (slope rank, sentence), -inf rims
    ranks = order.group_ranks + 1
    grid[ranks, order.group_sentences] = heights
    before = np.maximum.accumulate(grid, axis=0)  # highest at this slope or lower
    after = np.maximum.accumulate(grid[::-1], axis=0)[::-1]  # ... or higher
    return (heights > before[ranks - 1, order.group_sentences]) | \
        (heights > after[ranks + 1, order.group_sentences])


def _hull(s: np.ndarray, m: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n,) bool: the points (m, b) on their sentence's upper hull; input sorted by sentence,
    then strictly rising slope (step 3)."""
    alive = np.flatnonzero(np.ones(len(s), dtype=bool))
    while len(alive) >= 3:
        ss, mm, bb = s[alive], m[alive], b[alive]
        inner = ss[:-2] == ss[2:]  # point i has both neighbours in its sentence
        cross = (mm[1:-1] - mm[:-2]) * (bb[2:] - bb[:-2]) - (bb[1:-1] - bb[:-2]) * (mm[2:] - mm[:-2])
        below = inner & (cross >= 0)
        if not below.any():
            break
        keep = np.ones(len(alive), dtype=bool)
        keep[1:-1] = ~below
        alive = alive[keep]
    on_hull = np.zeros(len(s), dtype=bool)
    on_hull[alive] = True
    return on_hull


class LineSearch:
    """Exact line searches over one set of n-best lists; a direction's slope order and an
    origin's model scores are kept for the searches that follow."""

    def __init__(self, arrays: NbestArrays) -> None:
        self.arrays = arrays
        self._orders: dict[bytes, _SlopeOrder] = {}
        self._origin: bytes | None = None
        self._intercepts: np.ndarray | None = None

    def envelope(self, origin: np.ndarray, direction: np.ndarray) -> _Envelope:
        """The upper envelopes along origin + x * direction (both (K,))."""
        direction = np.asarray(direction, dtype=np.float64)
        origin = np.asarray(origin, dtype=np.float64)
        if direction.tobytes() not in self._orders:
            if len(self._orders) >= KEPT_DIRECTIONS:
                del self._orders[next(iter(self._orders))]
            self._orders[direction.tobytes()] = _slope_order(self.arrays.features @ direction,
                                                             self.arrays.row_sentences)
        order = self._orders[direction.tobytes()]
        if self._origin != origin.tobytes():
            self._origin, self._intercepts = origin.tobytes(), self.arrays.features @ origin
        heights = self._intercepts[order.rows]  # (hyps,) in slope order
        tops = np.maximum.reduceat(heights, order.group_starts)  # (G,) each group's highest
        hits = np.flatnonzero(heights == tops[order.row_groups])  # positions at their group's top
        hit_groups = order.row_groups[hits]
        top_rows = order.rows[hits[np.concatenate([[True], hit_groups[1:] != hit_groups[:-1]])]]  # (G,)
        kept = np.flatnonzero(_staircase(tops, order, self.arrays.num_sentences))
        kept = kept[_hull(order.group_sentences[kept], order.group_slopes[kept], tops[kept])]
        return _Envelope(top_rows[kept], order.group_sentences[kept], order.group_slopes[kept], tops[kept])

    def __call__(self, origin: np.ndarray, direction: np.ndarray) -> LineStep:
        """The best x on origin + x * direction (both (K,)) for the corpus BLEU of the 1-best."""
        x, change, at_left = self._breakpoints(self.envelope(origin, direction))
        order = np.argsort(x, kind="stable")  # a sentence's equal breakpoints stay in order
        x, change = x[order], change[order]
        last = np.concatenate([x[1:] != x[:-1], [True]])  # the last change at each distinct x
        thresholds = x[last]  # (T,) ascending
        totals = at_left + np.cumsum(change, axis=0)[last]  # (T, 9): right of each threshold
        scores = bleu_of_totals(np.concatenate([at_left[None, :], totals]))  # (T + 1,)
        return _choose(thresholds, scores)  # interval i is (thresholds[i - 1], thresholds[i])

    def _breakpoints(self, lines: _Envelope) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x (B,), statistics change at each (B, 9), statistics summed at x = -inf (9,))."""
        s, m, b = lines.sentences, lines.slopes, lines.intercepts
        stats = self.arrays.stats[lines.rows]  # (E, 9)
        same = s[1:] == s[:-1]  # (E - 1,): consecutive envelope lines of one sentence
        x = (b[:-1] - b[1:])[same] / (m[1:] - m[:-1])[same]  # where line j + 1 overtakes j
        change = (stats[1:] - stats[:-1])[same]  # (B, 9)
        # Rounding can put a sentence's breakpoint a hair left of its previous one; applied out
        # of order, the changes would make a state no x has, so it moves onto the previous one.
        owner = s[1:][same]
        while True:
            back = (owner[1:] == owner[:-1]) & (x[1:] < x[:-1])
            if not back.any():
                break
            x[1:][back] = x[:-1][back]
        first = np.concatenate([[True], ~same])  # each sentence's leftmost line
        return x, change, stats[first].sum(axis=0)


def _choose(thresholds: np.ndarray, scores: np.ndarray) -> LineStep:
    """The step for the best of the intervals cut by thresholds (T,), scored (T + 1,)."""
    best = scores.max()
    here = int(np.searchsorted(thresholds, 0.0, side="right"))  # the interval holding x = 0
    if scores[here] == best and (here == 0 or thresholds[here - 1] < 0.0):
        return LineStep(0.0, float(best))
    pick = int(np.flatnonzero(scores == best)[0])
    if pick == 0:
        step = thresholds[0] - LEFT_STEP
    elif pick == len(thresholds):
        step = thresholds[-1] + RIGHT_STEP
    else:
        step = 0.5 * (thresholds[pick - 1] + thresholds[pick])
    return LineStep(float(step), float(best))
