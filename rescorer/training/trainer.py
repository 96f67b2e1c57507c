"""Training on the unique phrase pairs of a table (Cho et al. 2014, §3.1), counts ignored.

Each update draws a uniformly random batch of pairs (64 in the paper) from the on-disk cache and
takes an Adadelta step (eps 1e-6, rho 0.95). A held-out slice of pairs measures validation
perplexity; training stops early when it no longer improves, and at the latest after
`max_epochs` passes over the training pairs (`rescorer.training.budget`). The batch drawn at update u
depends only on (seed, u), so a resumed run continues exactly where it stopped.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch

from rescorer.data.batching import length_sorted_batches
from rescorer.data.padding import pad_sequences
from rescorer.data.length_caps import measure_length_cap
from rescorer.data.pair_cache import PairCache
from rescorer.data.subwords import pieces_per_word
from rescorer.data.vocabulary import EOS_ID
from rescorer.errors import RescorerError
from rescorer.models.model_files import ModelBundle, save_model
from rescorer.models.settings import model_width
from rescorer.models.precision import autocast
from rescorer.runtime.failure_reports import SIGNAL_NAMES, Interrupted, ending
from rescorer.runtime.safe_points import HeldInterrupts
from rescorer.training.averaging import BestCheckpoints
from rescorer.training.batch_schedule import make_schedule
from rescorer.training.budget import update_limit
from rescorer.training.random_state import random_state, restore_random_state
# The settings record and its defaults live in the torch-free rescorer.training.settings.
from rescorer.training.settings import OPTIMIZERS, PAIR_WEIGHTS, TrainSettings, schedule_share
from rescorer.training.stop_reasons import stop_reason
from rescorer.training.word_sampler import WordSampler

log = logging.getLogger(__name__)
@dataclass
class TrainState:
    """What a checkpoint must remember to resume, and what the model file reports."""

    updates: int = 0
    best_valid_ppl: float = math.inf
    best_update: int = 0
    bad_validations: int = 0
    train_tokens: int = 0
    train_pairs: int = 0  # pair-visits: an epoch is as many as there are training pairs
    seconds: float = 0.0
    stopped_because: str = ""
    update_limit: int = 0  # the updates max_updates and max_epochs allow (set when training starts)
    lr_scale: float = 1.0  # the product of --lr-decay over the validations without improvement
    averaged_updates: list = field(default_factory=list)  # --average N: the validations averaged
    averaged_valid_ppl: Optional[float] = None  # and the held-out perplexity of their mean
    # a phrase table's honest held-out pairs' perplexity (rescorer.training.honest_heldout; None: none, or
    # not measured) at the last validation, at best_update, and of the --average mean
    honest_ppl: Optional[float] = None
    honest_ppl_at_best: Optional[float] = None
    averaged_honest_ppl: Optional[float] = None
    validated_update: Optional[int] = None  # the update of the last validation (None: a file from before it)
    resumed_from: Optional[int] = None  # the checkpoint's updates when this run resumed it (None: a fresh run)

    def stored(self) -> dict:
        """What a file keeps: all but `resumed_from`, which is this run's (a resumed run's files
        then equal an uninterrupted run's)."""
        return {key: value for key, value in asdict(self).items() if key != "resumed_from"}


def heldout_mask(indices: np.ndarray, seed: int, fraction: float) -> np.ndarray:
    """Whether each pair index is held out: a seeded hash, so no permutation is ever stored."""
    mixed = (indices.astype(np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B9)) \
        * np.uint64(0x9E3779B97F4A7C15)
    return (mixed >> np.uint64(40)).astype(np.float64) / float(1 << 24) < fraction


