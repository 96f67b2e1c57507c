"""How many pairs `--precision auto`'s check needs (issue 45: on a small n-best list it decided
bf16 from 9 pairs, where the same model got fp32 on a 2,000-pair sample).

The check (rescorer.scoring.precision_check) scores the first pairs of what is to be scored in
fp32 and in bf16 and keeps bf16 iff the mean |delta log p| is at most MAX_MEAN_DELTA and bf16
keeps the best target of at least MIN_BEST_KEPT of the sample's sources with two or more. Here a
pool of pairs is scored once in both precisions, and every window of n consecutive pairs (the
"first n pairs" of some list) is judged as the check would judge it: for each n, the spread of
the windows' mean |delta| and how often their decision differs from the whole pool's. A trained
model far from the bound never flips; to see the noise near it, each window's mean |delta| is also
taken relative to the pool's, as if the pool's mean were the README's two demo models' (0.026,
which fails, and 0.017, which passes the 0.02 bound on 2,000 pairs): the share of windows that
would then decide bf16 for the first (the costly mistake) and fp32 for the second.

    OMP_NUM_THREADS=1 python3 benchmarks/studies/precision_sample_size.py MODEL --table TABLE [--pairs 20000]
    OMP_NUM_THREADS=1 python3 benchmarks/studies/precision_sample_size.py MODEL --nbest LIST --source SRC
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import numpy as np  # noqa: E402

from moses_integration.line_files import read_lines  # noqa: E402
from moses_integration.nbest.nbest_lines import checked_lines  # noqa: E402
from rescorer.data.directions import oriented  # noqa: E402
from rescorer.data.phrase_encoding import encode_phrases  # noqa: E402
from rescorer.models.model_files import load_model  # noqa: E402
from rescorer.scoring.batch_scoring import score_encoded  # noqa: E402
from rescorer.scoring.precision_check import MAX_MEAN_DELTA, compare, table_sample  # noqa: E402

SIZES = (9, 25, 50, 100, 200, 500, 1000, 2000)


def pool(args) -> list:
    if args.table:
        return table_sample(args.table, size=args.pairs)
    sources = read_lines(args.source)
    lines = checked_lines(args.nbest, sources, str(args.source), every_sentence=False)
    return [(sources[line.sentence], line.hypothesis) for line in itertools.islice(lines, args.pairs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--table", type=Path)
    parser.add_argument("--nbest", type=Path)
    parser.add_argument("--source", type=Path)
    parser.add_argument("--pairs", type=int, default=20000)
    args = parser.parse_args()
    bundle = load_model(args.model)
    pairs = pool(args)
    model_src, model_tgt = oriented([s for s, _ in pairs], [t for _, t in pairs], bundle.direction)
    src, tgt = encode_phrases(model_src, bundle.src_vocab), encode_phrases(model_tgt, bundle.tgt_vocab)
    fp32, bf16 = (score_encoded(bundle.model, src, tgt, None, precision) for precision in ("fp32", "bf16"))
    sources = [source for source, _ in pairs]
    whole = compare("pool", fp32, bf16, sources)
    delta = np.abs(bf16 - fp32)
    print(f"{args.model.name} on {len(pairs)} pairs of {args.table or args.nbest}: {whole.describe()} -> "
          f"{'bf16' if whole.passed else 'fp32'}; per-pair |delta| sd {delta.std():.4f}")
    print("n | windows | mean |delta| of the windows: median [5%, 95%] | decided otherwise than the pool | "
          "decided bf16 | at a pool mean of 0.026: bf16 | at 0.017: fp32")
    for n in SIZES:
        starts = range(0, len(pairs) - n + 1, max(1, n // 2))
        checks = [compare("w", fp32[s:s + n], bf16[s:s + n], sources[s:s + n]) for s in starts]
        means = np.array([check.mean_delta for check in checks])
        passed = np.array([check.passed for check in checks])
        relative = means / whole.mean_delta
        print(f"{n} | {len(checks)} | {np.median(means):.4f} [{np.quantile(means, 0.05):.4f}, "
              f"{np.quantile(means, 0.95):.4f}] | {np.mean(passed != whole.passed):.1%} | {np.mean(passed):.1%} | "
              f"{np.mean(relative * 0.026 <= MAX_MEAN_DELTA):.1%} | {np.mean(relative * 0.017 > MAX_MEAN_DELTA):.1%}")
    print(f"(bound {MAX_MEAN_DELTA})")


if __name__ == "__main__":
    main()
