"""torch's random number generators in a checkpoint, so that a resumed run draws what the
uninterrupted run would have drawn. Batches, sampled words and held-out pairs depend on (seed,
update) alone; dropout draws from torch's generators, whose state only the checkpoint can carry."""

from __future__ import annotations

from typing import Optional

import torch

__all__ = ["random_state", "restore_random_state"]


def random_state(device: torch.device) -> dict:
    """The generators' state as a checkpoint keeps it (tensors, which weights_only loading reads)."""
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def restore_random_state(state: Optional[dict], device: torch.device) -> None:
    """Put back what `random_state` kept. A checkpoint from before it keeps nothing; the CUDA
    state is put back on CUDA only, since a resume may move to another device."""
    if not state:
        return
    torch.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)
