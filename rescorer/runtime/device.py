"""Device choice: CUDA when present, unless told otherwise. What a model runs in on it is the
precision policy's (rescorer.models.precision)."""

from __future__ import annotations

import torch

from rescorer.errors import RescorerError

from rescorer.runtime.settings import DEVICES


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' takes CUDA when present; asking for CUDA without it is an error, not a fallback."""
    if name not in DEVICES:
        raise RescorerError(f"unknown device {name!r}; valid: {', '.join(DEVICES)}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RescorerError("--device cuda was asked for, but PyTorch sees no CUDA device")
    return torch.device(name)
