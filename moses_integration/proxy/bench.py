"""Judge systems on stored n-best lists: each system's weights are tuned on the dev lists by
MERT in numpy, or PRO (one run per replicate seed), the test lists are reranked with them, and the
outputs are scored and compared with Baseline as `moses ablation` compares decoded systems:
BLEU and chrF against every reference, mean ± sd over the replicates, and approximate
randomization on the replicates' concatenated outputs, Holm-corrected over the systems.

A system is the lists' own dense features, less any it drops (an ablation such as Baseline
without LM0), plus the added features it names (phrase-table columns summed over phrase
pairs, sentence-model scores)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluation.results_table import summarize
from ..evaluation.scores import EvalResult, compare, score
from ..nbest.bleu_statistics import bleu_statistics
from ..nbest.extractor_files import NbestArrays
from ..nbest.line_search import LineSearch
from ..nbest.mert_search import optimize, search_from
from ..nbest.pro_search import optimize_pro
from ..nbest.nbest_file import NbestList

__all__ = ["ProxySystem", "BenchSet", "BenchTuning", "bench_set", "system_features", "tune_system",
           "rerank_rows", "run_bench", "BenchResult"]


@dataclass(frozen=True)
class ProxySystem:
    name: str
    added: tuple = ()  # names of added features, in BenchSet.added
    dropped: tuple = ()  # the lists' features left out: an extractor name (LM0_0) or its prefix (LM0)


@dataclass
class BenchSet:
    """One side of the bench (dev or test): its lists, references and added features."""

    nbest: NbestList
    references: list  # one stream (list of lines) per reference
    stats: np.ndarray  # (hypotheses, 9) BLEU statistics of every hypothesis
    added: dict = field(default_factory=dict)  # feature name -> (hypotheses,) values


@dataclass(frozen=True)
class BenchTuning:
    """How every system's weights are tuned on the dev lists: MERT from `start` (weights by
    extractor name; a name it lacks starts at 0) with `restarts` random restarts. With `spread` 0
    the restarts are mert's, uniform in [0, 1]; otherwise each restart is the start with every
    weight scaled by 1 + spread * N(0, 1) and each new feature's drawn from N(0, spread / 10): on
    stored lists mert's uniform restarts never beat the tuned start, so they search nothing, while
    restarts near it do."""

    start: Mapping[str, float]
    restarts: int = 20
    spread: float = 0.0
    optimizer: str = "mert"  # or "pro": Hopkins and May's PRO (nbest.pro_search), with no start or restarts


def bench_set(nbest: NbestList, references: Sequence[Sequence[str]]) -> BenchSet:
    """The set with the BLEU statistics of every hypothesis against all its references."""
    for stream in references:
        if len(stream) != nbest.num_sentences:
            raise ValueError(f"{nbest.path}: {nbest.num_sentences} sentences but a reference has "
                             f"{len(stream)} lines")
    sentence_of = nbest.sentence_of_rows()
    refs = [[stream[s] for stream in references] for s in sentence_of]
    return BenchSet(nbest, [list(s) for s in references], bleu_statistics(nbest.hypotheses, refs))


def _kept(name: str, dropped: Sequence[str]) -> bool:
    return not any(name == d or name.rsplit("_", 1)[0] == d for d in dropped)


def system_features(system: ProxySystem, data: BenchSet) -> tuple[list, np.ndarray]:
    """(names, (hypotheses, features) matrix) of the system on one side of the bench."""
    keep = [i for i, name in enumerate(data.nbest.feature_names) if _kept(name, system.dropped)]
    unknown = [d for d in system.dropped if not any(not _kept(n, [d]) for n in data.nbest.feature_names)]
    if unknown:
        raise ValueError(f"{system.name}: the lists have no feature {', '.join(unknown)} to drop")
    missing = [name for name in system.added if name not in data.added]
    if missing:
        raise ValueError(f"{system.name}: no added feature {', '.join(missing)}")
    names = [data.nbest.feature_names[i] for i in keep] + [f"{name}_0" for name in system.added]
    columns = [data.nbest.features[:, keep]] + [data.added[name][:, None] for name in system.added]
    return names, np.hstack(columns)


def tune_system(system: ProxySystem, dev: BenchSet, tuning: BenchTuning, seed: int) -> tuple[dict, float]:
    """({name: weight} with sum |w| = 1, dev BLEU 0-100) of one run of the optimizer (`tuning`, `seed`)."""
    names, matrix = system_features(system, dev)
    arrays = NbestArrays(names, matrix, dev.stats, dev.nbest.starts, np.arange(dev.nbest.num_sentences))
    initial = np.array([tuning.start.get(name, 0.0) for name in names])
    if tuning.optimizer == "pro":
        weights, bleu = optimize_pro(arrays, seed)
    elif tuning.spread == 0:
        weights, bleu = optimize(arrays, initial, restarts=tuning.restarts, seed=seed)
    else:
        new = [name not in tuning.start for name in names]
        weights, bleu = _search_near(arrays, initial, new, tuning.restarts, seed, tuning.spread)
    total = float(np.abs(weights).sum()) or 1.0
    return {name: float(w) / total for name, w in zip(names, weights)}, 100.0 * bleu


def _search_near(arrays: NbestArrays, initial: np.ndarray, new: list, restarts: int, seed: int,
                 spread: float) -> tuple[np.ndarray, float]:
    rng = np.random.default_rng(seed)
    search = LineSearch(arrays)
    best = search_from(search, initial, 1e-5)
    for _ in range(restarts):
        point = initial * (1 + spread * rng.standard_normal(len(initial)))
        point[new] = rng.normal(0.0, spread / 10, size=int(np.sum(new)))
        found = search_from(search, point, 1e-5)
        if found.bleu > best.bleu:
            best = found
    return best.weights, best.bleu


def rerank_rows(system: ProxySystem, data: BenchSet, weights: Mapping[str, float]) -> list[str]:
    """Each sentence's hypothesis of highest weighted score (the first of equals: the decoder's order)."""
    names, matrix = system_features(system, data)
    scores = matrix @ np.array([weights[name] for name in names])
    best = []
    for s in range(data.nbest.num_sentences):
        lo, hi = data.nbest.starts[s], data.nbest.starts[s + 1]
        best.append(data.nbest.hypotheses[lo + int(np.argmax(scores[lo:hi]))])
    return best


@dataclass
class BenchResult:
    summary: pd.DataFrame  # summarize()'s columns, one row per system, Baseline first
    replicates: pd.DataFrame  # one row per system and replicate: dev and test BLEU, chrF, weights
    outputs: dict  # system -> [reranked test lines of each replicate]


def run_bench(systems: Sequence[ProxySystem], dev: BenchSet, test: BenchSet, tuning: BenchTuning,
              seeds: Sequence[int], test_type: str = "ar", progress=print) -> BenchResult:
    """Tune and score every system once per seed; the first system is the baseline."""
    results: dict[str, list] = {}
    outputs: dict[str, list] = {}
    rows = []
    for system in systems:
        for replicate, seed in enumerate(seeds, start=1):
            weights, dev_bleu = tune_system(system, dev, tuning, seed)
            hyps = rerank_rows(system, test, weights)
            result = score(hyps, test.references, f"{system.name} seed {seed}")
            result.dev_bleu = round(dev_bleu, 4)
            result.new_weights = {name: weights[f"{name}_0"] for name in system.added}
            results.setdefault(system.name, []).append(result)
            outputs.setdefault(system.name, []).append(hyps)
            rows.append({"system": system.name, "replicate": replicate, "seed": seed, "dev_bleu": dev_bleu,
                         "test_bleu": result.bleu, "test_chrf": result.chrf,
                         "weights": " ".join(f"{n}={w:.6f}" for n, w in weights.items())})
            progress(f"{system.name} seed {seed}: dev BLEU {dev_bleu:.2f}, test BLEU {result.bleu:.2f}, "
                     f"chrF {result.chrf:.2f}")
    p_values, tested = _tests(outputs, test.references, test_type)
    per_replicate = [compare([(name, runs[r]) for name, runs in outputs.items()], test.references, test_type)
                     for r in range(len(seeds))] if len(outputs) > 1 and len(seeds) > 1 else []
    return BenchResult(summarize(results, p_values, per_replicate, tested_bleu=tested), pd.DataFrame(rows),
                       outputs)


def _tests(outputs: Mapping[str, list], references: list, test_type: str) -> tuple[dict, dict]:
    """p of each system against the first, on the replicates' concatenated outputs (Clark et al.
    2011), and the BLEU of those concatenations (what Δ is the difference of)."""
    repeats = len(next(iter(outputs.values())))
    refs = [stream * repeats for stream in references]
    joined = [(name, [line for hyps in runs for line in hyps]) for name, runs in outputs.items()]
    p_values = compare(joined, refs, test_type) if len(joined) > 1 else {}
    tested = {name: score(hyps, refs).bleu for name, hyps in joined}
    return p_values, tested


def decoder_first_best(data: BenchSet) -> EvalResult:
    """The lists' own 1-best (the decoder's output), scored like the systems."""
    return score([data.nbest.hypotheses[lo] for lo in data.nbest.starts[:-1]], data.references, "1-best")
