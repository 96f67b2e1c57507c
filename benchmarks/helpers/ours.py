"""rescorer itself, measured through its public API and its CLI.

- model-only scoring: ``rescorer.scoring.batch_scoring.score_encoded`` on encoded pairs (the library call
  that ``score_pairs`` and ``rescore score`` use), in this process;
- end to end: ``rescore score TABLE.gz --model M -o OUT`` of this checkout in a subprocess,
  whose peak resident memory comes from ``os.wait4``;
- training: ``rescorer.training.trainer.Trainer.step`` on a pair cache of the benchmark pairs.

Models are randomly initialised (seed 0) presets with the shortlists of the real table:
speed does not depend on the weights.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from rescorer.models.model_files import ModelBundle, save_model  # noqa: E402
from rescorer.models import ModelConfig, ModelSettings, build_model  # noqa: E402
from rescorer.scoring.batch_scoring import DEFAULT_TOKEN_BUDGET, score_encoded  # noqa: E402
from rescorer.data.vocabulary import Vocabulary  # noqa: E402

__all__ = ["load_shortlists", "make_bundle", "tiny_bundle", "int8_bundle", "threads", "Encoded", "encode",
           "time_model_only", "warm_up", "save_bundle", "run_cli_score", "measure_training"]

Pair = Tuple[List[str], List[str]]


def load_shortlists(table: Path, cache_dir: Path, size: int = 15000) -> Tuple[Vocabulary, Vocabulary]:
    """The table's shortlists as rescorer builds them (cached as JSON: counting takes ~20 s)."""
    from rescorer.training.pipeline import build_vocabularies, table_identity

    cache = cache_dir / f"shortlists-{size}.json"
    identity = table_identity(table)
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored["table"] == identity:
            return Vocabulary(stored["src"]), Vocabulary(stored["tgt"])
    report = build_vocabularies(table, size)
    cache_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"table": identity, "src": report.src_vocab.tokens,
                                 "tgt": report.tgt_vocab.tokens}))
    return report.src_vocab, report.tgt_vocab


def make_bundle(preset: str, src_vocab: Vocabulary, tgt_vocab: Vocabulary, seed: int = 0,
                arch: str = "cho2014", **settings) -> ModelBundle:
    """A randomly initialised model of `arch` at `preset` (settings: e.g. cell="lstm")."""
    config = ModelSettings.make(arch, preset, **settings).config(len(src_vocab), len(tgt_vocab))
    torch.manual_seed(seed)
    model = build_model(config).eval()
    return ModelBundle(model, src_vocab, tgt_vocab, {"benchmark": f"random init, {arch} preset {preset}"})


def tiny_bundle(src_vocab: Vocabulary, tgt_vocab: Vocabulary, shortlist: int = 100, seed: int = 0) -> ModelBundle:
    """A stand-in model so cheap that scoring 10M lines is bound by I/O: for memory scaling."""
    src, tgt = Vocabulary(src_vocab.tokens[: shortlist + 3]), Vocabulary(tgt_vocab.tokens[: shortlist + 3])
    torch.manual_seed(seed)
    config = ModelConfig(len(src), len(tgt), embed_dim=16, embed_rank=None, hidden_size=16,
                         maxout_units=16, output_rank=16)
    return ModelBundle(build_model(config).eval(), src, tgt, {"benchmark": "tiny stand-in"})


def int8_bundle(bundle: ModelBundle) -> ModelBundle:
    """A copy of `bundle` whose model is quantized for `--precision int8` (torchao)."""
    import copy

    from rescorer.models.quantization import quantize_int8

    return ModelBundle(quantize_int8(copy.deepcopy(bundle.model)), bundle.src_vocab, bundle.tgt_vocab,
                       dict(bundle.training))


@contextlib.contextmanager
def threads(count: int):
    """torch's intra-op threads set to `count` for a block (0: unchanged)."""
    saved = torch.get_num_threads()
    if count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


@dataclass
class Encoded:
    src: List[List[int]]
    tgt: List[List[int]]

    @property
    def src_lengths(self) -> List[int]:
        return [len(s) for s in self.src]

    @property
    def tgt_lengths(self) -> List[int]:
        return [len(t) for t in self.tgt]

    @property
    def tgt_tokens(self) -> int:
        """Scored target positions: the words and one end-of-sequence per pair."""
        return sum(self.tgt_lengths) + len(self.tgt)


