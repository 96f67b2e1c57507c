"""OpenNMT-py 3.5.1's side of sentence_peer.py: its Transformer set up as rescorer's sentence model.

From rescorer's model config and the benchmark's recipe: the same sizes (layers, heads, d_model,
feed-forward), pre-norm (OpenNMT-py's only placement: a LayerNorm before each sublayer and one
after each stack), biases on the attention projections (add_qkvbias; rescorer's torch layers
have them), ReLU, sinusoidal positions, the target embeddings shared with the generator, the
same dropout on embeddings, residuals, feed-forward and attention weights, label smoothing,
Adam with the same linear warm-up and inverse square root decay (noam, its learning rate scaled
so the peak is the same), the same gradient-norm clipping, one seed; its vocabularies are the
same subword pieces. Its token batches count differently (each example's longer side, [BOS]
and [EOS] on the target, against rescorer's source + target + [EOS]), so `onmt_batch_size`
picks the OpenNMT-py budget whose epoch has as many batches as rescorer's: the same real target
tokens per update on average.

Nothing here imports torch or onmt: the runs go through onmt_sentence_venv.py in .venv-onmt.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from benchmarks.peers.onmt_peer import VENV, onmt_env

HERE = Path(__file__).resolve().parent

__all__ = ["Recipe", "onmt_train_options", "onmt_translate_args", "onmt_batch_count", "onmt_batch_size",
           "write_onmt_vocab", "run_onmt_train", "run_onmt_translate", "UNMATCHED"]


@dataclass(frozen=True)
class Recipe:
    """The training and search settings both systems get (docs/sentence-models.md's recipe)."""

    dropout: float = 0.3
    label_smoothing: float = 0.1
    learning_rate: float = 1e-3  # the peak, after the linear warm-up
    warmup_updates: int = 1000
    clip_norm: float = 1.0
    batch_tokens: int = 4000  # rescorer's budget: padded source + target + [EOS] tokens per batch
    seed: int = 1
    beam: int = 5
    alpha: float = 0.6  # Wu et al.'s length penalty
    translate_batch: int = 32  # sentences per search batch
    length_slack: int = 5  # a translation has at most int(ratio * source pieces) + slack pieces


# What could not be made the same, printed with every run.
UNMATCHED = (
    "vocabularies: OpenNMT-py adds <s> (its decoder's first input) and <blank> to the pieces on each side, "
    "rescorer [PAD] [UNK] [EOS] (its decoder starts from a zero vector): one row more per side in OpenNMT-py",
    "LayerNorm epsilon: OpenNMT-py 1e-6, rescorer torch's 1e-5",
    "optimizer: rescorer's Adam is torch's fused kernel, OpenNMT-py's the per-tensor loop "
    "(OpenNMT-py's fusedadam needs apex and a GPU); the recipe's weight decay 1e-4 is left out on both, "
    "OpenNMT-py 3.5.1 has none",
    "token batches: OpenNMT-py fills a bucket of the whole corpus, sorts it by (source, target) length and cuts "
    "batches by n x longest max(source, target + 2), dropping a repeated source within a batch; rescorer sorts "
    "by (target, source) and cuts by n x longest (source + target + 1); the budgets are set to give as many "
    "batches per epoch",
    "beam search: OpenNMT-py stops a sentence once its best live hypothesis ends and ranks hypotheses by "
    "log p / length penalty at every step; rescorer stops once K hypotheses have ended and applies the penalty "
    "to finished ones only",
    "length bound: OpenNMT-py int(ratio x the batch's longest source + 5) for the whole batch, rescorer "
    "int(ratio x the sentence's source) + 5 per sentence (same ratio)",
    "translation input: OpenNMT-py reads the pieces, rescorer the tokenized text and segments it itself",
)


def noam_rate(recipe: Recipe, d_model: int) -> float:
    """OpenNMT-py's noam learning rate whose peak (at the end of the warm-up) is the recipe's:
    lr * d^-0.5 * min(step^-0.5, step * warmup^-1.5), linear warm-up then inverse square root,
    as rescorer's --lr-schedule inverse-sqrt."""
    return recipe.learning_rate * (d_model * recipe.warmup_updates) ** 0.5


def onmt_train_options(config, recipe: Recipe, *, src_text: Path, tgt_text: Path, src_vocab: Path,
                       tgt_vocab: Path, src_vocab_size: int, tgt_vocab_size: int, batch_size: int,
                       bucket_size: int, steps: int, save_model: Path) -> dict:
    """onmt_train's options (a YAML config; JSON is YAML) for rescorer's Transformer `config`
    (a rescorer.models.config.ModelConfig of arch transformer) trained `steps` updates on CPU."""
    if config.arch != "transformer":
        raise ValueError(f"the OpenNMT-py peer is a Transformer; rescorer's model is {config.arch}")
    return {
        "data": {"corpus_1": {"path_src": str(src_text), "path_tgt": str(tgt_text)}},
        "src_vocab": str(src_vocab), "tgt_vocab": str(tgt_vocab),
        "src_vocab_size": src_vocab_size, "tgt_vocab_size": tgt_vocab_size, "vocab_size_multiple": 1,
        "share_vocab": False, "save_data": str(save_model), "save_model": str(save_model), "overwrite": True,
        # the model
        "encoder_type": "transformer", "decoder_type": "transformer", "position_encoding": True,
        "enc_layers": config.encoder_layers, "dec_layers": config.decoder_layers,
        "heads": config.attention_heads, "hidden_size": config.embed_dim, "word_vec_size": config.embed_dim,
        "transformer_ff": config.hidden_size, "pos_ffn_activation_fn": "relu", "layer_norm": "standard",
        "add_qkvbias": True, "add_ffnbias": True, "max_relative_positions": 0,
        "share_decoder_embeddings": bool(config.tied_embeddings), "share_embeddings": False,
        "dropout": [recipe.dropout], "attention_dropout": [recipe.dropout], "dropout_steps": [0],
        "param_init": 0.0, "param_init_glorot": True, "model_dtype": "fp32",
        # the training
        "label_smoothing": recipe.label_smoothing, "optim": "adam", "adam_beta1": 0.9, "adam_beta2": 0.999,
        "learning_rate": noam_rate(recipe, config.embed_dim), "decay_method": "noam",
        "warmup_steps": recipe.warmup_updates, "max_grad_norm": recipe.clip_norm,
        "batch_type": "tokens", "batch_size": batch_size, "normalization": "sents", "accum_count": [1],
        "bucket_size": bucket_size, "num_workers": 0, "seed": recipe.seed,
        "train_steps": steps, "valid_steps": 10 ** 9, "save_checkpoint_steps": 0, "report_every": steps,
        "world_size": 1, "gpu_ranks": [],
    }


def onmt_translate_args(model: Path, src: Path, output: Path, recipe: Recipe, length_ratio: float,
                        forced_steps: int = 0) -> list[str]:
    """onmt_translate's options for the benchmark's search: beam, Wu's length penalty, the batch,
    and the length bound int(ratio * longest source + 5) (its slack is fixed at 5); with
    `forced_steps` S, every hypothesis instead runs exactly S steps ([EOS] barred until S pieces,
    where OpenNMT-py ends it without one)."""
    if recipe.length_slack != 5:
        raise ValueError("OpenNMT-py's length bound adds 5 to ratio x source; the recipe's slack must be 5")
    lengths = (["-min_length", str(forced_steps), "-max_length", str(forced_steps), "-max_length_ratio", "0"]
               if forced_steps else ["-min_length", "1", "-max_length_ratio", str(length_ratio)])
    return ["-model", str(model), "-src", str(src), "-output", str(output), "-gpu", "-1",
            "-beam_size", str(recipe.beam), "-n_best", "1", "-length_penalty", "wu", "-alpha", str(recipe.alpha),
            "-batch_type", "sents", "-batch_size", str(recipe.translate_batch), *lengths, "-seed", str(recipe.seed)]


def onmt_batch_count(src_lengths: np.ndarray, tgt_lengths: np.ndarray, batch_size: int) -> int:
    """Batches in one epoch of OpenNMT-py 3.5.1's token batching (DynamicDatasetIter.batch_iter,
    batch_type tokens) over one bucket holding every pair: sorted by (source, target + 2) length,
    a batch closed once n x longest max(source, target + 2) reaches batch_size, the pair that
    overflows starting the next (a pair over the budget alone is a batch). Repeated sources,
    which OpenNMT-py drops within a batch, are not modelled."""
    src = np.asarray(src_lengths, dtype=np.int64)
    tgt = np.asarray(tgt_lengths, dtype=np.int64) + 2  # [BOS] and [EOS]
    longest = np.maximum(src, tgt)[np.lexsort((tgt, src))]
    batches = count = widest = 0
    for length in longest.tolist():
        count, widest = count + 1, max(widest, length)
        size = count * widest
        if size == batch_size:
            batches, count, widest = batches + 1, 0, 0
        elif size > batch_size and count > 1:
            batches, count, widest = batches + 1, 1, length
    return batches + (1 if count else 0)


def onmt_batch_size(src_lengths: np.ndarray, tgt_lengths: np.ndarray, batches: int) -> int:
    """The smallest OpenNMT-py token budget whose epoch has at most `batches` batches (rescorer's
    count for its own budget): about the same pairs, so the same target tokens, per update."""
    low, high = 1, int(np.max(np.maximum(src_lengths, np.asarray(tgt_lengths) + 2))) * len(src_lengths)
    while low < high:  # the count falls as the budget grows
        middle = (low + high) // 2
        if onmt_batch_count(src_lengths, tgt_lengths, middle) <= batches:
            high = middle
        else:
            low = middle + 1
    return low


def write_onmt_vocab(pieces: Sequence[str], path: Path) -> None:
    """One piece a line with a count ("piece count", as OpenNMT-py reads it), in the subword
    model's order; OpenNMT-py adds its own specials."""
    for piece in pieces:
        if len(piece.split()) != 1:
            raise ValueError(f"piece {piece!r} holds white space, which OpenNMT-py's vocabulary reader splits on")
    with open(path, "w", encoding="utf-8") as f:
        for rank, piece in enumerate(pieces):
            f.write(f"{piece} {len(pieces) - rank}\n")


def _env(threads: int) -> dict:
    return {**onmt_env(), "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}


def _run_venv(args: list[str], threads: int, log: Path) -> dict:
    cmd = [str(VENV / "bin" / "python"), str(HERE / "onmt_sentence_venv.py"), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(threads))
    log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed ({done.returncode}), see {log}:\n"
                           f"{(done.stdout + done.stderr)[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_onmt_train(options: dict, config_path: Path, measure_after: int, threads: int) -> dict:
    """Train with `options`; updates, seconds and real target tokens after the first `measure_after`."""
    config_path.write_text(json.dumps(options, indent=1))
    return _run_venv(["train", "--measure-after", str(measure_after), "--threads", str(threads),
                      "-config", str(config_path)], threads, config_path.with_suffix(".log"))


def run_onmt_translate(args: list[str], warmup_sentences: int, threads: int, log: Path) -> dict:
    """Translate (after a warm-up on the first sentences); sentences, seconds and the 1-best pieces."""
    return _run_venv(["translate", "--warmup-sentences", str(warmup_sentences), "--threads", str(threads),
                      *args], threads, log)
