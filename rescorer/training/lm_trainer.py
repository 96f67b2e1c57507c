"""Training the CSLM on n-grams: the phrase models' loop (rescorer.training.trainer.Trainer:
validation, early stopping, time and update bounds, checkpoints, resume), other batches.

Each update draws `batch_size` n-grams uniformly at random from the training sentences; the
draw of update u depends only on (seed, u), so a resumed run continues exactly where it
stopped. Held out: whole sentences (a seeded hash of their index, as the phrase models hold out
pairs). The loss is the mean negative log-likelihood plus alpha * mean (log Z)^2, the
self-normalization penalty of Devlin et al. (2014); perplexity is always that of the
normalized softmax, the sentence end included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch

from rescorer.data.lm_corpus import NgramStream
from rescorer.errors import RescorerError
from rescorer.models.lm_files import LmBundle, save_lm
from rescorer.models.precision import autocast
from rescorer.training.budget import update_limit
from rescorer.training.settings import LmSettings, TrainSettings
from rescorer.training.trainer import PairSplit, Trainer, TrainState

__all__ = ["SentenceSplit", "HeldOut", "held_out_figures", "LmTrainer"]

EVAL_BATCH = 4096  # n-grams per forward pass when measuring


class SentenceSplit:
    """Which sentences are held out, and the n-gram positions of each side."""

    def __init__(self, ngrams: NgramStream, seed: int, valid_sentences: int):
        self.ngrams, self.seed = ngrams, seed
        split = PairSplit(ngrams.num_sentences, seed, valid_sentences)  # at most a tenth held out
        self.valid_sentences = split.valid
        self.train_sentences = split.train_indices()
        self.train_targets = ngrams.targets_of(self.train_sentences)
        self.valid_targets = ngrams.targets_of(self.valid_sentences)

    def train_batch(self, update: int, batch_size: int) -> np.ndarray:
        """The random training n-grams (stream positions) of update `update`."""
        rng = np.random.default_rng([self.seed, update])
        return self.train_targets[rng.integers(0, len(self.train_targets), size=batch_size)]


@dataclass(frozen=True)
class HeldOut:
    """How the model does on held-out n-grams."""

    perplexity: float
    mean_abs_log_z: float  # how far the softmax's log-partition is from 0 (self-normalization)
    ngrams: int


def held_out_figures(model: torch.nn.Module, ngrams: NgramStream, positions: np.ndarray, device: torch.device,
                     precision: str = "fp32") -> HeldOut:
    """Perplexity and mean |log Z| over the n-grams at `positions`."""
    if len(positions) == 0:
        return HeldOut(math.nan, math.nan, 0)
    was_training = model.training
    model.eval()
    total_logp, total_abs_log_z = 0.0, 0.0
    with torch.inference_mode(), autocast(device, precision):
        for start in range(0, len(positions), EVAL_BATCH):
            contexts, words = ngrams.windows(positions[start:start + EVAL_BATCH])
            scores = model(torch.from_numpy(contexts).to(device)).float()  # (batch, vocab)
            log_z = torch.logsumexp(scores, dim=-1)
            gold = scores.gather(1, torch.from_numpy(words).to(device)[:, None])[:, 0]
            total_logp += float((gold - log_z).sum())
            total_abs_log_z += float(log_z.abs().sum())
    model.train(was_training)
    return HeldOut(math.exp(-total_logp / len(positions)), total_abs_log_z / len(positions), len(positions))


class LmTrainer(Trainer):
    """Trainer's loop (train, validate, stop, checkpoint, resume) over the CSLM's n-grams: the
    loop's state is Trainer.start_loop's; the batches, the loss and the held-out figures its own."""

    save_bundle = staticmethod(save_lm)

    def __init__(self, bundle: LmBundle, ngrams: NgramStream, settings: TrainSettings, lm_settings: LmSettings,
                 device: torch.device, precision: str, checkpoint_path: Path,
                 on_progress: Optional[Callable[[TrainState, Optional[float]], None]] = None,
                 corpus_record: Optional[dict] = None):
        settings = settings.resolved()
        self.start_loop(bundle, settings, device, precision, checkpoint_path, on_progress)
        self.ngrams, self.lm_settings, self.corpus_record = ngrams, lm_settings, corpus_record or {}
        self.split = SentenceSplit(ngrams, settings.seed, settings.valid_pairs)
        if len(self.split.train_targets) == 0:
            raise RescorerError("too few sentences to train on")

    def step(self) -> float:
        contexts, words = self.ngrams.windows(self.split.train_batch(self.state.updates, self.settings.batch_size))
        contexts, words = torch.from_numpy(contexts).to(self.device), torch.from_numpy(words).to(self.device)
        with autocast(self.device, self.precision):
            scores = self.model(contexts)
        scores = scores.float()  # (batch, vocab)
        log_z = torch.logsumexp(scores, dim=-1)
        nll = (log_z - scores.gather(1, words[:, None])[:, 0]).mean()
        loss = nll + self.lm_settings.log_z_penalty * (log_z ** 2).mean() if self.lm_settings.log_z_penalty else nll
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer_step()
        self.state.updates += 1
        self.state.train_tokens += len(words)
        self.state.train_pairs += len(words)  # n-grams: an epoch is as many as the training sentences hold
        return loss.item()

    def held_out(self) -> HeldOut:
        return held_out_figures(self.model, self.ngrams, self.split.valid_targets, self.device, self.precision)

    def validation_perplexity(self) -> float:
        return self.held_out().perplexity

    def update_limit(self) -> tuple[int, str]:
        per_epoch = len(self.split.train_targets) / self.settings.batch_size
        return update_limit(self.settings.max_updates, self.settings.max_epochs, per_epoch)

    def training_record(self) -> dict:
        return {**self.bundle.training, "settings": self.settings.stored(), "lm_settings": self.lm_settings.stored(),
                "state": self.state.stored(), "num_sentences": self.ngrams.num_sentences,
                "valid_sentences": len(self.split.valid_sentences), **self.corpus_record}
