"""Three ways to cut the main job's time on 2 CPU cores without changing the model, measured
(issue 33): why `rescore TABLE` stays near 31 minutes on the bible table there.

    OMP_NUM_THREADS=1 python3 benchmarks/drivers/main_job_ceiling.py output [--model M --table T]
    python3 benchmarks/drivers/main_job_ceiling.py sharing --table T
    OMP_NUM_THREADS=2 python3 benchmarks/drivers/main_job_ceiling.py split --table T --cache C

- `output`: scoring is 74% the output layer's product (rows x 128 @ 128 x 15,000). bf16 rounds
  the logits themselves (mean |delta log p| 0.25 on the converged model), but int8 products add
  up exactly in int32 and VNNI runs them about 5x faster than fp32: each operand as a high and a
  low int8 part (x ~ s (hi + lo / 128)) gives the normaliser to fp32's rounding in three
  products. Times one 512-row block of `rescorer.models.softmax._bounded_block` against it, and
  with --model and --table, how far it moves a trained model's scores of the table's first pairs.
- `sharing`: a source's targets share prefixes, and a decoder could compute each (source, target
  prefix) state and its softmax once. Counts the positions scored today against those distinct
  states (words, as the table spells them; a shortlist's [UNK] merges a few more): the most that
  sharing could save. The table must be sorted by source, as Moses writes it.
- `split`: two torch threads split each training update's small recurrent products poorly; the
  batch's halves on two Python threads of one torch thread each (gradients summed in a fixed
  order, as scoring's `_score_in_workers` runs one batch per core) might not. Times forward and
  backward both ways, and on one thread.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from rescorer.models import softmax  # noqa: E402
from benchmarks.helpers.timing import median, time_repeated  # noqa: E402

__all__ = ["int8_parts", "int8_block", "count_shared_states"]

BLOCK_ROWS, RANK, VOCAB = 512, 128, 15000


def int8_parts(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(hi, lo, scale) with values ~ scale * (hi + lo / 128) per row, hi and lo int8: 15 bits
    of each row's largest value instead of int8's 7."""
    scale = values.abs().amax(dim=1, keepdim=True).clamp_min(torch.finfo(values.dtype).tiny) / 127.0
    hi = torch.round(values / scale)
    lo = torch.round((values - hi * scale) / (scale / 128)).clamp_(-127, 127)
    return hi.to(torch.int8), lo.to(torch.int8), scale


# a model's output matrix split once: id(weight) -> (weight, hi^T, [lo | hi]^T, scale); holding the
# weight keeps its id from going to another tensor
_weight_parts: dict = {}


def int8_block(features: torch.Tensor, gold: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
               exp_bias: torch.Tensor, weight_bound: float, bias_bound: float) -> torch.Tensor:
    """`_bounded_block`'s log p(gold) with the normaliser's products in int8: f.w ~
    s_f s_w (hi_f.hi_w + (hi_f.lo_w + lo_f.hi_w) / 128), two int32 products (K = 128 and 256);
    the gold logit stays fp32. Same arguments; no overflow shift (a benchmark's models need none)."""
    key = id(weight)
    if key not in _weight_parts:
        hi, lo, scale = int8_parts(weight.detach())  # (vocab, rank)
        _weight_parts[key] = (weight, hi.t(), torch.cat([lo, hi], dim=1).t(), scale.t())  # int mm: fastest on these views
    _, hi_t, both_t, weight_scale = _weight_parts[key]
    hi, lo, scale = int8_parts(features)
    products = torch._int_mm(hi, hi_t).mul_(128).add_(torch._int_mm(torch.cat([hi, lo], dim=1), both_t))
    logits = products.float().mul_(scale / 128).mul_(weight_scale)  # (rows, vocab), no bias yet
    picked = (features * weight[gold]).sum(dim=1) + bias[gold]
    return picked - (logits.exp_() @ exp_bias).log_()


@contextlib.contextmanager
def int8_normaliser():
    """Score with `int8_block` in place of the fp32 block (CPU, fp32, no autograd: its path)."""
    saved = softmax._bounded_block
    softmax._bounded_block = int8_block
    try:
        yield
    finally:
        softmax._bounded_block = saved


def _ms_per_call(function) -> float:
    """Milliseconds a call, averaged over a second of calls after one untimed."""
    return 1000 * time_repeated(function, repeats=1, min_time=1.0)[0]


def measure_output(rounds: int, model_path, table_path) -> None:
    torch.manual_seed(0)
    features, weight = torch.randn(BLOCK_ROWS, RANK) * 0.3, torch.randn(VOCAB, RANK) * 0.1
    bias, gold = torch.randn(VOCAB) * 0.1, torch.randint(0, VOCAB, (BLOCK_ROWS,))
    args = (features, gold, weight, bias, bias.exp(), float(weight.norm(dim=1).max()), float(bias.abs().max()))
    fp32, int8 = softmax._bounded_block(*args), int8_block(*args)
    print(f"one block of {BLOCK_ROWS} rows x {RANK} @ {RANK} x {VOCAB}, {torch.get_num_threads()} thread(s); "
          f"int8 against fp32: max |delta log p| {float((fp32 - int8).abs().max()):.2g}")
    ratios = []
    for round_ in range(rounds):
        fp32_ms = _ms_per_call(lambda: softmax._bounded_block(*args))
        int8_ms = _ms_per_call(lambda: int8_block(*args))
        ratios.append(fp32_ms / int8_ms)
        print(f"  round {round_ + 1}: fp32 {fp32_ms:.1f} ms, int8 hi/lo {int8_ms:.1f} ms: {fp32_ms / int8_ms:.2f}x")
    print(f"  int8 hi/lo speed over fp32, median of rounds: {median(ratios):.2f}x")
    products_ms = (_ms_per_call(lambda: torch.nn.functional.linear(features, weight)),
                   _ms_per_call(lambda: torch._int_mm(args[0].to(torch.int8), weight.to(torch.int8).t())))
    print(f"  the products alone: fp32 {products_ms[0]:.1f} ms, one int8 {products_ms[1]:.1f} ms")
    if model_path is not None:
        measure_model_delta(Path(model_path), Path(table_path))


