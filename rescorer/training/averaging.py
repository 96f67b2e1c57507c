"""Checkpoint averaging: one model whose weights are the mean of several of the same run's.

The last few checkpoints of a run sit around one minimum; their mean is usually better than
any of them (Vaswani et al. 2017 average the last 5; fairseq's average_checkpoints.py). Only
models of one architecture, size and vocabulary can be averaged: anything else is refused by
name, because a mean of unlike weights is a model of nothing.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional, Sequence

import torch

from rescorer.errors import ModelFileError
from rescorer.models.model_files import ModelBundle, load_model

__all__ = ["average_models", "average_weights", "BestCheckpoints"]


def average_weights(weights: Sequence[dict]) -> dict:
    """The element-wise mean of state dicts with the same names and shapes, summed in float64
    and returned in each tensor's own dtype."""
    first = weights[0]
    averaged = {}
    for name, tensor in first.items():
        total = torch.zeros(tensor.shape, dtype=torch.float64)
        for state in weights:
            total += state[name].to(torch.float64)
        averaged[name] = (total / len(weights)).to(tensor.dtype)
    return averaged


def average_models(paths: Sequence[Path]) -> ModelBundle:
    """The first model with the mean weights of all; ModelFileError naming the first that differs."""
    if len(paths) < 2:
        raise ModelFileError("averaging needs at least two model files")
    bundles = [load_model(path) for path in paths]
    first = bundles[0]
    for path, bundle in zip(paths[1:], bundles[1:]):
        for what, mine, theirs in (("architecture and sizes", bundle.config, first.config),
                                   ("source vocabulary", bundle.src_vocab, first.src_vocab),
                                   ("target vocabulary", bundle.tgt_vocab, first.tgt_vocab),
                                   ("direction", bundle.direction, first.direction),
                                   ("subword models", bundle.subwords, first.subwords)):
            if mine != theirs:
                raise ModelFileError(f"{path}: its {what} differ from {paths[0]}'s; only checkpoints "
                                     "of one model can be averaged")
    first.model.load_state_dict(average_weights([bundle.model.state_dict() for bundle in bundles]))
    first.training = {**first.training, "averaged_from": [str(path) for path in paths]}
    return first


class BestCheckpoints:
    """The weights of the N best validations of a run so far, by held-out perplexity (the
    earlier update first among equals), for `train --average N`: what the trainer keeps beside
    its best weights, and its checkpoint stores so that a resumed run averages the same ones.
    Copies live on the CPU, so N of them cost no accelerator memory."""

    def __init__(self, size: int, kept: Optional[list] = None):
        self.size = size
        self.kept: list[dict] = list(kept or [])  # {"update", "valid_ppl", "weights"}, best first

    def offer(self, valid_ppl: float, update: int, model: torch.nn.Module) -> None:
        """Keep the model's weights if this validation is among the N best so far."""
        if self.size < 2 or not math.isfinite(valid_ppl):
            return
        if len(self.kept) >= self.size and valid_ppl >= self.kept[-1]["valid_ppl"]:
            return
        weights = {name: tensor.detach().to("cpu", copy=True) for name, tensor in model.state_dict().items()}
        self.kept.append({"update": update, "valid_ppl": valid_ppl, "weights": weights})
        self.kept.sort(key=lambda checkpoint: (checkpoint["valid_ppl"], checkpoint["update"]))
        del self.kept[self.size:]

    def averaged(self) -> dict:
        """The mean of the kept weights (average_weights)."""
        return average_weights([checkpoint["weights"] for checkpoint in self.kept])

    def updates(self) -> list[int]:
        return sorted(checkpoint["update"] for checkpoint in self.kept)
