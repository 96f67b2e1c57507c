"""The peer: OpenNMT-py 3.5.1's gold scoring with a GRU encoder-decoder of the paper's sizes.

OpenNMT-py lives in its own virtual environment (``setup_onmt_venv.sh``), never in rescorer's.
Its checkpoint is made without real training: ``onmt_train`` for one step on the benchmark pairs,
with vocabularies equal to rescorer's shortlists, so both models have the same sizes
(encoder_type/decoder_type rnn, rnn_type GRU, global_attention none, input_feed 0, 1 layer).
Two figures: ``onmt_translate -verbose`` (prints GOLD SCORE per pair; it always decodes too,
``-beam_size 1 -max_length 1`` keep that cheap), timed by its own ``-report_time`` clock so
interpreter start and model load are excluded; and ``onmt_direct.py`` (the scoring functions
called in-process, no decoding).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Dict, Sequence

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-onmt"

__all__ = ["ensure_venv", "build_checkpoint", "run_translate", "run_direct"]


def onmt_env() -> dict:
    # OpenNMT-py 3.5.1 checkpoints hold pickled options; torch >= 2.6 refuses them by default.
    return {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1", "PYTHONWARNINGS": "ignore"}


def ensure_venv() -> Path:
    """Create the OpenNMT-py venv if it is missing (about a minute, from the package index)."""
    if not (VENV / "bin" / "onmt_translate").exists():
        subprocess.run(["bash", str(HERE / "setup_onmt_venv.sh")], check=True)
    return VENV


def _write_vocab(tokens: Sequence[str], path: Path) -> None:
    # OpenNMT-py reads "token<TAB>count", most frequent first, and adds its own specials.
    with open(path, "w", encoding="utf-8") as f:
        for rank, token in enumerate(tokens):
            f.write(f"{token}\t{len(tokens) - rank}\n")


def build_checkpoint(work_dir: Path, src_words: Sequence[str], tgt_words: Sequence[str],
                     src_path: Path, tgt_path: Path, hidden_size: int = 1000,
                     embed_dim: int = 500) -> Path:
    """An OpenNMT-py checkpoint of the given sizes after one training step (cached by sizes)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    name = f"onmt-gru-h{hidden_size}-e{embed_dim}-v{len(src_words)}x{len(tgt_words)}"
    model = work_dir / f"{name}.pt"
    if model.exists():
        return model
    _write_vocab(src_words, work_dir / f"{name}.src.vocab")
    _write_vocab(tgt_words, work_dir / f"{name}.tgt.vocab")
    config = work_dir / f"{name}.yaml"
    config.write_text("\n".join([
        f"save_data: {work_dir / name}",
        f"src_vocab: {work_dir / name}.src.vocab",
        f"tgt_vocab: {work_dir / name}.tgt.vocab",
        f"src_vocab_size: {len(src_words)}",
        f"tgt_vocab_size: {len(tgt_words)}",
        "data:",
        "  corpus_1:",
        f"    path_src: {src_path}",
        f"    path_tgt: {tgt_path}",
        f"save_model: {work_dir / name}",
        "save_checkpoint_steps: 1", "train_steps: 1", "valid_steps: 1000000",
        "batch_size: 16", "batch_type: sents", "bucket_size: 256", "pool_factor: 1",
        "num_workers: 0", "seed: 1",
        "encoder_type: rnn", "decoder_type: rnn", "rnn_type: GRU", "global_attention: none",
        "input_feed: 0", "layers: 1", "brnn: false",
        f"hidden_size: {hidden_size}", f"word_vec_size: {embed_dim}", "",
    ]))
    log = work_dir / f"{name}.train.log"
    with open(log, "w") as out:
        subprocess.run([str(VENV / "bin" / "onmt_train"), "-config", str(config)], check=True,
                       stdout=out, stderr=subprocess.STDOUT, env=onmt_env())
    (work_dir / f"{name}_step_1.pt").replace(model)
    return model


def run_translate(model: Path, src_path: Path, tgt_path: Path, batch_size: int = 64,
                  threads: int = 0) -> Dict[str, float]:
    """onmt_translate's gold scoring: pairs, its own translation seconds, and wall seconds."""
    cmd = [str(VENV / "bin" / "onmt_translate"), "-model", str(model), "-src", str(src_path),
           "-tgt", str(tgt_path), "-verbose", "-beam_size", "1", "-max_length", "1",
           "-report_time", "-batch_size", str(batch_size), "-output", os.devnull]
    env = onmt_env()
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    log = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"onmt_translate failed ({done.returncode}):\n{log[-2000:]}")
    gold = [float(x) for x in re.findall(r"^GOLD SCORE: (\S+)$", log, flags=re.M)]
    seconds = float(re.search(r"Total translation time \(s\): (\S+)", log).group(1))
    return {"pairs": len(gold), "seconds": seconds, "wall_seconds": wall,
            "mean_gold_score": sum(gold) / max(len(gold), 1)}


def run_direct(model: Path, src_path: Path, tgt_path: Path, batch_size: int = 64,
               threads: int = 0) -> Dict[str, float]:
    """OpenNMT-py's scoring functions without decoding (onmt_direct.py in the venv)."""
    cmd = [str(VENV / "bin" / "python"), str(HERE / "onmt_direct.py"), "-model", str(model),
           "-src", str(src_path), "-tgt", str(tgt_path), "-batch_size", str(batch_size),
           "-output", os.devnull]
    env = onmt_env()
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"onmt_direct.py failed ({done.returncode}):\n{(done.stdout + done.stderr)[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def onmt_flops_per_pair(hidden: int, embed: int, tgt_vocab: int, src_len: int, tgt_len: int) -> int:
    """Matmul FLOPs of OpenNMT's model per pair (for comparing work, not used in the ratios):
    GRU input and recurrent products per step, and a hidden x vocab generator per target step
    (BOS + words in, words + EOS out)."""
    gru = 2 * embed * 3 * hidden + 2 * hidden * 3 * hidden
    return src_len * gru + (tgt_len + 1) * (gru + 2 * hidden * tgt_vocab)
