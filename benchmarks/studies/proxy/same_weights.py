"""Whether two model files hold the same weights: the largest |difference| over all of them (0.0:
the same model to the bit), for the stability study's 1-thread against 2-thread runs.

    python benchmarks/studies/proxy/same_weights.py WORK/s1-t1.pt WORK/s1-t2.pt
"""

from __future__ import annotations

import sys

import torch


def max_difference(path_a: str, path_b: str) -> float:
    weights = [torch.load(path, map_location="cpu", weights_only=False)["weights"] for path in (path_a, path_b)]
    if weights[0].keys() != weights[1].keys():
        raise SystemExit(f"same_weights.py: {path_a} and {path_b} hold different parameters")
    return max(float((weights[0][name].double() - weights[1][name].double()).abs().max()) for name in weights[0])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(max_difference(sys.argv[1], sys.argv[2]))
