"""How long a translation may grow: a + b * source length, measured on the training pairs.

A fixed 2 x source + 10 let a looping hypothesis run to twice its source's length; on the bible
verses about 1.5 x source + 5 covers 99.9% of the training pairs. Training measures which
choice of a small grid covers COVERAGE of its pairs (target length <= a + b * source length,
in the model's own tokens) and the model file keeps it; `translate` bounds its search by it.
Files written before keep 2 x source + 10 (BEFORE_MEASURED).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LENGTH_CAP_GRID", "COVERAGE", "BEFORE_MEASURED", "measure_length_cap", "cap_of"]

# (slack a, ratio b), tried by the mean cap they give over the training pairs
LENGTH_CAP_GRID = tuple((slack, ratio) for ratio in (1.2, 1.5, 2.0) for slack in (5, 10))
COVERAGE = 0.999
CHUNK = 1 << 20
BEFORE_MEASURED = (10, 2.0)


def cap_of(source_length: int, slack: int, ratio: float) -> int:
    """The most target tokens a translation of `source_length` tokens may have."""
    return int(ratio * source_length) + slack


def measure_length_cap(src_lengths: np.ndarray, tgt_lengths: np.ndarray) -> dict:
    """{"slack", "ratio", "coverage"}: of the grid's choices that cover COVERAGE of the pairs,
    the one with the smallest mean cap (ties: the earlier); the widest (2 x source + 10, the
    bound before this was measured) when none does, with the share it covers."""
    count = len(src_lengths)
    if count == 0:
        return {"slack": BEFORE_MEASURED[0], "ratio": BEFORE_MEASURED[1], "coverage": 1.0}
    cap_sums, covered = np.zeros(len(LENGTH_CAP_GRID)), np.zeros(len(LENGTH_CAP_GRID))
    for start in range(0, count, CHUNK):  # a table's 10^8 pairs, a million at a time
        src = np.asarray(src_lengths[start:start + CHUNK], dtype=np.int64)
        tgt = np.asarray(tgt_lengths[start:start + CHUNK], dtype=np.int64)
        for index, (slack, ratio) in enumerate(LENGTH_CAP_GRID):
            caps = np.floor(ratio * src).astype(np.int64) + slack  # as cap_of rounds
            cap_sums[index] += caps.sum()
            covered[index] += (tgt <= caps).sum()
    choices = [(cap_sums[index] / count, slack, ratio, float(covered[index] / count))
               for index, (slack, ratio) in enumerate(LENGTH_CAP_GRID)]
    covering = [choice for choice in choices if choice[3] >= COVERAGE]
    _, slack, ratio, covered = (min(covering, key=lambda choice: choice[0]) if covering
                                else max(choices, key=lambda choice: choice[0]))
    return {"slack": slack, "ratio": ratio, "coverage": covered}
