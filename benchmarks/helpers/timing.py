"""Small timing helpers shared by the benchmark scripts.

The machine is shared and noisy, so every figure is the median of several repetitions, and
figures that are compared are measured alternately in the same run (see :func:`interleave`).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Dict, List, Sequence

__all__ = ["time_repeated", "interleave", "median"]


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def time_repeated(fn: Callable[[], object], repeats: int = 5, min_time: float = 0.2,
                  warmup: int = 1) -> List[float]:
    """Seconds per call of ``fn``: ``repeats`` samples, each averaging as many calls as fill ``min_time``."""
    for _ in range(warmup):
        fn()
    # Calibrate how many calls make one sample last at least min_time.
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-9)
    calls = max(1, int(min_time / once))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return samples


def interleave(fns: Dict[str, Callable[[], float]], rounds: int) -> Dict[str, List[float]]:
    """Run each ``fn`` once per round, alternating, so that machine noise hits all of them alike.

    Each ``fn`` returns its own measurement (seconds, or a rate); the lists come back per name.
    """
    results: Dict[str, List[float]] = {name: [] for name in fns}
    for i in range(rounds):
        names = list(fns)
        if i % 2:  # alternate the order too, so neither always runs on a warm cache
            names.reverse()
        for name in names:
            results[name].append(fns[name]())
    return results
