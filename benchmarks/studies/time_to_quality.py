"""Time to a good model: training recipes side by side on the real table, held-out perplexity
against training time and against pair-visits (issue 18).

    python3 benchmarks/studies/time_to_quality.py --arm before --arm default --minutes 40 --out-dir WORK/final

Every arm trains the `small` cho2014 GRU from the same seed, on the same shortlists, pair cache
and held-out pairs, in its own process with one thread: the arms run at once, one per core, so
a busy machine slows both alike. Each arm is validated on the held-out pairs every
`--eval-seconds` of training time; the clock stops while it validates, so the curves compare
training alone. Reported per arm: the curve, the training time and pair-visits to perplexity
150, 100 and 60 (interpolated between validations in log perplexity), the perplexity at equal
times, and the training throughput as a share of this machine's measured matmul peak (training
FLOPs = 3 x the forward FLOPs of rescorer.models.flops over the pairs trained, the backward pass
costing about twice the forward; a sampled softmax counted over the words it ran on). Results: OUT/ttq.json and OUT/ttq.md; each arm's curve is
OUT/ARM.jsonl, and an arm whose curve is complete is not trained again.

An arm is a name from benchmarks/helpers/arms.py ARMS, or NAME:key=value,... over TrainSettings fields (`batch_size`,
`batch_tokens`, `optimizer`, `learning_rate`, `warmup_updates`, `sampled_softmax`, `clip_norm`)
and `precision` (fp32 or bf16: autocast, fp32 master weights; its peak is then the bf16 one).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from benchmarks.helpers.arms import arm_trainer, parse_arm  # noqa: E402
from benchmarks.helpers.pairs import DEFAULT_TABLE  # noqa: E402

TARGETS = (150.0, 100.0, 60.0)


def log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


PEAK_SHAPES = ((1024, 1024, 1024), (2048, 256, 768), (1024, 128, 15003))  # square; a gate; the softmax


def matmul_peak(precision: str = "fp32", seconds_each: float = 2.0) -> float:
    """The best GFLOP/s of a few large matmuls (a square one, the shapes of the gates and of the
    output layer) in this precision at this thread count: the machine's attainable peak."""
    import torch

    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    best = 0.0
    for rows, inner, cols in PEAK_SHAPES:
        a, b = torch.randn(rows, inner, dtype=dtype), torch.randn(inner, cols, dtype=dtype)
        started = time.perf_counter()
        while time.perf_counter() - started < seconds_each:
            tick = time.perf_counter()
            torch.mm(a, b)
            best = max(best, 2 * rows * inner * cols / (time.perf_counter() - tick))
    return best / 1e9