def encode(bundle: ModelBundle, pairs: Sequence[Pair]) -> Encoded:
    return Encoded([bundle.src_vocab.encode(s) for s, _ in pairs], [bundle.tgt_vocab.encode(t) for _, t in pairs])


def time_model_only(bundle: ModelBundle, data: Encoded, token_budget: int = DEFAULT_TOKEN_BUDGET,
                    precision: str = "fp32", device: str = "cpu") -> float:
    """Seconds for one ``score_encoded`` pass over all pairs (the model already warm)."""
    model = bundle.model.to(device).eval()
    start = time.perf_counter()
    scores = score_encoded(model, data.src, data.tgt, token_budget, precision)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    if len(scores) != len(data.src) or not np.isfinite(scores).all():
        raise RuntimeError("rescorer produced missing or non-finite scores")
    return seconds


def warm_up(bundle: ModelBundle, data: Encoded, device: str = "cpu", precision: str = "fp32") -> None:
    n = min(len(data.src), 256)
    time_model_only(bundle, Encoded(data.src[:n], data.tgt[:n]), precision=precision, device=device)


def save_bundle(bundle: ModelBundle, path: Path) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        save_model(bundle, path)
    return path


_SUMMARY = re.compile(r"lines in (\d+), out (\d+).*?; ([\d.]+) s, (\d+) pairs/s")


def run_cli_score(table: Path, model: Path, extra: Sequence[str] = (), threads: int = 0) -> Dict[str, float]:
    """``rescore score`` of this checkout on ``table``: lines, its own seconds, wall seconds and
    the process's peak resident memory (MiB)."""
    with tempfile.TemporaryDirectory(dir=table.parent) as tmp:
        out = Path(tmp) / "out.gz"
        cmd = [sys.executable, str(REPO / "cli.py"), "score", str(table), "--model", str(model),
               "-o", str(out), "--device", "cpu", *extra]
        env = dict(os.environ)
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        rss_file = Path(tmp) / "maxrss"
        launcher = [sys.executable, str(Path(__file__).resolve().parent / "maxrss.py"), str(rss_file), "--"]
        with tempfile.TemporaryFile(mode="w+") as log:
            start = time.perf_counter()
            proc = subprocess.run(launcher + cmd, stdout=subprocess.DEVNULL, stderr=log, env=env)
            wall = time.perf_counter() - start
            log.seek(0)
            text = log.read()
        peak_kib = int(rss_file.read_text()) if rss_file.exists() else 0
        if proc.returncode != 0:
            raise RuntimeError(f"rescore score failed ({proc.returncode}): {' '.join(cmd)}\n{text[-2000:]}")
        summary = _SUMMARY.search(text)
        if summary is None:
            raise RuntimeError(f"rescore score printed no summary line:\n{text[-2000:]}")
        return {"lines": int(summary.group(2)), "seconds": float(summary.group(3)), "wall_seconds": wall,
                "peak_rss_mib": peak_kib / 1024, "output_bytes": out.stat().st_size}


def measure_training(bundle: ModelBundle, pairs: Sequence[Pair], work_dir: Path, updates: int,
                     warmup: int = 2, batch_size: int = 64) -> Dict[str, float]:
    """Updates/s and target tokens/s of ``Trainer.step`` (Adadelta, batch 64, as the paper)."""
    from rescorer.data.pair_cache import build_pair_cache
    from rescorer.training.trainer import Trainer, TrainSettings

    cache = build_pair_cache(((" ".join(s), " ".join(t)) for s, t in pairs), bundle.src_vocab,
                             bundle.tgt_vocab, work_dir / f"train-cache-{len(pairs)}", {})
    settings = TrainSettings(batch_size=batch_size, valid_pairs=min(2000, len(pairs) // 10))
    model = bundle.model
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = Trainer(bundle, cache, settings, torch.device("cpu"), "fp32", work_dir / "train.checkpoint")
    model.train()
    try:
        for _ in range(warmup):
            trainer.step()
        tokens_before = trainer.state.train_tokens
        start = time.perf_counter()
        for _ in range(updates):
            trainer.step()
        seconds = time.perf_counter() - start
    finally:
        model.load_state_dict(saved)  # leave the scoring benchmarks a fresh model
        model.eval()
    tokens = trainer.state.train_tokens - tokens_before
    return {"updates": updates, "seconds": seconds, "updates_per_s": updates / seconds,
            "tgt_tokens_per_s": tokens / seconds, "batch_size": batch_size}
