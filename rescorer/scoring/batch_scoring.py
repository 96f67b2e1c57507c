"""Batched teacher-forced scoring: log p(target | source) for many pairs at once.

Pairs are sorted by length and cut into token-budget batches, scored in inference mode, and
put back in their original order. Results do not depend on the budget or on how the caller
chunks its pairs (up to float rounding, far below 1e-4 nats in fp32).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Optional, Sequence

import numpy as np
import torch

from rescorer.data.batching import PaddedBatch, length_sorted_batches
from rescorer.data.padding import pad_sequences
from rescorer.data.directions import oriented
from rescorer.data.phrase_encoding import EncodedPhrases
from rescorer.models import PhraseScorer
from rescorer.models.model_files import ModelBundle
from rescorer.models.precision import autocast, precision_for
from rescorer.runtime.device import resolve_device

# Padded tokens per batch. On the CPU a few thousand keep the activations in cache; a GPU needs
# far more rows per matmul to fill its cores (the paper model's logits for 131k tokens in bf16
# take 4 GB).
TOKEN_BUDGETS = {"cpu": 6000, "cuda": 131072}
DEFAULT_TOKEN_BUDGET = TOKEN_BUDGETS["cpu"]


def default_token_budget(device: torch.device) -> int:
    return TOKEN_BUDGETS.get(device.type, DEFAULT_TOKEN_BUDGET)


def score_encoded(model: PhraseScorer, src_seqs: Sequence[Sequence[int]],
                  tgt_seqs: Sequence[Sequence[int]], token_budget: Optional[int] = None,
                  precision: str = "fp32") -> np.ndarray:
    """log p(tgt | src) in nats for encoded pairs, float64 array in input order.

    The model must already sit on its device; inputs are copied there batch by batch
    (pinned and non-blocking on CUDA, so the copy overlaps the previous batch's compute).
    On a CPU with N > 1 torch threads, N batches are scored at once, one thread each
    (`_score_in_workers`).
    """
    device = next(model.parameters()).device
    token_budget = token_budget or default_token_budget(device)
    plan = length_sorted_batches(_lengths(src_seqs), _lengths(tgt_seqs), token_budget) if len(src_seqs) else ()
    batches = [(rows, partial(_padded_pair, src_seqs, tgt_seqs, rows)) for rows in plan]
    return _score_in_batches(model, batches, len(src_seqs), precision)


def score_batches(model: PhraseScorer, batches: Sequence[PaddedBatch], num_pairs: int,
                  precision: str = "fp32") -> np.ndarray:
    """log p of `num_pairs` pairs padded ahead into `batches` (rescorer.data.batching.padded_batches,
    in a host worker): the scores `score_encoded` gives them with the budget they were cut by."""
    return _score_in_batches(model, [(batch.rows, partial(_tensors, batch)) for batch in batches],
                             num_pairs, precision)


def _score_in_batches(model: PhraseScorer, batches: list, num_pairs: int, precision: str) -> np.ndarray:
    """Scores of (rows, inputs) batches, `inputs()` giving a batch's four input tensors."""
    device = next(model.parameters()).device
    scores = np.zeros(num_pairs, dtype=np.float64)
    workers = torch.get_num_threads() if device.type == "cpu" else 1
    if workers > 1 and len(batches) > 1:
        _score_in_workers(model, batches, precision, workers, scores)
        return scores
    pinned = device.type == "cuda"
    with _no_grad(precision), autocast(device, precision):
        pending = []
        for rows, inputs in batches:
            tensors = inputs()
            if pinned:
                tensors = [t.pin_memory() for t in tensors]
            tensors = [t.to(device, non_blocking=pinned) for t in tensors]
            pending.append((rows, model(*tensors)))
        for rows, batch_scores in pending:
            scores[rows] = batch_scores.double().cpu().numpy()
    return scores


def _score_in_workers(model: PhraseScorer, batches: list, precision: str, workers: int,
                      scores: np.ndarray) -> None:
    """Score (rows, inputs) `batches` on `workers` threads of one torch thread each, into `scores`.

    The recurrences multiply a few hundred rows at a time, which a 2-thread matmul splits
    poorly, and every one of the model's thousands of small operators waits at an OpenMP
    barrier: one batch per core does neither (in-process, the 2 processes x 1 thread that
    benchmarks/drivers/tried.py measures). Each pair's score is computed by one thread whichever it is,
    so results do not depend on the scheduling. torch's thread count is 1 meanwhile, for the
    whole process.
    """
    device = next(model.parameters()).device
    queue = iter(batches)
    lock, stop = threading.Lock(), threading.Event()

    def work() -> None:
        with _no_grad(precision), autocast(device, precision):  # per thread; one weight cast each
            while not stop.is_set():
                with lock:
                    batch = next(queue, None)
                if batch is None:
                    return
                rows, inputs = batch
                scores[rows] = model(*inputs()).double().numpy()

    torch.set_num_threads(1)  # the worker threads start with the process-wide count
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rescorer-batch")
    try:
        for done in [pool.submit(work) for _ in range(workers)]:
            done.result()
    finally:
        stop.set()  # an error or Ctrl-C: no more batches start
        pool.shutdown(wait=True)
        torch.set_num_threads(workers)


def _no_grad(precision: str):
    """No autograd while scoring. Under bf16 autocast `no_grad`: autocast keeps one bf16 copy of
    each weight only outside inference mode, which would cast every weight again at every step."""
    return torch.no_grad() if precision == "bf16" else torch.inference_mode()


def _lengths(seqs) -> np.ndarray:
    if isinstance(seqs, EncodedPhrases):
        return seqs.lengths
    return np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))


def _padded(seqs, batch: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded ids and lengths of `batch`'s sequences (EncodedPhrases pad themselves at once)."""
    if isinstance(seqs, EncodedPhrases):
        return tuple(map(torch.from_numpy, seqs.padded(batch)))
    return pad_sequences([seqs[i] for i in batch])


def _padded_pair(src_seqs, tgt_seqs, batch: np.ndarray) -> tuple[torch.Tensor, ...]:
    return (*_padded(src_seqs, batch), *_padded(tgt_seqs, batch))


def _tensors(batch: PaddedBatch) -> tuple[torch.Tensor, ...]:
    return tuple(map(torch.from_numpy, batch.arrays()))


def score_pairs(bundle: ModelBundle, pairs: Sequence[tuple[str, str]], device: str = "auto",
                precision: str = "auto", token_budget: Optional[int] = None) -> np.ndarray:
    """log p(tgt | src) in nats for whitespace-tokenized (src, tgt) phrase pairs (log p(src | tgt)
    for an inverse model). A subword model reads each side as its pieces: log p of a sentence
    is the sum over its pieces (and the end)."""
    torch_device = resolve_device(device)
    bundle.model.to(torch_device).eval()
    pairs = [oriented(src, tgt, bundle.direction) for src, tgt in pairs]
    src_encoding, tgt_encoding = bundle.src_encoding, bundle.tgt_encoding
    src_seqs = [src_encoding.encode(src) for src, _ in pairs]
    tgt_seqs = [tgt_encoding.encode(tgt) for _, tgt in pairs]
    return score_encoded(bundle.model, src_seqs, tgt_seqs, token_budget,
                         precision_for(precision, torch_device.type, "score"))
