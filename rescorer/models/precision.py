"""One precision policy: what each use of a model may be asked for, what it runs in, and how.

By use (USES):
- "score", a phrase or sentence model's scores: fp32, bf16 or int8 (the CPU's int8 weights and
  activations, rescorer.models.quantization); 'auto' is decided by measuring each model
  (rescorer.scoring.precision_check), which asks `precision_for` for every other name.
- "translate": the same names; 'auto' is bf16 on CUDA (tensor cores), fp32 on the CPU (exact,
  repeatable output).
- "train": fp32 or bf16, 'auto' as for translate; int8 is refused, since it is for scoring.
- "train-then-score", `rescore run`'s training: int8 trains in fp32 the model it then scores
  in int8.
- "score-lm", the CSLM: it has no int8 path, so int8 scores in fp32 on the CPU.
int8 is refused on CUDA for every use. bf16 runs under autocast (`autocast`), int8 on quantized
weights (`quantized`).

Torch-free at import, so that the command line refuses a request in one line without loading
torch; torch loads when a model is run.
"""

from __future__ import annotations

import contextlib

from rescorer.errors import RescorerError
from rescorer.records import SettingError
from rescorer.runtime.settings import PRECISIONS

__all__ = ["USES", "check_request", "precision_for", "autocast", "quantized"]

USES = ("score", "translate", "train", "train-then-score", "score-lm")


def check_request(asked: str, use: str) -> None:
    """Refuse, in one line and before any device is chosen, a precision this use cannot run in."""
    if use not in USES:
        raise RescorerError(f"unknown use of a precision {use!r}; valid: {', '.join(USES)}")
    if asked not in PRECISIONS:
        raise RescorerError(f"unknown precision {asked!r}; valid: {', '.join(PRECISIONS)}")
    if asked == "int8" and use == "train":
        raise SettingError("--precision int8 is for scoring (rescore score, rescore run); train in fp32 or bf16")


def precision_for(asked: str, device_type: str, use: str) -> str:
    """What `use` runs in when `asked` is asked on a `device_type` device ('cpu', 'cuda'): fp32,
    bf16 or int8. A scoring run's 'auto' is the check's to decide (rescorer.scoring.precision_check);
    this is what it falls back to."""
    check_request(asked, use)
    if asked == "auto":
        return "bf16" if device_type == "cuda" else "fp32"
    if asked == "int8":
        if device_type != "cpu":
            raise RescorerError("--precision int8 runs on the CPU only (on CUDA use bf16): add --device cpu")
        if use in ("train-then-score", "score-lm"):
            return "fp32"
    return asked


def autocast(device, precision: str):
    """The autocast context for a precision; fp32 needs none, nor int8 (its weights are int8)."""
    if precision == "bf16":
        import torch

        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def quantized(model, precision: str):
    """The model as `precision` runs it: int8-quantized in place under int8, else as it is."""
    if precision == "int8":
        from rescorer.models.quantization import quantize_int8

        quantize_int8(model)
    return model