# -- one arm, in its own process -----------------------------------------------------------
def run_arm(args) -> int:
    import torch

    from rescorer.models.flops import flops_per_batch

    name = parse_arm(args.worker)[0]
    name, precision, trainer = arm_trainer(args.worker, args.table, args.out_dir / "pairs.cache", args.seed,
                                           args.out_dir / f"{name}.ckpt")
    cache, settings = trainer.cache, trainer.settings
    src_lengths, tgt_lengths = cache.lengths("src"), cache.lengths("tgt")
    out = open(args.out_dir / f"{name}.jsonl.partial", "w")
    out.write(json.dumps({"arm": name, "settings": asdict(settings), "schedule": trainer.schedule.describe(),
                          "precision": precision, "threads": torch.get_num_threads()}) + "\n")
    clock = pairs = forward_flops = 0.0
    next_eval, started = args.eval_seconds, time.perf_counter()
    trainer.model.train()
    while clock < args.minutes * 60:
        batch = trainer.schedule.batch(trainer.state.updates)
        executed = trainer.bundle.config  # a sampled softmax runs over the sampled words and the gold one
        if trainer.sampler is not None:
            executed = executed.replace(tgt_vocab_size=len(trainer.sampled_words().words) + 1)
        tick = time.perf_counter()
        loss = trainer.step()
        clock += time.perf_counter() - tick
        pairs += len(batch)
        forward_flops += flops_per_batch(executed, src_lengths[batch], tgt_lengths[batch])
        if not math.isfinite(loss):
            raise SystemExit(f"arm {name} diverged at update {trainer.state.updates}")
        if clock >= next_eval or clock >= args.minutes * 60:
            ppl = trainer.validation_perplexity()
            trainer.model.train()
            row = {"seconds": round(clock, 2), "updates": trainer.state.updates, "pairs": int(pairs),
                   "epochs": pairs / trainer.split.num_train, "ppl": ppl, "loss": loss,
                   "train_gflops": 3 * forward_flops / 1e9, "wall": round(time.perf_counter() - started, 1)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            log(f"{name}: {clock:.0f} s, {trainer.state.updates} updates, {pairs:.0f} pairs, ppl {ppl:.1f}")
            next_eval = clock + (args.eval_seconds if clock < 600 else 2 * args.eval_seconds)
            if args.stop_ppl and ppl <= args.stop_ppl:
                break
    out.close()
    os.replace(args.out_dir / f"{name}.jsonl.partial", args.out_dir / f"{name}.jsonl")
    return 0


# -- the parent: cache once, arms at once, the report ----------------------------------------
def prepare_cache(args) -> None:
    from rescorer.training.pipeline import PairEncoding, build_vocabularies, encode_table

    vocabularies = build_vocabularies(args.table, 15000)
    encode_table(args.table, PairEncoding(vocabularies.src_vocab, vocabularies.tgt_vocab, max_pair_length=50),
                 args.out_dir / "pairs.cache")


def read_curve(path: Path) -> tuple[dict, list]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0], lines[1:]


def crossing(rows: list, target: float, key: str):
    """`key` (seconds or pairs) where the curve first reaches `target`, log-linear between points."""
    previous = None
    for row in rows:
        if row["ppl"] <= target:
            if previous is None:
                return row[key]
            a, b = math.log(previous["ppl"]), math.log(row["ppl"])
            share = (a - math.log(target)) / (a - b) if a != b else 1.0
            return previous[key] + share * (row[key] - previous[key])
        previous = row
    return None


def ppl_at(rows: list, seconds: float):
    """The last validation at or before `seconds` of training (an arm's last one, taken as soon
    as its time is up, counts as at its end)."""
    before = [row for row in rows if row["seconds"] <= seconds * 1.001]
    return before[-1]["ppl"] if before else None


