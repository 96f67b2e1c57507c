"""Where a training update's time goes (issue 18): the parts of `Trainer.step` timed one by one.

    OMP_NUM_THREADS=1 python3 benchmarks/drivers/training_profile.py --cache WORK/final/pairs.cache

Trains the `small` cho2014 GRU with the given recipes (the default, and the paper's with
`--arm before`, as in time_to_quality.py) for `--updates` updates after a warm-up, and prints per
recipe the milliseconds per update spent making the batch (schedule, padding, sampled words),
in the forward pass, the backward pass, and clipping plus the optimizer step; with each part's
share. Parts that are not matrix products (the batch, the optimizer) are what fused kernels,
a data thread or larger batches could still save.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402

from benchmarks.helpers.pairs import DEFAULT_TABLE  # noqa: E402
from benchmarks.helpers.arms import arm_trainer  # noqa: E402

PARTS = ("batch", "forward", "backward", "optimizer")


def profile_arm(spec: str, table: Path, cache_path: Path, updates: int, warmup: int) -> dict:
    """Milliseconds per update in each part, measured over `updates` updates."""
    from rescorer.models.precision import autocast
    from rescorer.training.trainer import batch_tensors

    name, precision, trainer = arm_trainer(spec, table, cache_path, seed=1, checkpoint_path=Path("/dev/null"))
    spent = dict.fromkeys(PARTS, 0.0)
    tokens = 0
    trainer.model.train()
    for update in range(warmup + updates):
        ticks = [time.perf_counter()]
        indices = trainer.schedule.batch(trainer.state.updates)
        tensors = batch_tensors(trainer.cache, indices, trainer.device)
        sampled = trainer.sampled_words()
        ticks.append(time.perf_counter())
        with autocast(trainer.device, precision):
            loss = -trainer.model(*tensors, sampled=sampled).float().mean()
        ticks.append(time.perf_counter())
        trainer.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        ticks.append(time.perf_counter())
        trainer.optimizer_step()
        trainer.state.updates += 1
        ticks.append(time.perf_counter())
        if update >= warmup:
            for part, start, end in zip(PARTS, ticks, ticks[1:]):
                spent[part] += end - start
            tokens += int(tensors[3].sum()) + len(indices)
    return {"arm": name, "ms": {part: 1000 * s / updates for part, s in spent.items()},
            "tokens_per_update": tokens / updates}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--cache", type=Path, required=True, help="a pair cache of the table "
                        "(time_to_quality.py's OUT/pairs.cache)")
    parser.add_argument("--arm", dest="arms", action="append", help="as in time_to_quality.py "
                        "[default: default, before]")
    parser.add_argument("--updates", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); ms per update "
          f"(share), over {args.updates} updates after {args.warmup}")
    print(f"{'arm':12s} {'target tok':>10s} " + " ".join(f"{part:>16s}" for part in PARTS) + f" {'total':>8s}")
    for spec in args.arms or ["default", "before"]:
        result = profile_arm(spec, args.table, args.cache, args.updates, args.warmup)
        total = sum(result["ms"].values())
        cells = " ".join(f"{ms:8.1f} ({100 * ms / total:3.0f}%)" for ms in result["ms"].values())
        print(f"{result['arm']:12s} {result['tokens_per_update']:10.0f} {cells} {total:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
