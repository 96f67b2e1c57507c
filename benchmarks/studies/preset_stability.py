"""Whether the default recipe stays below the unigram model at every preset (issue 33): each
architecture and preset trained on the example table for a few hundred updates with the default
training settings, its held-out perplexity at each validation beside the add-one unigram model's
on the same held-out pairs, and the seconds per update.

    OMP_NUM_THREADS=1 nice -n 10 python3 benchmarks/studies/preset_stability.py --updates 300 --valid-every 50
    python3 benchmarks/studies/preset_stability.py --archs cho2014 --presets paper --updates 100 --device cuda

Extra `--set NAME=VALUE` pairs override training settings (e.g. --set learning_rate=0.001), to try
a recipe before making it the default. Results: one line per system and --json OUT.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402

from rescorer.models import ModelSettings, architecture_names  # noqa: E402
from rescorer.training.pipeline import TrainingRun, train_on_table  # noqa: E402
from rescorer.training.settings import TrainSettings  # noqa: E402
from benchmarks.helpers.arms import number_or_text  # noqa: E402

ARCHS = tuple(architecture_names())
PRESETS = ("tiny", "small", "paper")
TABLE = HERE.parents[1] / "examples" / "phrase-table.gz"


def measure(arch: str, preset: str, args, overrides: dict) -> dict:
    """One system's curve: [(update, perplexity)], the unigram figure and seconds per update."""
    curve, stamps = [], []

    def on_update(state, ppl):
        stamps.append(time.perf_counter())
        if ppl is not None:
            curve.append((state.updates, round(ppl, 2)))
            if args.verbose:
                print(f"  {arch} {preset} update {state.updates}: {ppl:.2f}", file=sys.stderr, flush=True)

    # no epoch bound and no early stopping: the example table's 3,000-token batches make 13
    # updates an epoch, so the default 10-epoch bound would end a run at update 130
    model = ModelSettings.make(arch, preset)
    settings = TrainSettings(max_updates=args.updates, max_epochs=None, valid_every=args.valid_every,
                             patience=10 ** 6, checkpoint_every=10 ** 6, valid_pairs=args.valid_pairs, **overrides)
    with tempfile.TemporaryDirectory() as scratch:
        report = train_on_table(args.table, Path(scratch) / "m.pt", model=model,
                                settings=settings, run=TrainingRun(device=torch.device(args.device),
                                                                   on_update=on_update))
    # seconds per update without the validations: the median gap between two updates
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    return {"arch": arch, "preset": preset, "unigram": round(report.unigram_ppl, 2), "curve": curve,
            "valid_pairs": report.valid_pairs, "seconds_per_update": round(gaps[len(gaps) // 2], 4),
            "settings": {k: v for k, v in settings.resolved(model.width()).stored()["fields"].items()
                         if k in ("learning_rate", "warmup_updates", "clip_norm")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", nargs="+", default=ARCHS)
    parser.add_argument("--presets", nargs="+", default=PRESETS)
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--valid-every", type=int, default=50)
    parser.add_argument("--valid-pairs", type=int, default=2000)
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--verbose", action="store_true", help="print each validation as it comes")
    args = parser.parse_args()
    overrides = {name: number_or_text(value) for name, value in (item.split("=", 1) for item in args.set)}
    results = []
    for preset in args.presets:
        for arch in args.archs:
            result = measure(arch, preset, args, overrides)
            above = [update for update, ppl in result["curve"] if ppl >= result["unigram"]]
            print(f"{arch:12} {preset:6} unigram {result['unigram']:8.2f}  "
                  f"{result['seconds_per_update']:.3f} s/update  {result['settings']}  "
                  + "  ".join(f"{u}:{p:g}" for u, p in result["curve"])
                  + (f"  ABOVE unigram at {above}" if above else ""), flush=True)
            results.append(result)
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