class PairSplit:
    """Train/validation split of a cache: validation is a small hashed slice of the pairs.

    A table of a few pairs may hash none into the slice; then one pair, drawn by the seed, is held
    out, so that every model is validated (a run without held-out pairs kept its untrained
    initial weights as the best). One pair alone cannot be split and is refused."""

    def __init__(self, num_pairs: int, seed: int, valid_pairs: int, source: str = "the training data"):
        self.num_pairs = num_pairs
        self.seed = seed
        # Hold out at most a tenth of a small table, so tiny tables still train.
        self.fraction = min(valid_pairs / max(num_pairs, 1), 0.1)
        chunks = [np.flatnonzero(heldout_mask(np.arange(start, min(start + (1 << 20), num_pairs)),
                                              seed, self.fraction)) + start
                  for start in range(0, num_pairs, 1 << 20)]
        self.valid = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
        self.drawn = np.zeros(0, dtype=np.int64)  # the pair held out when the slice holds none
        if len(self.valid) == 0 and valid_pairs > 0 and num_pairs >= 2:
            self.drawn = np.random.default_rng([seed, num_pairs]).integers(0, num_pairs, size=1)
            self.valid = self.drawn
        if num_pairs - len(self.valid) < 1 or (valid_pairs > 0 and len(self.valid) == 0):
            raise RescorerError(f"{source}: {num_pairs} pair{'s' if num_pairs != 1 else ''} to train on: "
                                f"too few to hold one out for validation and train on the others (at "
                                f"least 2 are needed)")

    @property
    def num_train(self) -> int:
        return self.num_pairs - len(self.valid)

    def train_indices(self) -> np.ndarray:
        """Every training pair's index, ascending (all pairs but the held-out ones)."""
        keep = np.ones(self.num_pairs, dtype=bool)
        keep[self.valid] = False
        return np.flatnonzero(keep)

    def train_batch(self, update: int, batch_size: int) -> np.ndarray:
        """The uniformly random training batch of update `update` (repeatable, resumable)."""
        rng = np.random.default_rng([self.seed, update])
        picked = np.zeros(0, dtype=np.int64)
        while len(picked) < batch_size:
            draw = rng.integers(0, self.num_pairs, size=2 * batch_size)
            held = heldout_mask(draw, self.seed, self.fraction) | np.isin(draw, self.drawn)
            picked = np.concatenate([picked, draw[~held]])
        return picked[:batch_size]


def pair_weights(cache: PairCache, kind: str) -> Optional[np.ndarray]:
    """Each pair's weight in the loss (float32), or None for `unique` (every pair once)."""
    if kind == "unique":
        return None
    if kind not in PAIR_WEIGHTS:
        raise RescorerError(f"unknown pair weights {kind!r}; valid: {', '.join(PAIR_WEIGHTS)}")
    if cache.counts is None:
        raise RescorerError(f"{cache.directory}: the pair cache holds no counts (built for unique pairs)")
    counts = np.asarray(cache.counts, dtype=np.float32)
    weights = counts if kind == "count" else (1.0 + np.log(counts)).astype(np.float32)
    if not (np.isfinite(weights) & (weights > 0)).all():  # a cache the table's reading did not check
        raise RescorerError(f"{cache.directory}: pair counts out of range for --pair-weights {kind}; remove the "
                            f"pair cache so that the table is read (and its bad counts named) again")
    return weights


def make_optimizer(model: torch.nn.Module, settings: TrainSettings) -> torch.optim.Optimizer:
    """The optimizer of the settings, resolved (TrainSettings.resolved); --weight-decay W is
    decoupled for Adam (AdamW, Loshchilov & Hutter 2019: each step multiplies every weight by
    1 - lr * W), and for Adadelta torch's weight_decay (W * weight added to the gradient)."""
    decay = settings.weight_decay
    if settings.optimizer == "adadelta":
        return torch.optim.Adadelta(model.parameters(), lr=settings.learning_rate,
                                    rho=0.95, eps=1e-6, weight_decay=decay)
    if settings.optimizer == "adam":
        return fused_adam(list(model.parameters()), settings.learning_rate, decay)
    raise RescorerError(f"unknown optimizer {settings.optimizer!r}; valid: {', '.join(OPTIMIZERS)}")


