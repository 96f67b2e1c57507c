"""Holm–Bonferroni: p-values of several systems against one baseline, corrected together.

An ablation compares k systems with Baseline; at the 0.05 level one of them would look
significant by chance about k times in twenty. Holm's step-down correction (Holm 1979) controls
the family-wise error rate like Bonferroni's k·p but rejects more: the i-th smallest p is
multiplied by (k - i + 1), and the corrected values are made non-decreasing in that order.
"""

from __future__ import annotations

from typing import Mapping, Optional

__all__ = ["holm_bonferroni"]


def holm_bonferroni(p_values: Mapping[str, Optional[float]]) -> dict[str, Optional[float]]:
    """Corrected p per name, in the given order; None (the baseline, or an untested system)
    stays None and does not count as a comparison."""
    tested = sorted(((p, name) for name, p in p_values.items() if p is not None), key=lambda item: item[0])
    corrected: dict[str, Optional[float]] = {}
    running_max = 0.0
    for rank, (p, name) in enumerate(tested):
        running_max = max(running_max, min(1.0, (len(tested) - rank) * p))
        corrected[name] = running_max
    return {name: corrected.get(name) for name in p_values}