def measure_model_delta(model_path: Path, table_path: Path) -> None:
    """`--precision auto`'s check (rescorer.scoring.precision_check), int8 normaliser in bf16's place."""
    from rescorer.models.model_files import load_model
    from rescorer.scoring import precision_check
    from rescorer.scoring.batch_scoring import score_encoded

    def score(bundle, src, tgt, precision: str):
        with int8_normaliser() if precision == "bf16" else contextlib.nullcontext():
            return score_encoded(bundle.model, src, tgt)

    bundle = load_model(model_path)
    bundle.model.eval()
    check = precision_check.check_bf16(bundle, f"{model_path.name}, int8 hi/lo normaliser",
                                       precision_check.table_sample(table_path), score=score)
    print("  " + check.describe())


def count_shared_states(pairs) -> dict:
    """Positions scored (target words + [EOS]), distinct (source, target prefix) states, and
    sources, of (src, tgt) pairs whose equal sources come together."""
    positions = states = sources = 0
    source, prefixes = None, set()
    for src, tgt in pairs:
        if src != source:
            states += len(prefixes)
            source, prefixes = src, set()
            sources += 1
        words = tgt.split()
        positions += len(words) + 1
        prefixes.update(" ".join(words[:end]) for end in range(len(words) + 1))
    return {"positions": positions, "states": states + len(prefixes), "sources": sources}


def measure_sharing(table_path: Path) -> None:
    from rescorer.io.table_reader import PhraseTableReader

    with PhraseTableReader(table_path) as reader:
        counted = count_shared_states((entry.src, entry.tgt) for entry in reader)
        lines = reader.lines_read
    share = counted["states"] / counted["positions"]
    print(f"{table_path}: {lines:,} pairs, {counted['sources']:,} distinct sources; "
          f"{counted['positions']:,} target positions scored, {counted['states']:,} distinct (source, target "
          f"prefix) states ({share:.1%}): sharing would save at most {1 - share:.1%} of the softmaxes")


def measure_split(table_path: Path, cache_path: Path, updates: int, rounds: int) -> None:
    from benchmarks.helpers.arms import arm_trainer
    from rescorer.training.trainer import batch_tensors

    threads = torch.get_num_threads()
    trainer = arm_trainer("default", table_path, cache_path, seed=1, checkpoint_path=Path("/dev/null"))[2]
    model = trainer.model.train()
    params = list(model.parameters())
    pool = ThreadPoolExecutor(threads, thread_name_prefix="split")

    def gradients(indices, total: int, sampled):
        logp = model(*batch_tensors(trainer.cache, indices, trainer.device), sampled=sampled)
        return torch.autograd.grad(-logp.float().sum() / total, params, allow_unused=True)

    def on_one_thread(indices, total, sampled):
        torch.set_num_threads(1)  # per Python thread
        return gradients(indices, total, sampled)

    def split(indices, sampled):
        parts = [pool.submit(on_one_thread, part, len(indices), sampled) for part in np.array_split(indices, threads)]
        results = [part.result() for part in parts]
        return [None if grads[0] is None else sum(grads[1:], grads[0]) for grads in zip(*results)]

    def ms_per_update(step, torch_threads: int):
        torch.set_num_threads(torch_threads)
        spent, grads = 0.0, None
        for update in range(10 + updates):  # the first 10: warm-up
            indices, sampled = trainer.schedule.batch(update), trainer.sampler(update)
            started = time.perf_counter()
            grads = step(indices, sampled)
            spent += (time.perf_counter() - started) if update >= 10 else 0.0
        return 1000 * spent / updates, grads

    print(f"forward + backward of the default recipe's batches (small cho2014), ms per update over {updates}")
    for round_ in range(rounds):
        together, plain = ms_per_update(lambda i, s: gradients(i, len(i), s), threads)
        halves, summed = ms_per_update(split, threads)
        alone = ms_per_update(lambda i, s: gradients(i, len(i), s), 1)[0]
        print(f"  round {round_ + 1}: {threads} torch threads {together:.1f}, the batch split over {threads} "
              f"Python threads x 1 {halves:.1f} ({together / halves:.2f}x), 1 thread {alone:.1f}")
    difference = max(float((a - b).abs().max()) for a, b in zip(plain, summed) if a is not None)
    print(f"  gradients, split against whole: max |difference| {difference:.2g}")
    pool.shutdown()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("output", "sharing", "split"))
    parser.add_argument("--table", type=Path, help="a gzipped phrase table (the bible table for the figures)")
    parser.add_argument("--model", type=Path, help="output: a trained model, to see its scores move")
    parser.add_argument("--cache", type=Path, help="split: the table's pair cache (a trained model's .cache)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=25)
    args = parser.parse_args(argv)
    needs = {"sharing": ("table",), "split": ("table", "cache"), "output": ("table",) if args.model else ()}
    missing = [name for name in needs[args.what] if getattr(args, name) is None]
    if missing:
        parser.error(f"{args.what} needs --{' --'.join(missing)}")
    if args.what == "output":
        measure_output(args.rounds, args.model, args.table)
    elif args.what == "sharing":
        measure_sharing(args.table)
    else:
        measure_split(args.table, args.cache, args.updates, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
