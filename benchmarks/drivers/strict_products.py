"""What MKL's strict reproducible mode (MKL_CBWR=AUTO,STRICT, which rescorer/__init__.py sets)
costs and buys on this CPU: the matrix products of a training update of the default model,
each timed in a fresh process with MKL's default and with strict mode, on 1 and on 2 threads,
round after round interleaved so that a busy machine slows them alike; and whether each mode's
2-thread products equal its 1-thread ones to the bit.

    python3 benchmarks/drivers/strict_products.py [--rounds 5] [--out benchmarks/drivers/strict_products.tsv]

The children run torch alone (no rescorer import, which would set the mode), so the default
column is what torch gives without the package.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from rescorer.runtime.cpu_features import cpu_features  # noqa: E402

# (rows, inner, columns): a 3,000-token batch through the `small` GRU's 1,000 units, its 500-unit
# embeddings and deep output, the 2,048 sampled output words, and a batch of 64 pairs (the paper's)
SHAPES = [(3000, 1000, 3000), (3000, 500, 2048), (64, 1000, 3000), (64, 3000, 1000), (300, 1000, 500)]
CHILD = r"""
import hashlib, json, sys, time, torch
torch.manual_seed(0)
shapes = json.loads(sys.argv[1])
pairs = [(torch.randn(m, k), torch.randn(k, n)) for m, k, n in shapes]
for a, b in pairs:  # warm-up
    a @ b
started = time.perf_counter()
digest = hashlib.sha256()
for a, b in pairs:
    for _ in range(5):
        c = a @ b
        g = a.t() @ c  # the backward pass's product
    digest.update(c.numpy().tobytes() + g.numpy().tobytes())
print(json.dumps({"seconds": time.perf_counter() - started, "digest": digest.hexdigest()[:16]}))
"""
MODES = {"default": None, "strict": "AUTO,STRICT"}


def child(mode: str, threads: int) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "MKL_CBWR"}
    env["OMP_NUM_THREADS"] = str(threads)
    if MODES[mode]:
        env["MKL_CBWR"] = MODES[mode]
    run = subprocess.run([sys.executable, "-c", CHILD, json.dumps(SHAPES)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(run.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("strict_products.tsv"))
    arguments = parser.parse_args()
    cases = [(mode, threads) for threads in (1, 2) for mode in MODES]
    seconds = {case: [] for case in cases}
    digests = {}
    for _ in range(arguments.rounds):
        for case in cases:
            figures = child(*case)
            seconds[case].append(figures["seconds"])
            digests[case] = figures["digest"]
    lines = ["mode\tthreads\tmedian s\tmin s\tmax s\tmedian / default's\tsame bits as 1 thread"]
    for mode, threads in cases:
        times = seconds[(mode, threads)]
        ratio = statistics.median(times) / statistics.median(seconds[("default", threads)])
        same = "yes" if digests[(mode, threads)] == digests[(mode, 1)] else "no"
        lines.append(f"{mode}\t{threads}\t{statistics.median(times):.3f}\t{min(times):.3f}\t{max(times):.3f}\t"
                     f"{ratio:.2f}\t{same}")
    features = cpu_features()
    lines.append(f"# {arguments.rounds} rounds, interleaved; {features.describe() if features else 'unknown CPU'}; "
                 f"load average {os.getloadavg()[0]:.1f} at the end")
    text = "\n".join(lines) + "\n"
    arguments.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
