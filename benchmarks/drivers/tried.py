"""Speed ideas for the `paper` preset tried in issue 11, adopted or not, each measured against the
default on the same pairs, in interleaved rounds (medians of per-round speed ratios):

- batches one after another on all of torch's threads, as before (now N batches at once, one
  thread each: rescorer.scoring.batch_scoring._score_in_workers);
- the output layer as it was before (addmm with the bias, then a max-shifted logsumexp), to
  show what rescorer.models.softmax gains;
- torch.compile of the recurrent step (every GRU/LSTM layer's `step`) and of the output layer
  (the block's product, bias and logsumexp as one compiled function), compile time apart;
- larger token budgets: more rows per recurrent product, the output layer still 512 rows a block;
- the three recurrent gate products fused into one (the cuDNN-form GRU, `--gru-form cudnn`:
  a different model, h~ = tanh(W x + r * (U h + b)), so not a drop-in for paper-form models);
- 2 processes x 1 thread against 1 process x 2 threads: two `rescore score` processes on the
  halves of a table, run at once, against one process on the whole table.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.nn import functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from benchmarks.helpers import ours  # noqa: E402
from benchmarks.helpers.pairs import RESULTS_DIR, sample_pairs, sample_table  # noqa: E402
from rescorer.scoring import batch_scoring as scoring  # noqa: E402
from rescorer.models.precision import autocast  # noqa: E402
from rescorer.models.flops import flops_per_batch  # noqa: E402
from rescorer.models.cells import RecurrentLayer  # noqa: E402

__all__ = ["try_model_variants", "try_processes"]


@contextlib.contextmanager
def _patched(obj, name: str, value):
    saved = obj.__dict__.get(name, None)
    setattr(obj, name, value)
    try:
        yield
    finally:
        if saved is None:
            delattr(obj, name)
        else:
            setattr(obj, name, saved)


def _old_output_layer(model):
    """addmm with the bias, then logsumexp: the output layer before issue 11."""
    def gold_log_probs(features, gold):
        pieces = []
        for start in range(0, features.size(0), 512):
            logits = model.output_left(features[start:start + 512])
            block_gold = gold[start:start + 512].unsqueeze(1)
            pieces.append(logits.gather(1, block_gold).squeeze(1) - torch.logsumexp(logits, dim=1))
        return torch.cat(pieces)
    return _patched(model, "gold_log_probs", gold_log_probs)


def _compiled_output_layer(model):
    layer = model.output_left

    @torch.compile(dynamic=True)
    def block(features, gold, weight, bias):
        logits = F.linear(features, weight, bias)
        return logits.gather(1, gold.unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=1)

    def gold_log_probs(features, gold):
        return torch.cat([block(features[start:start + 512], gold[start:start + 512], layer.weight, layer.bias)
                          for start in range(0, features.size(0), 512)])
    return _patched(model, "gold_log_probs", gold_log_probs)


def _one_batch_at_a_time():
    """Batches one after another, each on all of torch's threads: scoring before issue 11."""
    def sequential(model, src_seqs, tgt_seqs, batches, precision, workers, scores):
        with torch.inference_mode(), autocast(torch.device("cpu"), precision):
            for batch in batches:
                tensors = [*scoring._padded(src_seqs, batch), *scoring._padded(tgt_seqs, batch)]
                scores[batch] = model(*tensors).double().numpy()
    return _patched(scoring, "_score_in_workers", sequential)


def _compiled_steps(model):
    stack = contextlib.ExitStack()
    for layer in model.modules():
        if isinstance(layer, RecurrentLayer):
            stack.enter_context(_patched(layer, "step", torch.compile(layer.step, dynamic=True)))
    return stack


def try_model_variants(vocabs, num_pairs: int, rounds: int, log=print) -> dict:
    """Model-only pairs/s of each variant and its speed over the default, paper preset, fp32."""
    bundle = ours.make_bundle("paper", *vocabs)
    cudnn = ours.make_bundle("paper", *vocabs, reset_after=True)
    data = ours.encode(bundle, sample_pairs(num_pairs))
    plain = contextlib.nullcontext
    variants = {  # name: (bundle, context factory, token budget)
        "default (issue 11)": (bundle, plain, None),
        "one batch at a time on all threads (as before)": (bundle, _one_batch_at_a_time, None),
        "output layer as before (addmm + logsumexp)": (bundle, lambda: _old_output_layer(bundle.model), None),
        "torch.compile: output layer": (bundle, lambda: _compiled_output_layer(bundle.model), None),
        "torch.compile: recurrent step": (bundle, lambda: _compiled_steps(bundle.model), None),
        "token budget 12000 (output still 512 rows)": (bundle, plain, 12000),
        "token budget 24000 (output still 512 rows)": (bundle, plain, 24000),
        "3 recurrent gate products fused (cuDNN-form GRU)": (cudnn, plain, None),
    }
    compile_seconds = {}
    for name, (scorer, context, budget) in variants.items():
        log(f"tried: warming up {name}")
        with context():
            start = time.perf_counter()
            ours.warm_up(scorer, data)
            if "compile" in name:
                compile_seconds[name] = time.perf_counter() - start
    times = {name: [] for name in variants}
    for index in range(rounds):
        log(f"tried: round {index + 1}/{rounds}")
        for name in (list(variants) if index % 2 == 0 else list(variants)[::-1]):
            scorer, context, budget = variants[name]
            with context():
                times[name].append(ours.time_model_only(scorer, data, token_budget=budget or 6000))
    default = times["default (issue 11)"]
    flops = flops_per_batch(bundle.config, data.src_lengths, data.tgt_lengths)
    return {"pairs": len(data.src), "flops_per_pair": flops / len(data.src), "rows": {
        name: {"pairs_per_s": len(data.src) / statistics.median(seconds),
               "speed_over_default": statistics.median(d / s for d, s in zip(default, seconds)),
               "compile_seconds": compile_seconds.get(name), "rounds": seconds}
        for name, seconds in times.items()}}


