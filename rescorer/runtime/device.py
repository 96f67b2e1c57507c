"""Device choice and mixed precision: bf16 autocast on CUDA, plain fp32 on the CPU by default (for
scoring, 'auto' is decided by measurement: rescorer.scoring.precision_check)."""

from __future__ import annotations

import contextlib

import torch

from rescorer.errors import RescorerError

from rescorer.runtime.settings import DEVICES, PRECISIONS  # noqa: F401  (declared with the record)


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' takes CUDA when present; asking for CUDA without it is an error, not a fallback."""
    if name not in DEVICES:
        raise RescorerError(f"unknown device {name!r}; valid: {', '.join(DEVICES)}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RescorerError("--device cuda was asked for, but PyTorch sees no CUDA device")
    return torch.device(name)


def resolve_precision(name: str, device: torch.device) -> str:
    """'auto' is bf16 on CUDA (tensor cores) and fp32 on the CPU (exact, repeatable scores): what
    training, the CSLM and `translate` take. Scoring a table or pairs decides 'auto' by measuring
    each model instead (rescorer.scoring.precision_check), and calls this for the other names."""
    if name not in PRECISIONS:
        raise RescorerError(f"unknown precision {name!r}; valid: {', '.join(PRECISIONS)}")
    if name == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    if name == "int8" and device.type != "cpu":
        raise RescorerError("--precision int8 runs on the CPU only (on CUDA use bf16): add --device cpu")
    return name


def autocast(device: torch.device, precision: str):
    """The autocast context for a precision; fp32 needs none, nor int8 (its weights are int8)."""
    if precision == "bf16":
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()
