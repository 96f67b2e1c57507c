"""`--precision auto` when a model scores: bf16 only where the hardware runs it natively AND the
model, on the table at hand, scores in bf16 as it does in fp32.

Why measure rather than go by the device: bf16 scores 1.15-2x faster than fp32 on a CPU with
AVX-512 BF16 or AMX (and frees the GPU's tensor cores), but how far it moves the scores depends
on the model: mean |delta log p| 0.006 (small, CPU) to 0.045 (paper, CUDA), max 0.71. So, once
per model, the table's first SAMPLE_PAIRS pairs (a fixed sample: a run repeated decides the
same) are scored in fp32 and in bf16, and bf16 is kept iff the mean |delta log p| is at most
MAX_MEAN_DELTA nats and, among the sample's sources with two or more targets, bf16's best target
is fp32's for at least MIN_BEST_KEPT of them (a decoder's choice among a source's translations
depends on that). Otherwise fp32, with one line giving the figures. A sample of fewer than
MIN_SAMPLE_PAIRS pairs (a small table or n-best list) is not checked: auto stays fp32 and says so.
Every line gives the number of pairs the decision rests on. A CPU without native bf16
scores in fp32 unchecked (bf16 is emulated there, and slower); an explicit fp32, bf16 or int8 is
never checked. Training, the CSLM and `translate` resolve 'auto' by device alone
(rescorer.models.precision.precision_for).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from rescorer.counts import counted
from rescorer.data.directions import oriented
from rescorer.data.phrase_encoding import encode_phrases
from rescorer.errors import RescorerError
from rescorer.models.model_files import ModelBundle
from rescorer.runtime.cpu_features import BF16_FLAGS, CpuFeatures, cpu_features
from rescorer.models.precision import precision_for
from rescorer.scoring.batch_scoring import score_encoded

__all__ = ["SAMPLE_PAIRS", "MIN_SAMPLE_PAIRS", "MAX_MEAN_DELTA", "MIN_BEST_KEPT", "Bf16Check", "PrecisionChoice",
           "NoSample", "native_bf16", "compare", "check_bf16", "table_sample", "choose_precision"]

SAMPLE_PAIRS = 2000
# Fewer pairs than this say too little to take bf16 on. Per pair, |delta log p| varies as much as
# its mean (a trained model on the bible table: mean 0.248, sd 0.248), and the first n pairs of a
# table vary more still: a model 30% over the bound on 20,000 pairs (0.026, like the README's
# demo) passes on 38% of the table's 9-pair windows, 12% of its 100-pair ones, 5% at 500, 2.6%
# at 1,000 and none at 2,000 (benchmarks/studies/precision_sample_size.py). A run that gives a smaller
# sample scores fewer pairs than this in all, seconds in fp32, so bf16 would save nothing.
MIN_SAMPLE_PAIRS = 1000
# What a mean |delta log p| costs in BLEU, measured on the proxy bench (docs/proxy-study.md,
# "Precision"): the best phrase system lost about 2.3 BLEU per nat (bf16's 0.13 nats: -0.30;
# int8's 0.05: -0.12; 3 replicates each), so 0.02 nats keeps bf16's cost near 0.05 BLEU, under
# half of one MERT replicate's spread.
MAX_MEAN_DELTA = 0.02  # nats
MIN_BEST_KEPT = 0.99

Pair = tuple  # (src, tgt) as the table has them, whitespace-tokenized


class NoSample(Exception):
    """The table cannot give a sample (a stream is read once); the message says why."""


@dataclass(frozen=True)
class Bf16Check:
    """How far bf16 moved one model's scores of the sample from fp32's."""

    model: str
    pairs: int
    mean_delta: float  # mean |delta log p|, nats
    best_kept: float  # share of `sources` whose best target is the same (nan when there are none)
    sources: int  # sources of the sample with two or more targets

    @property
    def passed(self) -> bool:
        best_ok = self.sources == 0 or self.best_kept >= MIN_BEST_KEPT
        return self.mean_delta <= MAX_MEAN_DELTA and best_ok  # a NaN delta fails

    def describe(self) -> str:
        best = (f"best target kept for {self.best_kept:.1%} of {counted(self.sources, 'source')} "
                f"(bound {MIN_BEST_KEPT:.0%})" if self.sources else "no source with 2+ targets to rank")
        return (f"{self.model}: mean |delta log p| {self.mean_delta:.4g} over {counted(self.pairs, 'pair')} "
                f"(bound {MAX_MEAN_DELTA}), {best}")


@dataclass(frozen=True)
class PrecisionChoice:
    """The resolved precision, and the one line to say about it (None: nothing to say)."""

    precision: str
    line: Optional[str] = None
    checks: tuple = ()


def native_bf16(device, features: Optional[CpuFeatures]) -> bool:
    """CUDA, or a CPU whose flags include an instruction set for bf16 (BF16_FLAGS)."""
    return device.type == "cuda" or (device.type == "cpu" and features is not None and features.has_bf16)


def compare(model: str, fp32: np.ndarray, bf16: np.ndarray, sources: Sequence[str]) -> Bf16Check:
    """The check's figures for one model's fp32 and bf16 scores of the same pairs."""
    delta = float(np.abs(bf16 - fp32).mean()) if len(fp32) else 0.0
    groups: dict = {}
    for index, source in enumerate(sources):
        groups.setdefault(source, []).append(index)
    ranked = [rows for rows in groups.values() if len(rows) > 1]
    kept = [np.argmax(fp32[rows]) == np.argmax(bf16[rows]) for rows in ranked]
    return Bf16Check(model, len(fp32), delta, float(np.mean(kept)) if kept else math.nan, len(ranked))


def _score(bundle: ModelBundle, src, tgt, precision: str) -> np.ndarray:
    return score_encoded(bundle.model, src, tgt, None, precision)


def check_bf16(bundle: ModelBundle, name: str, pairs: Sequence[Pair],
               score: Callable = _score) -> Bf16Check:
    """Score `pairs` (the table's (src, tgt)) with `bundle` in fp32 and bf16 and compare;
    `score(bundle, src_ids, tgt_ids, precision)` gives log p (a test hands in its own)."""
    model_src, model_tgt = oriented([src for src, _ in pairs], [tgt for _, tgt in pairs], bundle.direction)
    src, tgt = encode_phrases(model_src, bundle.src_vocab), encode_phrases(model_tgt, bundle.tgt_vocab)
    fp32, bf16 = (np.asarray(score(bundle, src, tgt, precision), dtype=np.float64) for precision in ("fp32", "bf16"))
    return compare(name, fp32, bf16, [source for source, _ in pairs])


def table_sample(table_path: Path, size: int = SAMPLE_PAIRS) -> list:
    """The table's first `size` good pairs (all, when it has fewer); bad lines are skipped, as
    the scoring that follows reports them."""
    from rescorer.io.path_checks import is_stream
    from rescorer.io.table_reader import SKIP_BAD_LINES, PhraseTableReader

    if is_stream(Path(table_path)):
        name = "stdin" if str(table_path) == "-" else str(table_path)
        raise NoSample(f"{name} can be read only once, and the check reads the table's first {size} pairs "
                       f"before scoring")
    pairs = []
    try:
        with PhraseTableReader(table_path, SKIP_BAD_LINES) as reader:
            for entry in reader:
                pairs.append((entry.src, entry.tgt))
                if len(pairs) == size:
                    break
    except RescorerError as error:  # the scoring itself says what is wrong with the table
        raise NoSample(f"the table's first pairs could not be read ({error})") from None
    if not pairs:
        raise NoSample("the table has no good line to check")
    return pairs


_UNREAD = object()


def choose_precision(asked: str, device, models: Sequence[tuple[str, ModelBundle]],
                     sample: Callable[[], Sequence[Pair]], *, features=_UNREAD,
                     score: Callable = _score) -> PrecisionChoice:
    """The precision to score `models` in: `asked` itself unless it is 'auto', which is bf16 only
    where the device has native bf16 and every model passes the check on `sample()` (called only
    then; NoSample gives fp32). `features` defaults to this machine's /proc/cpuinfo."""
    resolved = precision_for(asked, device.type, "score")  # refuses unknown names and int8 on CUDA
    if asked != "auto":
        return PrecisionChoice(resolved)
    if features is _UNREAD:
        features = cpu_features() if device.type == "cpu" else None
    if not native_bf16(device, features):
        return PrecisionChoice("fp32")
    where = "CUDA" if device.type == "cuda" else f"this CPU ({'/'.join(f for f in BF16_FLAGS if f in features.flags)})"
    try:
        pairs = sample()
    except NoSample as reason:
        return PrecisionChoice("fp32", f"precision auto: fp32, unchecked (0 pairs sampled): {reason}; "
                                       f"--precision bf16 scores in bf16 without the check")
    sampled = counted(len(pairs), "pair")
    if len(pairs) < MIN_SAMPLE_PAIRS:
        return PrecisionChoice("fp32", f"precision auto: fp32, unchecked: {sampled} to check, fewer than the "
                                       f"{MIN_SAMPLE_PAIRS} the check needs to tell bf16's error from noise (bf16 is "
                                       f"native on {where}); --precision bf16 scores in bf16 without the check")
    started = time.perf_counter()
    checks = tuple(check_bf16(bundle, name, pairs, score) for name, bundle in models)
    seconds = time.perf_counter() - started
    figures = "; ".join(check.describe() for check in checks)
    if all(check.passed for check in checks):
        return PrecisionChoice("bf16", f"precision auto: bf16, native on {where} and within the bounds on the "
                                       f"first {sampled} to score: {figures} ({seconds:.1f} s)", checks)
    return PrecisionChoice("fp32", f"precision auto: fp32, as bf16 (native on {where}) moved the scores of "
                                   f"the first {sampled} to score too far: {figures} ({seconds:.1f} s)", checks)
