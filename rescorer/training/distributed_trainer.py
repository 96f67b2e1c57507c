"""Training on several ranks with DistributedDataParallel, with the result of one.

The global batch stays what one process would train: every rank draws the same batch of update
u from (seed, u) (rescorer.training.batch_schedule) and takes its slice of it, so the pairs of an update do not depend on the number of
ranks. Each rank's loss is its slice's summed -log p over the global batch size, times the
number of ranks, because DDP averages the gradients over ranks: the step is then the
single-process one up to the order of floating-point sums. Validation is sharded and its sums
added over ranks, so every rank takes the same early-stopping decision; rank 0's clock decides
--max-time for all. Only rank 0 writes checkpoints; the others wait for it. SIGINT and SIGTERM
(torchrun passes them on to every rank) are agreed on too: the loss's all-reduce carries which
ranks have received one, so that every rank stops after the same update.
"""

from __future__ import annotations

import signal
from typing import Optional

import numpy as np
import torch

from rescorer.errors import RescorerError
from rescorer.models.precision import autocast
from rescorer.runtime.distributed import Ranks
from rescorer.training.trainer import Trainer, batch_tensors, log_likelihood, pair_log_probs

__all__ = ["DistributedTrainer", "check_batch_size"]


def check_batch_size(batch_size: int, ranks: Ranks) -> None:
    if batch_size < ranks.world_size:
        raise RescorerError(f"--batch-size {batch_size} is smaller than the {ranks.world_size} "
                            f"ranks: each rank needs at least one pair per update")


def check_batch_tokens(batch_tokens: int, smallest_batch: int, ranks: Ranks) -> None:
    if smallest_batch < ranks.world_size:
        raise RescorerError(f"--batch-tokens {batch_tokens} makes batches of {smallest_batch} pair(s) for "
                            f"the table's longest pairs, fewer than the {ranks.world_size} ranks: each "
                            f"rank needs at least one pair per update; raise --batch-tokens")


class DistributedTrainer(Trainer):
    """A Trainer whose model is wrapped in DistributedDataParallel (see the module docstring)."""

    def __init__(self, *args, ranks: Ranks, **kwargs):
        super().__init__(*args, **kwargs)
        if self.settings.batch_tokens is None:
            check_batch_size(self.settings.batch_size, ranks)
        else:
            check_batch_tokens(self.settings.batch_tokens, self.schedule.smallest_batch, ranks)
        self.ranks = ranks
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        self.ddp = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=device_ids)

    def step(self) -> float:
        import torch.distributed as dist

        indices = self.schedule.batch(self.state.updates)
        mine = np.array_split(indices, self.ranks.world_size)[self.ranks.rank]
        tensors = batch_tensors(self.cache, mine, self.device)
        with autocast(self.device, self.precision):
            logp = self.ddp(*tensors, sampled=self.sampled_words(), smoothing=self.settings.label_smoothing)
        weights = self.weights_of(mine)
        # this rank's share of the batch's negative log-likelihood (weighted: over the batch's weight)
        nll = -logp.float().sum() if weights is None else -(weights * logp.float()).sum()
        whole = len(indices) if weights is None else float(self.pair_weights[indices].sum())
        loss = nll * (self.ranks.world_size / whole)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()  # DDP all-reduces (averages) the gradients here
        self.optimizer_step()
        self.state.updates += 1
        self.state.train_tokens += int(self.cache.lengths("tgt")[indices].sum()) + len(indices)
        self.state.train_pairs += len(indices)
        held = self.held.signum if self.held is not None else None
        received = [float(held == signal.SIGTERM), float(held == signal.SIGINT)]  # ranks that have one, summed
        total = torch.cat([nll.detach().reshape(1), torch.tensor(received, device=nll.device)])
        dist.all_reduce(total)  # the same loss on every rank, so they agree on divergence (and on interrupts)
        self.agreed_signal = signal.SIGTERM if total[1] > 0 else signal.SIGINT if total[2] > 0 else None
        return total[0].item() / whole

    agreed_signal: Optional[int] = None  # SIGTERM or SIGINT when a rank had one at the last update's all-reduce

    def interrupt_signal(self, final: bool = False) -> Optional[int]:
        """After an update, the signal the ranks agreed on in its all-reduce; at the end of
        training, one more exchange (no update carries it)."""
        if not final:
            return self.agreed_signal
        received = self.ranks.all_gather_objects(self.held.signum if self.held is not None else None,
                                                 "checking for an interrupt")
        return signal.SIGTERM if signal.SIGTERM in received else signal.SIGINT if signal.SIGINT in received else None

    def validation_perplexity(self) -> float:
        mine = self.valid_indices[self.ranks.rank::self.ranks.world_size]
        terms = log_likelihood(self.model, self.valid_cache, mine, self.device, self.precision) \
            if len(mine) else (0.0, 0)
        sums = np.sum(self.ranks.all_gather_objects(terms, "validating"), axis=0)
        return float(np.exp(-sums[0] / sums[1])) if sums[1] else float("nan")

    def valid_log_probs(self) -> np.ndarray:
        """Each held-out pair's log p, each rank scoring every world_size-th pair (as above)."""
        world = self.ranks.world_size
        mine = pair_log_probs(self.model, self.valid_cache, self.valid_indices[self.ranks.rank::world],
                              self.device, self.precision)
        log_probs = np.zeros(len(self.valid_indices))
        for rank, shard in enumerate(self.ranks.all_gather_objects(mine, "validating")):
            log_probs[rank::world] = shard
        return log_probs

    def out_of_time(self, started: float) -> bool:
        if self.settings.max_seconds is None:
            return False
        return self.ranks.broadcast_object(super().out_of_time(started), "checking the time limit")

    def save_checkpoint(self) -> None:
        self.ranks.on_main(super().save_checkpoint, "writing the checkpoint")
        self.checkpoint_update = self.state.updates