def _halves(table: Path) -> tuple[Path, Path]:
    """The table's first and second halves as gzipped tables beside it (cached)."""
    import gzip

    first, second = table.with_name(table.stem + ".half1.gz"), table.with_name(table.stem + ".half2.gz")
    if not second.exists():
        with gzip.open(table, "rb") as f:
            lines = f.readlines()
        middle = len(lines) // 2
        for path, part in ((first, lines[:middle]), (second, lines[middle:])):
            with gzip.open(path, "wb", compresslevel=1) as out:
                out.writelines(part)
    return first, second


def _two_processes(first: Path, second: Path, model: Path) -> float:
    """Both halves scored at once, one thread each: seconds until the later one finishes
    (each process's own clock, so that the start-up of Python and torch is left out)."""
    with contextlib.ExitStack() as stack:
        runs = [stack.enter_context(_background_score(half, model)) for half in (first, second)]
    return max(run() for run in runs)


@contextlib.contextmanager
def _background_score(table: Path, model: Path):
    import threading

    result = {}
    thread = threading.Thread(target=lambda: result.update(ours.run_cli_score(table, model, threads=1)))
    thread.start()
    try:
        yield lambda: result["seconds"]
    finally:
        thread.join()


def try_processes(vocabs, presets_lines: dict, rounds: int, log=print) -> dict:
    """Lines/s of 1 process x 2 threads and of 2 processes x 1 thread on the same table."""
    results = {}
    for preset, lines in presets_lines.items():
        log(f"tried: 2 processes x 1 thread against 1 x 2, {preset}, {lines} lines")
        bundle = ours.make_bundle(preset, *vocabs)
        model = ours.save_bundle(bundle, RESULTS_DIR / f"model-{preset}-random.pt")
        table = sample_table(lines)
        first, second = _halves(table)
        one, two = [], []
        for index in range(rounds):
            order = [0, 1] if index % 2 == 0 else [1, 0]
            for which in order:
                if which == 0:
                    one.append(ours.run_cli_score(table, model, threads=2)["seconds"])
                else:
                    two.append(_two_processes(first, second, model))
        results[preset] = {"lines": lines, "one_process_2_threads_lines_per_s": lines / statistics.median(one),
                           "two_processes_1_thread_lines_per_s": lines / statistics.median(two),
                           "two_over_one": statistics.median(o / t for o, t in zip(one, two)),
                           "rounds": {"one": one, "two": two}}
    return results


def format_tried(results: dict) -> list:
    lines = []
    model = results.get("model_variants")
    if model:
        lines.append(f"\nTried (paper preset, model-only fp32, {model['pairs']} pairs; medians of interleaved rounds; "
                     f"'speed': over the default, per round)")
        lines.append(f"  {'variant':50s} {'pairs/s':>8s} {'GFLOP/s':>8s} {'speed':>7s}")
        for name, row in model["rows"].items():
            compiled = f"  (compiling took {row['compile_seconds']:.0f} s)" if row.get("compile_seconds") else ""
            lines.append(f"  {name:50s} {row['pairs_per_s']:8.1f} {row['pairs_per_s'] * model['flops_per_pair'] / 1e9:8.1f} "
                         f"{row['speed_over_default']:6.2f}x{compiled}")
    for preset, row in (results.get("processes") or {}).items():
        lines.append(f"  {preset}: 2 processes x 1 thread {row['two_processes_1_thread_lines_per_s']:.0f} lines/s, "
                     f"1 process x 2 threads {row['one_process_2_threads_lines_per_s']:.0f} lines/s "
                     f"({row['two_over_one']:.2f}x; rescore score on {row['lines']} lines, each process's own clock)")
    return lines


if __name__ == "__main__":
    from benchmarks.helpers.pairs import DEFAULT_TABLE

    shortlists = ours.load_shortlists(DEFAULT_TABLE, RESULTS_DIR)
    found = {"model_variants": try_model_variants(shortlists, 300, 1),
             "processes": try_processes(shortlists, {"small": 4000}, 1)}
    print("\n".join(format_tried(found)))