def fused_adam(parameters: list, learning_rate: float, weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """Adam (AdamW with a weight decay) updating all parameters in one kernel: on a CPU its step
    took 4.5 ms against 17.5 for the per-tensor loop, 9% of a default update
    (benchmarks/drivers/training_profile.py). The per-tensor loop where this torch has no fused Adam for
    the device (CPUs before torch 2.4). Without decay it stays torch's Adam, as before."""
    kind, extra = (torch.optim.AdamW, {"weight_decay": weight_decay}) if weight_decay else (torch.optim.Adam, {})
    try:
        return kind(parameters, lr=learning_rate, fused=True, **extra)
    except (RuntimeError, TypeError, ValueError):
        return kind(parameters, lr=learning_rate, **extra)


def batch_tensors(cache: PairCache, indices: np.ndarray, device: torch.device) -> list[torch.Tensor]:
    src, src_lengths = pad_sequences(cache.sequences("src", indices))
    tgt, tgt_lengths = pad_sequences(cache.sequences("tgt", indices))
    return [t.to(device) for t in (src, src_lengths, tgt, tgt_lengths)]


def evaluate_perplexity(model: torch.nn.Module, cache: PairCache, indices: np.ndarray,
                        device: torch.device, precision: str, token_budget: int = 6000) -> float:
    """exp(mean negative log-likelihood per target token, end of sequence included)."""
    if len(indices) == 0:
        return math.nan
    total_logp, total_tokens = log_likelihood(model, cache, indices, device, precision, token_budget)
    return math.exp(-total_logp / total_tokens)


def log_likelihood(model: torch.nn.Module, cache: PairCache, indices: np.ndarray,
                   device: torch.device, precision: str, token_budget: int = 6000) -> tuple[float, int]:
    """(sum of log p over the pairs, their target tokens, end of sequence included): the terms
    of the perplexity, which ranks holding a share of the pairs add up."""
    log_probs = pair_log_probs(model, cache, indices, device, precision, token_budget)
    return float(log_probs.sum()), int(cache.lengths("tgt")[indices].sum()) + len(indices)


def pair_log_probs(model: torch.nn.Module, cache: PairCache, indices: np.ndarray,
                   device: torch.device, precision: str, token_budget: int = 6000) -> np.ndarray:
    """log p(target | source) of each pair, end of sequence included, in `indices`' order."""
    was_training = model.training
    model.eval()
    log_probs = np.zeros(len(indices))
    src_lengths, tgt_lengths = cache.lengths("src")[indices], cache.lengths("tgt")[indices]
    with torch.inference_mode(), autocast(device, precision):
        for batch in length_sorted_batches(src_lengths, tgt_lengths, token_budget):
            log_probs[batch] = model(*batch_tensors(cache, indices[batch], device)).float().cpu().numpy()
    model.train(was_training)
    return log_probs


def unigram_perplexity(cache: PairCache, split: PairSplit, vocab_size: int,
                       valid_cache: Optional[PairCache] = None, on: Optional[np.ndarray] = None) -> float:
    """Held-out perplexity of an add-one unigram model of the training targets ([EOS] included):
    the floor that a phrase-pair model has to beat by far. Held out: the split's slice, or every
    pair of `valid_cache` (a validation set of its own), or the pairs `on` (cache indices: the
    honest held-out pairs, rescorer.training.honest_heldout), each figure beside the model's on them."""
    held = cache.token_counts("tgt", vocab_size, split.valid)
    train_counts = cache.token_counts("tgt", vocab_size) - held + 1.0
    train_counts[EOS_ID] += split.num_pairs - len(split.valid)  # one [EOS] per training pair
    if on is not None:
        valid_counts = cache.token_counts("tgt", vocab_size, on)
        valid_counts[EOS_ID] += len(on)
    else:
        valid_counts = held if valid_cache is None else valid_cache.token_counts("tgt", vocab_size)
        valid_counts[EOS_ID] += len(split.valid) if valid_cache is None else valid_cache.num_pairs
    logp = np.log(train_counts / train_counts.sum())
    return math.exp(-(valid_counts * logp).sum() / valid_counts.sum())


class Trainer:
    """Runs updates on a bundle's model, validating, checkpointing and stopping early."""

    honest = None  # a phrase table's HonestHeldout (rescorer.training.honest_heldout), set by the pipeline
    held: Optional[HeldInterrupts] = None  # SIGINT/SIGTERM recorded while train() runs, taken between updates

    def __init__(self, bundle: ModelBundle, cache: PairCache, settings: TrainSettings,
                 device: torch.device, precision: str, checkpoint_path: Path,
                 on_progress: Optional[Callable[[TrainState, Optional[float]], None]] = None,
                 valid_cache: Optional[PairCache] = None):
        settings = settings.resolved(model_width(bundle.config))  # the default learning rate scales with it
        self.start_loop(bundle, settings, device, precision, checkpoint_path, on_progress)
        self.cache = cache
        # validation: every pair of a validation set of its own, or a held-out slice of the training pairs
        self.split = PairSplit(cache.num_pairs, settings.seed, 0 if valid_cache is not None else settings.valid_pairs)
        self.valid_cache = valid_cache if valid_cache is not None else cache
        self.valid_indices = np.arange(valid_cache.num_pairs) if valid_cache is not None else self.split.valid
        self.schedule = make_schedule(self.split, cache, settings.batch_size, settings.batch_tokens)
        self.pair_weights = pair_weights(cache, settings.pair_weights)
        self.sampler = (WordSampler.for_training(cache, self.split, bundle.config.tgt_vocab_size,
                                                 settings.sampled_softmax, settings.seed, device)
                        if settings.sampled_softmax else None)
        # translate's default bound, a + b * source length, as the model file records it
        self.length_cap = measure_length_cap(cache.lengths("src"), cache.lengths("tgt"))
        # a subword model's pieces per word of each side, that the n-best lists' language check compares with
        self.pieces_per_word = ({side: pieces_per_word(cache.token_counts(key, len(vocab)), vocab)
                                 for side, key, vocab in (("source", "src", bundle.src_vocab),
                                                          ("target", "tgt", bundle.tgt_vocab))}
                                if bundle.subwords is not None else None)

    def start_loop(self, bundle, settings: TrainSettings, device: torch.device, precision: str,
                   checkpoint_path: Path, on_progress: Optional[Callable[[TrainState, Optional[float]], None]]) -> None:
        """What the loop (train, validate, stop, checkpoint, resume) keeps of a run, whatever the
        model kind and its batches: the model on its device, its optimizer, the state, the best
        weights so far and the checkpoint's update."""
        self.bundle, self.settings = bundle, settings
        self.device, self.precision = device, precision
        self.checkpoint_path = checkpoint_path
        self.on_progress = on_progress or (lambda state, ppl: None)
        self.model = bundle.model.to(device)
        self.optimizer = make_optimizer(self.model, settings)
        self.state = TrainState()
        self.best_weights = copy.deepcopy(self.model.state_dict())
        self.best_checkpoints = BestCheckpoints(settings.average)
        self.checkpoint_update: Optional[int] = None  # the update the checkpoint file holds

    def resume(self, payload: dict, path: Path) -> None:
        """Continue from a checkpoint written by `save_checkpoint`, whose weights the bundle's
        model already holds; `payload` is that file as `read_model_file` returned it."""
        if "optimizer" not in payload or "best_weights" not in payload:
            raise RescorerError(f"{path}: holds no training checkpoint (no optimizer state)")
        self.optimizer.load_state_dict(payload["optimizer"])
        self.best_weights = payload["best_weights"]
        self.best_checkpoints = BestCheckpoints(self.settings.average, payload.get("best_checkpoints"))
        self.state = TrainState(**payload["training"]["state"])
        self.state.resumed_from = self.state.updates
        restore_random_state(payload.get("random_state"), self.device)
        self.checkpoint_update = self.state.updates

    save_bundle = staticmethod(save_model)  # how a checkpoint of this trainer's bundle is written

    def save_checkpoint(self) -> None:
        self.bundle.training = self.training_record()
        kept = {"best_checkpoints": self.best_checkpoints.kept} if self.best_checkpoints.kept else {}
        kept.update(self.honest.stored() if self.honest is not None else {})  # a resumed run keeps them
        kept["random_state"] = random_state(self.device)  # dropout's draws go on as if never stopped
        self.save_bundle(self.bundle, self.checkpoint_path,
                         extra={"optimizer": self.optimizer.state_dict(), "best_weights": self.best_weights, **kept})
        self.checkpoint_update = self.state.updates

    def training_record(self) -> dict:
        return {"model_options": self.bundle.training.get("model_options", {}),
                "settings": self.settings.stored(), "state": self.state.stored(),
                "num_pairs": self.cache.num_pairs, "valid_pairs": len(self.valid_indices),
                **({"honest_pairs": self.honest.num_honest} if self.honest is not None else {}),
                "length_cap": self.length_cap,
                **({"pieces_per_word": self.pieces_per_word} if self.pieces_per_word else {}),
                **{k: v for k, v in self.cache.meta.items() if k.startswith(("table", "corpus"))}}

    def step(self) -> float:
        indices = self.schedule.batch(self.state.updates)
        tensors = batch_tensors(self.cache, indices, self.device)
        with autocast(self.device, self.precision):
            logp = self.model(*tensors, sampled=self.sampled_words(), smoothing=self.settings.label_smoothing)
        weights = self.weights_of(indices)
        # mean negative log-likelihood (label-smoothed with --label-smoothing) per pair, or per unit of weight
        loss = -logp.float().mean() if weights is None else -(weights * logp.float()).sum() / weights.sum()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer_step()
        self.state.updates += 1
        self.state.train_tokens += int(tensors[3].sum()) + len(indices)
        self.state.train_pairs += len(indices)
        return loss.item()

    def weights_of(self, indices: np.ndarray) -> Optional[torch.Tensor]:
        """The loss weights of these pairs (None: every pair alike, the paper's)."""
        if self.pair_weights is None:
            return None
        return torch.from_numpy(self.pair_weights[indices]).to(self.device)

    def sampled_words(self):
        """This update's sampled-softmax words, or None for the full softmax."""
        return self.sampler(self.state.updates) if self.sampler is not None else None

    def optimizer_step(self) -> None:
        """Clip the gradients and step, at the learning rate of this update: the schedule's share
        (warm-up, then constant or inverse-sqrt) times the plateau decay so far (a function of the
        state alone, so a resumed run steps exactly as an uninterrupted one)."""
        share = schedule_share(self.state.updates + 1, self.settings.warmup_updates, self.settings.lr_schedule)
        for group in self.optimizer.param_groups:
            group["lr"] = group.setdefault("peak_lr", group["lr"]) * share * self.state.lr_scale
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.clip_norm)
        self.optimizer.step()

    def validation_perplexity(self) -> float:
        return evaluate_perplexity(self.model, self.valid_cache, self.valid_indices, self.device, self.precision)

    def validation_perplexities(self) -> tuple[float, Optional[float]]:
        """The held-out perplexity, and the honest held-out pairs' where measured (one pass for both)."""
        if self.honest is None:
            return self.validation_perplexity(), None
        return self.honest.perplexities(self.valid_log_probs())

    def valid_log_probs(self) -> np.ndarray:
        """Each held-out pair's log p, in valid_indices' order."""
        return pair_log_probs(self.model, self.valid_cache, self.valid_indices, self.device, self.precision)

    def out_of_time(self, started: float) -> bool:
        """Whether --max-time is reached (`started`: the clock's reading when training began)."""
        return (self.settings.max_seconds is not None
                and time.perf_counter() - started >= self.settings.max_seconds)

    def validate(self) -> float:
        """One validation; early stopping and the kept model go by all held-out pairs, never the honest ones."""
        ppl, self.state.honest_ppl = self.validation_perplexities()
        self.state.validated_update = self.state.updates
        if ppl < self.state.best_valid_ppl:
            self.state.best_valid_ppl, self.state.best_update = ppl, self.state.updates
            self.state.honest_ppl_at_best = self.state.honest_ppl
            self.state.bad_validations = 0
            self.best_weights = copy.deepcopy(self.model.state_dict())
        else:
            self.state.bad_validations += 1
            self.state.lr_scale *= self.settings.lr_decay
        self.best_checkpoints.offer(ppl, self.state.updates, self.model)
        return ppl

    def update_limit(self) -> tuple[int, str]:
        """The updates this run may make, and the bound that sets it (for messages)."""
        return update_limit(self.settings.max_updates, self.settings.max_epochs,
                            self.schedule.updates_per_epoch)

    def train(self) -> TrainState:
        """Train until max updates, max time or patience runs out; leaves the best weights loaded."""
        with HeldInterrupts() as self.held:
            self.run_updates()
        self.model.load_state_dict(self.best_weights)
        if len(self.best_checkpoints.kept) > 1:  # --average N: their mean, and how it does held out
            self.model.load_state_dict(self.best_checkpoints.averaged())
            self.state.averaged_updates = self.best_checkpoints.updates()
            self.state.averaged_valid_ppl, self.state.averaged_honest_ppl = self.validation_perplexities()
        self.model.eval()
        self.bundle.training = self.training_record()
        return self.state

    def run_updates(self) -> None:
        """The updates, validations and checkpoints, until a bound stops them; SIGINT and SIGTERM
        are taken between two updates (`stop_if_interrupted`)."""
        settings, state = self.settings, self.state
        self.model.train()
        started = time.perf_counter() - state.seconds
        state.update_limit, bound = self.update_limit()
        while True:
            state.stopped_because = stop_reason(state, settings, bound, lambda: self.out_of_time(started),
                                                state.resumed_from) or ""
            if state.stopped_because:
                break
            loss = self.step()
            if not math.isfinite(loss):
                kept = (f"{self.checkpoint_path} holds update {self.checkpoint_update}"
                        if self.checkpoint_update is not None else "no checkpoint was written")
                kept += f"; the pair cache {self.cache.directory} is kept, so a new run skips encoding"
                raise RescorerError(f"training diverged at update {state.updates}: the loss is {loss}; "
                                    f"lower --learning-rate or --clip-norm and start again ({kept})")
            ppl = None
            if state.updates % settings.valid_every == 0:
                ppl = self.validate()
            state.seconds = time.perf_counter() - started
            self.on_progress(state, ppl)
            if state.updates % settings.checkpoint_every == 0:
                self.save_checkpoint()
            self.stop_if_interrupted()
        nothing_done = state.updates == state.resumed_from  # a resume past a bound leaves its checkpoint as it was
        if not self.validated_last_update():
            self.validate()
            nothing_done = False
        if not nothing_done:
            state.seconds = time.perf_counter() - started
            self.save_checkpoint()
        self.stop_if_interrupted(final=True)

    def stop_if_interrupted(self, final: bool = False) -> None:
        """A safe point, between two updates: after SIGINT or SIGTERM, write the checkpoint (the
        state of the last whole update) unless it holds it already, and raise Interrupted."""
        signum = self.interrupt_signal(final)
        if signum is None:
            return
        ending()  # from now on another signal cannot cut short the checkpoint or the line that names it
        if self.checkpoint_update != self.state.updates:
            self.state.stopped_because = f"interrupted ({SIGNAL_NAMES[signum]})"
            self.save_checkpoint()
        raise Interrupted(signum)

    def interrupt_signal(self, final: bool = False) -> Optional[int]:
        """The signal received since training began, if any (several ranks agree on it)."""
        return self.held.signum if self.held is not None else None

    def validated_last_update(self) -> bool:
        """Whether the last update was validated already: a resumed checkpoint's last update is
        not validated again (that would count one more validation without improvement). A file
        from before `validated_update` was validated at each multiple of --valid-every."""
        state = self.state
        if state.validated_update is not None:
            return state.validated_update == state.updates
        return state.updates % self.settings.valid_every == 0
