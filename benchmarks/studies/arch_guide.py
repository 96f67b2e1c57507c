"""Which scorer to choose: every architecture trained for the same time, or the same number of
updates, on the real table, then compared on held-out perplexity, scoring speed and FLOPs per
pair (issue 8's figures).

    OMP_NUM_THREADS=1 nice -n 5 python3 benchmarks/studies/arch_guide.py --minutes 20 --out-dir WORK/guide
    python3 benchmarks/studies/arch_guide.py --updates 3000 --jobs 2 --out-dir WORK/guide-updates

For each system: `rescore train TABLE --preset small --max-time MINUTES*60` (or `--max-updates
UPDATES`) of this checkout, one thread, no early stopping, all on the same shortlists,
the same pair cache and the same held-out pairs (same seed), hence the same unigram baseline.
Then model-only pairs/s of every trained model on the same evenly spaced sample of the table,
one thread, in interleaved rounds (the machine is shared: compare ratios within one run), and
FLOPs per pair from rescorer.models.flops on that sample. A system whose model file already exists is
not trained again, so an interrupted run continues. Results: OUT/guide.json and OUT/guide.md.

Equal time is fair only on a machine nobody else uses: a system that gets less CPU makes fewer
updates. Equal updates (`--updates`) are fair on a busy machine too, and `--jobs 2` trains two
systems at once, one thread each, each on its own copy of the pair cache (a cache is locked
while a training uses it).
"""

from __future__ import annotations

import argparse
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402

from benchmarks.helpers import ours  # noqa: E402
from benchmarks.studies.arch_guide_tables import guide_table  # noqa: E402
from benchmarks.helpers.pairs import DEFAULT_TABLE, sample_pairs  # noqa: E402
from rescorer.models.model_files import load_model, read_model_file  # noqa: E402
from rescorer.models.flops import flops_per_batch  # noqa: E402
from rescorer.models import count_parameters  # noqa: E402

SYSTEMS = {
    "cho2014 GRU": ["--arch", "cho2014", "--cell", "gru"],
    "cho2014 LSTM": ["--arch", "cho2014", "--cell", "lstm"],
    "cho2014 GRU bidirectional": ["--arch", "cho2014", "--cell", "gru", "--bidirectional"],
    "rnnsearch GRU": ["--arch", "rnnsearch", "--cell", "gru"],
    "luong global general (input feeding)": ["--arch", "luong", "--attention", "global",
                                            "--attention-score", "general", "--input-feeding"],
    "luong local-p general (input feeding)": ["--arch", "luong", "--attention", "local-p",
                                             "--attention-score", "general", "--input-feeding"],
}


def log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")  # one write: --jobs log from threads
    sys.stderr.flush()


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-").replace("--", "-")


def train(name: str, args, out_dir: Path, cache: Path) -> Path:
    model = out_dir / f"{slug(name)}.pt"
    if model.exists():
        log(f"{name}: {model.name} exists, not trained again")
        return model
    if args.updates:
        bound, what = ["--max-time", "1000000000", "--max-updates", str(args.updates)], f"{args.updates} updates"
    else:
        bound, what = ["--max-time", str(args.minutes * 60), "--max-updates", "1000000000"], f"{args.minutes} min"
    command = [sys.executable, str(HERE.parents[1] / "cli.py"), "-q", "train", str(args.table), "-o", str(model),
               "--preset", "small", *SYSTEMS[name], *bound, "--max-epochs", "1000000", "--patience", "1000000",
               "--valid-every", str(args.valid_every),
               "--checkpoint-every", "5000", "--seed", str(args.seed), "--cache-dir", str(cache),
               "--device", "cpu"]
    log(f"{name}: training for {what}: {' '.join(command[2:])}")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open(out_dir / f"{slug(name)}.train.log", "w") as training_log:
        result = subprocess.run(command, stderr=training_log, stdout=subprocess.DEVNULL, env=env)
    if result.returncode != 0:
        raise SystemExit(f"{name}: training failed ({result.returncode}); see {training_log.name}")
    return model


def train_all(names: list, args) -> dict:
    """Train every system, `args.jobs` at a time; the first alone if the shared cache is missing."""
    shared = args.out_dir / "pairs.cache"
    if args.jobs == 1:
        return {name: train(name, args, args.out_dir, shared) for name in names}
    models = {}
    if not shared.exists():
        models[names[0]] = train(names[0], args, args.out_dir, shared)
    caches = {}
    for name in names[len(models):]:
        caches[name] = args.out_dir / f"pairs.cache.{slug(name)}"
        if not caches[name].exists():
            shutil.copytree(shared, caches[name])
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        running = {name: pool.submit(train, name, args, args.out_dir, cache) for name, cache in caches.items()}
        models.update((name, job.result()) for name, job in running.items())
    return {name: models[name] for name in names}


