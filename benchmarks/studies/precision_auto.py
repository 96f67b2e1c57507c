"""What `--precision auto` decides when scoring, and what bf16 buys: for each model, the accuracy
check's figures (rescorer.scoring.precision_check, on the table's first 2,000 pairs) and its
decision on this machine, then `rescore_table` of the table's first N lines in fp32 and bf16,
alternated (fp32, bf16, fp32, bf16 with two rounds), in this process, on `--threads` threads.

    nice -n 10 python benchmarks/studies/precision_auto.py [--lines 10000] [--presets small,paper]
        [--model NAME=MODEL.pt ...] [--rounds 2] [--threads 2]

The presets are randomly initialised (seed 0) with the real table's 15k shortlists: speed does
not depend on the weights, but the check's figures do (a random model's near-uniform
distributions move little and rank many targets alike), so a trained model is given with
--model to see the check's figures that matter.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.helpers import ours  # noqa: E402
from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR  # noqa: E402
from rescorer.models.model_files import load_model  # noqa: E402
from rescorer.runtime.cpu_features import cpu_features  # noqa: E402
from rescorer.scoring.precision_check import choose_precision, table_sample  # noqa: E402
from rescorer.scoring.settings import ScoreSettings  # noqa: E402
from rescorer.scoring.table_rescoring import rescore_table  # noqa: E402


def first_lines(table: Path, count: int, out: Path) -> Path:
    """The table's first `count` lines, gzipped (made once)."""
    if not out.exists():
        with gzip.open(table, "rb") as source:
            data = b"".join(itertools.islice(source, count))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.compress(data, compresslevel=1))
    return out


def lines_per_second(bundle, table: Path, precision: str, lines: int) -> float:
    """One `rescore_table` pass (as `rescore score` writes it), in lines per second."""
    with tempfile.TemporaryDirectory(dir=RESULTS_DIR) as tmp:
        started = time.perf_counter()
        rescore_table(table, Path(tmp) / "out.gz", bundle, ScoreSettings(force=True, precision=precision))
        return lines / (time.perf_counter() - started)


def measure(name: str, bundle, table: Path, lines: int, rounds: int) -> dict:
    choice = choose_precision("auto", torch.device("cpu"), [(name, bundle)], lambda: table_sample(table))
    check = choice.checks[0] if choice.checks else None
    warm = ours.encode(bundle, [(src.split(), tgt.split()) for src, tgt in table_sample(table, 256)])
    for precision in ("fp32", "bf16"):
        ours.warm_up(bundle, warm, precision=precision)
    speeds = {"fp32": [], "bf16": []}
    for _ in range(rounds):
        for precision in ("fp32", "bf16"):
            speeds[precision].append(lines_per_second(bundle, table, precision, lines))
    return {"name": name, "auto": choice.precision, "line": choice.line, "check": check, "speeds": speeds}


def report(result: dict) -> list:
    fp32, bf16 = result["speeds"]["fp32"], result["speeds"]["bf16"]
    ratios = [b / f for f, b in zip(fp32, bf16)]
    check = result["check"]
    figures = (f"mean abs delta log p {check.mean_delta:.2g}, best target kept {check.best_kept:.1%} of "
               f"{check.sources} sources, over {check.pairs} pairs" if check else "no check (no native bf16)")
    return [f"| {result['name']} | {' / '.join(f'{v:,.0f}' for v in fp32)} | {' / '.join(f'{v:,.0f}' for v in bf16)} "
            f"| {' / '.join(f'{r:.2f}' for r in ratios)} | {figures} | {result['auto']} |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--lines", type=int, default=10000)
    parser.add_argument("--presets", default="small,paper")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                        help="a trained model, measured after the presets")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    table = first_lines(args.table, args.lines, RESULTS_DIR / f"table-first-{args.lines}.gz")
    features = cpu_features()
    print(f"CPU: {features.describe() if features else 'unknown'}; torch {torch.__version__}, "
          f"{args.threads} threads; {args.lines} lines of {args.table}")
    models = []
    if args.presets:
        src_vocab, tgt_vocab = ours.load_shortlists(args.table, RESULTS_DIR)
        models += [(f"{preset} (random init)", ours.make_bundle(preset, src_vocab, tgt_vocab))
                   for preset in args.presets.split(",")]
    for given in args.model:
        name, _, path = given.partition("=")
        models.append((f"{name} (trained)", load_model(Path(path))))
    print("| model | fp32 lines/s | bf16 lines/s | bf16 / fp32 | the check's figures | auto |")
    print("|---|---|---|---|---|---|")
    for name, bundle in models:
        result = measure(name, bundle, table, args.lines, args.rounds)
        print("\n".join(report(result)), flush=True)
        if result["line"]:
            print(f"    {result['line']}", flush=True)


if __name__ == "__main__":
    main()