def report(results: dict) -> str:
    from rescorer.training.recipes import resolve_defaults

    arms = results["arms"]
    peaks = results["peak_gflops"]
    lines = [f"CPU: {results['cpu']}; {results['threads']} thread per arm, arms run at once; matmul "
             f"peak per thread {', '.join(f'{p} {g:.1f} GFLOP/s' for p, g in peaks.items())} (the best "
             f"product of {', '.join('x'.join(map(str, shape)) for shape in PEAK_SHAPES)}).", ""]
    lines += ["| arm | batches | optimizer | updates/s | pairs/s | share of matmul peak | "
              + " | ".join(f"time to ppl {t:g}" for t in TARGETS) + " | "
              + " | ".join(f"pair-visits to {t:g}" for t in TARGETS) + " |",
              "|---|---|---|---|---|---|" + "---|" * (2 * len(TARGETS))]
    for name, arm in arms.items():
        last = arm["rows"][-1]
        settings = arm["head"]["settings"]
        lr = resolve_defaults(settings)["learning_rate"]
        times = " | ".join("not reached" if arm["time_to"][str(t)] is None else
                           f"{arm['time_to'][str(t)] / 60:.1f} min" for t in TARGETS)
        visits = " | ".join("–" if arm["pairs_to"][str(t)] is None else
                            f"{arm['pairs_to'][str(t)] / 1e6:.2f}M" for t in TARGETS)
        lines.append(f"| {name} | {arm['head']['schedule']} | {settings['optimizer']} {lr} | "
                     f"{last['updates'] / last['seconds']:.2f} | {last['pairs'] / last['seconds']:,.0f} | "
                     f"{100 * last['train_gflops'] / last['seconds'] / peaks[arm['head'].get('precision', 'fp32')]:.0f}% | "
                     f"{times} | {visits} |")
    marks = results["equal_times"]
    lines += ["", "Held-out perplexity at equal training time:", "",
              "| arm | " + " | ".join(f"{m / 60:g} min" for m in marks) + " |",
              "|---|" + "---|" * len(marks)]
    for name, arm in arms.items():
        cells = [ppl_at(arm["rows"], m) for m in marks]
        lines.append(f"| {name} | " + " | ".join("–" if c is None else f"{c:.1f}" for c in cells) + " |")
    first, *others = list(arms)
    for other in others:
        for target in TARGETS:
            a, b = arms[first]["time_to"][str(target)], arms[other]["time_to"][str(target)]
            if b is None:
                continue
            if a is None:
                trained = arms[first]["rows"][-1]["seconds"]
                lines.append(f"\nTo perplexity {target:g}: {other} {b / 60:.1f} min; {first} had not reached "
                             f"it after {trained / 60:.1f} min, so at least {trained / b:.1f}x shorter "
                             f"({first} was at {arms[first]['rows'][-1]['ppl']:.1f}).")
            else:
                lines.append(f"\nTo perplexity {target:g}: {first} {a / 60:.1f} min, {other} {b / 60:.1f} min: "
                             f"{a / b:.1f}x shorter.")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--out-dir", type=Path, default=HERE.parent / "results" / "ttq")
    parser.add_argument("--arm", dest="arms", action="append",
                        help="an arm (see the docstring); repeat for each [default: before, default]")
    parser.add_argument("--minutes", type=float, default=40.0, help="training time of each arm")
    parser.add_argument("--eval-seconds", type=float, default=30.0, help="validation every this much training")
    parser.add_argument("--stop-ppl", type=float, default=None, help="end an arm once it reaches this")
    parser.add_argument("--threads", type=int, default=1, help="threads per arm")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.worker:
        return run_arm(args)
    import torch

    from rescorer.runtime.cpu_features import cpu_features

    torch.set_num_threads(args.threads)
    specs = args.arms or ["before", "default"]
    names = [parse_arm(spec)[0] for spec in specs]
    log("building the pair cache (reused when it matches)")
    prepare_cache(args)
    peaks = {precision: matmul_peak(precision) for precision in sorted({parse_arm(spec)[2] for spec in specs})}
    log("matmul peak " + ", ".join(f"{p} {g:.1f} GFLOP/s" for p, g in peaks.items()))
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    common = ["--table", str(args.table), "--out-dir", str(args.out_dir), "--minutes", str(args.minutes),
              "--eval-seconds", str(args.eval_seconds), "--seed", str(args.seed)]
    if args.stop_ppl:
        common += ["--stop-ppl", str(args.stop_ppl)]
    running = [subprocess.Popen([sys.executable, __file__, *common, "--worker", spec], env=env)
               for spec, name in zip(specs, names) if not (args.out_dir / f"{name}.jsonl").exists()]
    if any(process.wait() != 0 for process in running):
        raise SystemExit("an arm failed; its error is above")
    features = cpu_features()
    results = {"cpu": features.describe() if features else "unknown CPU", "threads": args.threads,
               "peak_gflops": peaks, "minutes": args.minutes, "date": time.strftime("%Y-%m-%d %H:%M"),
               "equal_times": [60 * m for m in (2, 5, 10, 20, 40) if m <= args.minutes], "arms": {}}
    for name in names:
        head, rows = read_curve(args.out_dir / f"{name}.jsonl")
        results["arms"][name] = {
            "head": head, "rows": rows,
            "time_to": {str(t): crossing(rows, t, "seconds") for t in TARGETS},
            "pairs_to": {str(t): crossing(rows, t, "pairs") for t in TARGETS}}
    (args.out_dir / "ttq.json").write_text(json.dumps(results, indent=1))
    text = report(results)
    (args.out_dir / "ttq.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