def unigram_baseline(model: Path, out_dir: Path) -> float:
    """The add-one unigram perplexity of the same held-out pairs (the floor to beat)."""
    from rescorer.data.pair_cache import PairCache
    from rescorer.training.resume import recorded_training
    from rescorer.training.trainer import PairSplit, unigram_perplexity

    payload = read_model_file(model)
    settings, _ = recorded_training(payload["training"])  # by field name, whatever the file's format
    cache = PairCache(out_dir / "pairs.cache")
    split = PairSplit(cache.num_pairs, settings["seed"], settings["valid_pairs"])
    return unigram_perplexity(cache, split, len(payload["tgt_vocab"]))


def measure_scoring(models: dict, table: Path, num_pairs: int, rounds: int, out_dir: Path) -> dict:
    """Model-only pairs/s (medians of interleaved rounds) and mean FLOPs per pair of each model."""
    torch.set_num_threads(1)
    pairs = sample_pairs(num_pairs, table, out_dir)
    bundles = {name: load_model(path) for name, path in models.items()}
    data = {name: ours.encode(bundle, pairs) for name, bundle in bundles.items()}
    for name in bundles:
        ours.warm_up(bundles[name], data[name])
    seconds = {name: [] for name in bundles}
    names = list(bundles)
    for index in range(rounds):
        log(f"scoring {len(pairs)} pairs, round {index + 1}/{rounds}")
        for name in (names if index % 2 == 0 else names[::-1]):
            seconds[name].append(ours.time_model_only(bundles[name], data[name]))
    return {name: {"pairs": len(pairs), "pairs_per_s": len(pairs) / statistics.median(seconds[name]),
                   "speed_over_first": statistics.median(a / b for a, b in zip(seconds[names[0]], seconds[name])),
                   "flops_per_pair": flops_per_batch(bundles[name].config, data[name].src_lengths,
                                                     data[name].tgt_lengths) / len(pairs),
                   "parameters": count_parameters(bundles[name].model), "rounds": seconds[name]}
            for name in names}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--out-dir", type=Path, default=HERE.parent / "results" / "guide")
    parser.add_argument("--minutes", type=float, default=20.0, help="training time of every system")
    parser.add_argument("--updates", type=int, default=0,
                        help="train every system for this many updates instead (fair on a busy machine)")
    parser.add_argument("--jobs", type=int, default=1, help="systems trained at once, one thread each")
    parser.add_argument("--systems", default="all", help=f"comma list of: {', '.join(map(slug, SYSTEMS))}; or all")
    parser.add_argument("--valid-every", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--score-pairs", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dry-run", action="store_true", help="print the systems and exit")
    args = parser.parse_args(argv)
    by_slug = {slug(name): name for name in SYSTEMS}
    asked = list(SYSTEMS) if args.systems == "all" else [n.strip() for n in args.systems.split(",")]
    unknown = [name for name in asked if name not in SYSTEMS and name not in by_slug]
    if unknown:
        parser.error(f"unknown systems {unknown}; valid: {', '.join(by_slug)}")
    names = [by_slug.get(name, name) for name in asked]
    if args.dry_run:
        for name in names:
            print(f"{name}: rescore train TABLE --preset small {' '.join(SYSTEMS[name])}")
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    models = train_all(names, args)
    results = {"table": args.table.name, "minutes": None if args.updates else args.minutes,
               "updates": args.updates or None, "threads": 1,
               "unigram_ppl": unigram_baseline(next(iter(models.values())), args.out_dir),
               "date": time.strftime("%Y-%m-%d %H:%M"), "load_avg": os.getloadavg(), "systems": {}}
    scoring = measure_scoring(models, args.table, args.score_pairs, args.rounds, args.out_dir)
    for name, path in models.items():
        state = read_model_file(path)["training"]["state"]
        results["systems"][name] = {"model": path.name, "settings": SYSTEMS[name], **state, **scoring[name]}
    (args.out_dir / "guide.json").write_text(json.dumps(results, indent=1))
    (args.out_dir / "guide.md").write_text(guide_table(results) + "\n")
    print(guide_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
