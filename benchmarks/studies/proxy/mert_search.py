"""The numpy MERT (moses_integration.nbest.mert_search) against Moses's own `mert` on the real
mert-moses.pl directory: for iteration N, the files of runs 1..N, the start of runN.init.opt and
20 random restarts, as mert-moses.pl ran it. Prints the dev BLEU each reached and the time.

    OMP_NUM_THREADS=1 python3 benchmarks/studies/proxy/mert_search.py ../shared/data/bible-en-fr/tuning 1 2 3 4 5 6 7 8 9 10 11 \
        | tee benchmarks/studies/proxy/results/mert_search.txt
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from moses_integration.nbest.extractor_files import read_extractor_files  # noqa: E402
from moses_integration.nbest.mert_search import optimize, tuned_bleu  # noqa: E402

BEST_POINT = re.compile(r"Best point:\s*(.*?)\s*=> (\S+)")
WALL = re.compile(r"Stopping\.\.\. : \[Wall ([\d.]+)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tuning", type=Path, help="a mert-moses.pl working directory")
    parser.add_argument("runs", type=int, nargs="+", help="iterations N to tune (with runs 1..N)")
    parser.add_argument("--restarts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for run in args.runs:
        names = range(1, run + 1)
        started = time.perf_counter()
        arrays = read_extractor_files([args.tuning / f"run{i}.features.dat.gz" for i in names],
                                      [args.tuning / f"run{i}.scores.dat.gz" for i in names])
        read = time.perf_counter() - started
        init = np.loadtxt(args.tuning / f"run{run}.init.opt")  # start, lower, upper
        started = time.perf_counter()
        weights, bleu = optimize(arrays, init[0], restarts=args.restarts, seed=args.seed,
                                 lower=init[1], upper=init[2])
        took = time.perf_counter() - started
        log = (args.tuning / f"run{run}.mert.log").read_text()
        moses = float(BEST_POINT.search(log).group(2))
        moses_wall = WALL.search(log)
        print(f"runs 1..{run}: {len(arrays.features)} hypotheses, {arrays.num_sentences} sentences "
              f"(read in {read:.1f} s); start BLEU {tuned_bleu(arrays, init[0]):.6f}; "
              f"mert {moses:.6f} ({moses_wall.group(1) if moses_wall else '?'} s), "
              f"numpy {bleu:.6f} (check {tuned_bleu(arrays, weights):.6f}) in {took:.1f} s", flush=True)


if __name__ == "__main__":
    main()
