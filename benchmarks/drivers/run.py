"""rescorer's benchmark (issue 4): one command, one run, a table on stdout and a JSON file.

    python benchmarks/drivers/run.py [--quick] [--json PATH] [--memory-lines 0.1M,1M,10M] ...

The machine is shared and noisy, so figures that are compared are measured alternately in the
same run (ours, OpenNMT-py, naive, ours, ...) and ratios are medians of per-round ratios.
Generated tables, models and OpenNMT-py's venv go under benchmarks/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402

from benchmarks.drivers import accuracy  # noqa: E402
from benchmarks.drivers import archs  # noqa: E402
from benchmarks.drivers import profiles  # noqa: E402
from benchmarks.drivers import tried  # noqa: E402
from benchmarks.peers import naive_baseline  # noqa: E402
from benchmarks.peers import onmt_peer  # noqa: E402
from benchmarks.helpers import ours  # noqa: E402
from benchmarks.drivers.io_floor import measure_io_floor  # noqa: E402
from rescorer.runtime.cpu_features import cpu_features  # noqa: E402
from benchmarks.helpers.pairs import (DEFAULT_TABLE, RESULTS_DIR, read_table_pairs, repeated_table, sample_pairs,  # noqa: E402
                   sample_table, write_parallel_text)
from benchmarks.drivers.report import check_targets, format_report  # noqa: E402
from rescorer.models.flops import flops_per_batch  # noqa: E402
from benchmarks.drivers.roofline import measure_matmul  # noqa: E402

FULL = dict(pairs_small=20000, peer_pairs=4000, rounds=3, e2e_lines_small=100000, e2e_lines_paper=12000,
            e2e_rounds=2, io_lines=0, memory_lines="0.1M,1M,10M", train_updates_small=40,
            train_updates_paper=8, onmt_batch_size=64, arch_pairs=1000, accuracy_pairs=100000,
            tried_pairs=1000, tried_rounds=2, processes_lines_small=40000, processes_lines_paper=2400,
            profile_pairs=600)
QUICK = dict(pairs_small=2000, peer_pairs=600, rounds=2, e2e_lines_small=20000, e2e_lines_paper=2000,
             e2e_rounds=1, io_lines=200000, memory_lines="0.1M,1M", train_updates_small=6,
             train_updates_paper=2, onmt_batch_size=64, arch_pairs=300, accuracy_pairs=5000,
             tried_pairs=200, tried_rounds=1, processes_lines_small=8000, processes_lines_paper=600,
             profile_pairs=200)


def parse_count(text: str) -> int:
    """'0.1M' -> 100000, '20k' -> 20000, '500' -> 500."""
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def median(values):
    return float(statistics.median(values))


def environment() -> dict:
    """What the figures depend on, the CPU's bf16 and int8 instructions included (issue 18)."""
    features = cpu_features()
    return {"python": platform.python_version(), "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "cpu": features.describe() if features else platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "load_avg_at_start": os.getloadavg(),
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "omp": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY") if k in os.environ},
            "table": str(DEFAULT_TABLE), "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def rate(pairs: int, tokens: int, seconds: float) -> dict:
    return {"pairs": pairs, "seconds": seconds, "pairs_per_s": pairs / seconds, "tgt_tokens_per_s": tokens / seconds}


def model_only_small(args, vocabs, results) -> None:
    bundle = ours.make_bundle("small", *vocabs)
    data = ours.encode(bundle, sample_pairs(args.pairs_small))
    ours.warm_up(bundle, data)
    naive_ids = list(zip(data.src, data.tgt))[:: max(1, args.pairs_small // args.peer_pairs)]
    naive_model = naive_baseline.NaiveEncoderDecoder(bundle.config).eval()
    naive_baseline.score_naive(naive_model, naive_ids[:128])
    naive_data = ours.Encoded([s for s, _ in naive_ids], [t for _, t in naive_ids])
    rounds = {"ours": [], "ours_same_pairs": [], "naive": []}
    for _ in range(args.rounds):
        rounds["ours"].append(ours.time_model_only(bundle, data))
        rounds["ours_same_pairs"].append(ours.time_model_only(bundle, naive_data))
        rounds["naive"].append(naive_baseline.measure(naive_ids, bundle.config, model=naive_model)["seconds"])
    results["model_only"]["small"] = {
        "fp32": rate(len(data.src), data.tgt_tokens, median(rounds["ours"])),
        "naive": rate(len(naive_ids), naive_data.tgt_tokens, median(rounds["naive"])),
        "ours_over_naive": median([n / o for o, n in zip(rounds["ours_same_pairs"], rounds["naive"])]),
        "flops_per_pair": flops_per_batch(bundle.config, data.src_lengths, data.tgt_lengths) / len(data.src),
        "rounds": rounds}


def model_only_paper(args, vocabs, results) -> ours.Encoded:
    """Ours (fp32 and bf16), OpenNMT-py (translate and direct) and naive on the same pairs, interleaved."""
    bundle = ours.make_bundle("paper", *vocabs)
    pairs = sample_pairs(args.peer_pairs)
    data = ours.encode(bundle, pairs)
    int8 = ours.int8_bundle(bundle)
    ours.warm_up(bundle, data)
    ours.warm_up(bundle, data, precision="bf16")
    ours.warm_up(int8, data, precision="int8")
    with ours.threads(1):
        ours.warm_up(bundle, data)
    ids = list(zip(data.src, data.tgt))
    torch.manual_seed(0)
    naive_model = naive_baseline.NaiveEncoderDecoder(bundle.config).eval()
    naive_baseline.score_naive(naive_model, ids[:128])
    def one_thread():
        with ours.threads(1):
            return ours.time_model_only(bundle, data)

    fns = {"ours": lambda: ours.time_model_only(bundle, data),
           "ours_bf16": lambda: ours.time_model_only(bundle, data, precision="bf16"),
           "ours_int8": lambda: ours.time_model_only(int8, data, precision="int8"),
           "ours_1_thread": one_thread,
           "naive": lambda: naive_baseline.measure(ids, bundle.config, model=naive_model)["seconds"]}
    if not args.skip_onmt:
        onmt_dir = RESULTS_DIR / "onmt"
        src_txt, tgt_txt = onmt_dir / f"pairs-{len(pairs)}.src", onmt_dir / f"pairs-{len(pairs)}.tgt"
        onmt_dir.mkdir(parents=True, exist_ok=True)
        write_parallel_text(pairs, src_txt, tgt_txt)
        log("OpenNMT-py: venv and checkpoint")
        onmt_peer.ensure_venv()
        checkpoint = onmt_peer.build_checkpoint(
            onmt_dir, bundle.src_vocab.tokens[3:], bundle.tgt_vocab.tokens[3:], src_txt, tgt_txt,
            bundle.config.hidden_size, bundle.config.embed_dim)
        onmt_runs = {"onmt_translate": [], "onmt_direct": []}

        def translate():
            run = onmt_peer.run_translate(checkpoint, src_txt, tgt_txt, args.onmt_batch_size)
            if run["pairs"] != len(pairs):
                raise RuntimeError(f"onmt_translate printed {run['pairs']} gold scores for {len(pairs)} pairs")
            onmt_runs["onmt_translate"].append(run)
            return run["seconds"]

        def direct():
            run = onmt_peer.run_direct(checkpoint, src_txt, tgt_txt, args.onmt_batch_size)
            onmt_runs["onmt_direct"].append(run)
            return run["seconds"]

        fns.update(onmt_translate=translate, onmt_direct=direct)
    rounds = {name: [] for name in fns}
    for i in range(args.rounds):
        log(f"paper model-only round {i + 1}/{args.rounds}")
        names = list(fns) if i % 2 == 0 else list(reversed(fns))
        for name in names:
            rounds[name].append(fns[name]())
    flops = flops_per_batch(bundle.config, data.src_lengths, data.tgt_lengths)
    res = {"fp32": rate(len(ids), data.tgt_tokens, median(rounds["ours"])),
           "bf16": rate(len(ids), data.tgt_tokens, median(rounds["ours_bf16"])),
           "int8": rate(len(ids), data.tgt_tokens, median(rounds["ours_int8"])),
           "fp32_1_thread": rate(len(ids), data.tgt_tokens, median(rounds["ours_1_thread"])),
           "int8_over_fp32": median([o / q for o, q in zip(rounds["ours"], rounds["ours_int8"])]),
           "bf16_over_fp32": median([o / q for o, q in zip(rounds["ours"], rounds["ours_bf16"])]),
           "naive": rate(len(ids), data.tgt_tokens, median(rounds["naive"])),
           "flops_per_pair": flops / len(ids), "rounds": rounds,
           "mean_src_len": sum(data.src_lengths) / len(ids), "mean_tgt_len": sum(data.tgt_lengths) / len(ids)}
    for peer in ("naive", "onmt_translate", "onmt_direct"):
        if peer in rounds:
            res[f"ours_over_{peer}"] = median([p / o for o, p in zip(rounds["ours"], rounds[peer])])
    if not args.skip_onmt:
        for name, runs in onmt_runs.items():
            res[name] = rate(len(ids), data.tgt_tokens, median(rounds[name]))
            res[name]["runs"] = runs
        res["onmt_flops_per_pair"] = sum(
            onmt_peer.onmt_flops_per_pair(bundle.config.hidden_size, bundle.config.embed_dim,
                                          len(bundle.tgt_vocab) + 1, s, t)
            for s, t in zip(data.src_lengths, data.tgt_lengths)) / len(ids)
    results["model_only"]["paper"] = res
    return data


def end_to_end(args, vocabs, results) -> None:
    for preset, lines in (("small", args.e2e_lines_small), ("paper", args.e2e_lines_paper)):
        if lines <= 0:
            continue
        log(f"end to end, {preset}: {lines} lines")
        bundle = ours.make_bundle(preset, *vocabs)
        model = ours.save_bundle(bundle, RESULTS_DIR / f"model-{preset}-random.pt")
        table = sample_table(lines)
        data = ours.encode(bundle, read_table_pairs(table))
        ours.warm_up(bundle, data)
        cli, model_only = [], []
        for _ in range(args.e2e_rounds):
            cli.append(ours.run_cli_score(table, model))
            model_only.append(ours.time_model_only(bundle, data))
        seconds = median([run["seconds"] for run in cli])
        results["end_to_end"][preset] = {
            "lines": lines, "cli_seconds": seconds, "lines_per_s": lines / seconds,
            "wall_lines_per_s": lines / median([run["wall_seconds"] for run in cli]),
            "model_only_lines_per_s": lines / median(model_only),
            "e2e_over_model_only": median([m / c["seconds"] for c, m in zip(cli, model_only)]),
            "peak_rss_mib": max(run["peak_rss_mib"] for run in cli), "runs": cli, "model_only_runs": model_only}
    lines = args.io_lines or None
    table = sample_table(lines) if lines else DEFAULT_TABLE
    log(f"I/O floor on {table.name}")
    results["io_floor"] = {"table": str(table), **measure_io_floor(table, RESULTS_DIR)}


def memory(args, vocabs, results) -> None:
    bundle = ours.tiny_bundle(*vocabs)
    model = ours.save_bundle(bundle, RESULTS_DIR / "model-tiny-random.pt")
    rows = {}
    for text in args.memory_lines.split(","):
        lines = parse_count(text)
        log(f"memory: {lines} lines (making the table if needed)")
        table = repeated_table(lines)
        # One thread: with two, the tiny model's thousands of microscopic ops per chunk wait on
        # OpenMP barriers whenever the other core is busy, and 10M lines would take hours.
        run = ours.run_cli_score(table, model, threads=1)
        rows[text] = {**run, "lines_per_s": run["lines"] / run["seconds"]}
    results["memory"] = {"model": "tiny stand-in (100-word shortlists, 16 units), 1 thread", "rows": rows}


def training(args, vocabs, results) -> None:
    pairs = sample_pairs(args.pairs_small)
    for preset, updates in (("small", args.train_updates_small), ("paper", args.train_updates_paper)):
        if updates > 0:
            log(f"training, {preset}: {updates} updates")
            bundle = ours.make_bundle(preset, *vocabs)
            results["training"][preset] = ours.measure_training(bundle, pairs, RESULTS_DIR, updates)


def trained_model(args) -> Path:
    """The model for the accuracy figures: --trained-model, else a `small` model trained here for
    --accuracy-train-seconds on the real table (kept under benchmarks/results/)."""
    if args.trained_model:
        return args.trained_model
    path = RESULTS_DIR / f"trained-small-{args.accuracy_train_seconds}s.pt"
    if not path.exists():
        log(f"accuracy: training a small model for {args.accuracy_train_seconds} s (once; kept as {path.name})")
        subprocess.run([sys.executable, str(HERE.parents[1] / "cli.py"), "-q", "train", str(DEFAULT_TABLE), "-o", str(path),
                        "--preset", "small", "--max-time", str(args.accuracy_train_seconds), "--max-updates", "10000000",
                        "--patience", "1000", "--cache-dir", str(RESULTS_DIR / "trained-small.cache"), "--force"],
                       check=True)
    return path


def roofline_for(results) -> None:
    """Achieved GFLOP/s of each model-only figure, as a share of the matmul rate measured in this
    run for the same dtype and thread count (and of one core's fp32 rate)."""
    roof, threads = results["roofline"], results["environment"]["threads"]
    rows = {"fp32": ("float32", threads), "bf16": ("bfloat16", threads), "int8": ("float32", threads),
            "fp32_1_thread": ("float32", 1)}
    for res in results["model_only"].values():
        for precision, (dtype, count) in rows.items():
            if precision in res:
                achieved = res["flops_per_pair"] * res[precision]["pairs_per_s"] / 1e9
                peak = roof.get(f"{dtype}/{count}", roof[f"{dtype}/2"])["peak_gflops"]
                res[precision].update(gflops=achieved, of_peak=achieved / peak,
                                      of_fp32_peak_1_thread=achieved / roof["float32/1"]["peak_gflops"])
        fp32_peak = roof.get(f"float32/{threads}", roof["float32/2"])["peak_gflops"]
        for peer in ("onmt_translate", "onmt_direct"):  # their own model's FLOPs, for comparison
            if peer in res and "onmt_flops_per_pair" in res:
                achieved = res["onmt_flops_per_pair"] * res[peer]["pairs_per_s"] / 1e9
                res[peer].update(gflops=achieved, of_peak=achieved / fp32_peak)


def cuda_figures(args, vocabs, results) -> None:
    if not torch.cuda.is_available():
        results["cuda"] = {"available": False, "note": "no CUDA device on this machine; no GPU figures"}
        return
    bundle = ours.make_bundle("paper", *vocabs)
    data = ours.encode(bundle, sample_pairs(args.peer_pairs))
    res = {"available": True, "device": torch.cuda.get_device_name(0)}
    for precision in ("fp32", "bf16"):
        ours.warm_up(bundle, data, device="cuda", precision=precision)
        seconds = median([ours.time_model_only(bundle, data, precision=precision, device="cuda")
                          for _ in range(args.rounds)])
        res[precision] = rate(len(data.src), data.tgt_tokens, seconds)
    bundle.model.cpu()
    results["cuda"] = res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small samples, no 10M table (about 3-5 min)")
    parser.add_argument("--json", type=Path, help="where to write the JSON (default benchmarks/results/bench-*.json)")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads for every measurement, subprocesses included (default: torch's, one per core)")
    for name, value in FULL.items():
        kind = str if isinstance(value, str) else int
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=None,
                            help=f"default {value} ({QUICK[name]} with --quick)")
    parser.add_argument("--trained-model", type=Path,
                        help="a trained model for the bf16/int8 accuracy figures (default: train a small one)")
    parser.add_argument("--accuracy-train-seconds", type=int, default=600,
                        help="training time of that default model (default 600)")
    parser.add_argument("--archs", type=archs.parse_archs, default="all",
                        help="architectures whose paper presets' model-only speed is measured (comma list; default all)")
    for part in ("roofline", "onmt", "small", "paper", "archs", "accuracy", "e2e", "tried", "profile", "memory",
                 "training"):
        parser.add_argument(f"--skip-{part}", action="store_true")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)

    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = args.json or RESULTS_DIR / f"bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    results = {"environment": environment(), "settings": {k: getattr(args, k) for k in FULL},
               "quick": args.quick, "model_only": {}, "end_to_end": {}, "training": {}}
    started = time.perf_counter()
    if not args.skip_roofline:
        log("roofline: fp32 and bf16 matmul, 1 and 2 threads")
        results["roofline"] = measure_matmul(threads=sorted({1, 2, torch.get_num_threads()}), dtypes=("float32", "bfloat16"),
                                             repeats=3 if args.quick else 5)
    log("shortlists of the real table")
    vocabs = ours.load_shortlists(DEFAULT_TABLE, RESULTS_DIR)
    def save() -> None:  # after every part, so an interrupted run keeps what it measured
        out.write_text(json.dumps(results, indent=1))

    if not args.skip_small:
        log("model-only, small")
        model_only_small(args, vocabs, results)
        save()
    if not args.skip_paper:
        model_only_paper(args, vocabs, results)
        save()
    if not args.skip_archs:
        results["archs"] = archs.model_only_archs(args.archs, vocabs, args.arch_pairs, args.rounds, log)
        save()
    if "roofline" in results:
        roofline_for(results)
    if not args.skip_accuracy:
        log(f"accuracy of bf16 and int8 against fp32, {args.accuracy_pairs} pairs")
        results["accuracy"] = accuracy.measure_accuracy(trained_model(args), args.accuracy_pairs)
        save()
    if not args.skip_e2e:
        end_to_end(args, vocabs, results)
        save()
    if not args.skip_tried:
        results["tried"] = {"model_variants": tried.try_model_variants(vocabs, args.tried_pairs, args.tried_rounds, log)}
        save()
        results["tried"]["processes"] = tried.try_processes(
            vocabs, {"small": args.processes_lines_small, "paper": args.processes_lines_paper}, args.tried_rounds, log)
        save()
    if not args.skip_profile:
        log("profiles: the paper model's operators, the reader's stages")
        bundle = ours.make_bundle("paper", *vocabs)
        data = ours.encode(bundle, sample_pairs(args.profile_pairs))
        results["profiles"] = [profiles.profile_model_only(bundle, data, threads)
                               for threads in sorted({1, torch.get_num_threads()})]
        results["profiles"].append(profiles.profile_model_only(bundle, data, torch.get_num_threads(), precision="bf16"))
        if args.e2e_lines_small > 0:
            results["reader_breakdown"] = profiles.reader_breakdown(sample_table(args.e2e_lines_small), vocabs,
                                                                    RESULTS_DIR)
        save()
    if not args.skip_memory:
        memory(args, vocabs, results)
        save()
    if not args.skip_training:
        training(args, vocabs, results)
        save()
    cuda_figures(args, vocabs, results)
    results["environment"]["load_avg_at_end"] = os.getloadavg()
    results["total_seconds"] = time.perf_counter() - started
    results["targets"] = check_targets(results)
    save()
    print(format_report(results))
    print(f"\nJSON: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
