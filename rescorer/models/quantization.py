"""`--precision int8`: the model's matrix products in int8 on the CPU, through torchao.

Every linear layer gets int8 weights (one scale per output row) and int8 activations
quantized on the fly (one scale per row: torchao's Int8DynamicActivationInt8WeightConfig),
except those the model names in `full_precision_modules()`: the output layer, which in int8
would need several passes over the (rows, 15k) logits to rescale them (they cost more than the
product saves; fp32 keeps the softmax's fast path, rescorer.models.softmax), and weights an
architecture slices (Luong's input feeding).

torchao is optional (pip install torchao); fp32 stays the default. Every architecture runs
quantized (tests/models/test_quantization.py scores each against fp32).
"""

from __future__ import annotations

import logging
import warnings

import torch
from torch import nn

from rescorer.errors import RescorerError
from rescorer.runtime.optional_packages import missing_package_line

__all__ = ["quantize_int8", "is_quantized"]


def _int8_config():
    # torchao's wheel carries CUDA kernels it cannot load on a CPU-only torch, and says so
    quiet = [logging.getLogger(name) for name in ("torchao", "torch.utils._pytree")]
    levels = [logger.level for logger in quiet]
    try:
        for logger in quiet:
            logger.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_
    except ImportError:
        raise RescorerError(missing_package_line("torchao", "--precision int8") + "; or use fp32 or bf16") from None
    finally:
        for logger, level in zip(quiet, levels):
            logger.setLevel(level)
    return quantize_, Int8DynamicActivationInt8WeightConfig()


def quantize_int8(model: nn.Module) -> nn.Module:
    """Quantize `model` (in place, on the CPU) for int8 scoring; returns it. Inference only."""
    if next(model.parameters()).device.type != "cpu":
        raise RescorerError("--precision int8 runs on the CPU only (on CUDA use bf16): add --device cpu")
    if is_quantized(model):
        return model
    quantize_, config = _int8_config()
    model.eval()
    keep = model.full_precision_modules() if hasattr(model, "full_precision_modules") else set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_(model, config, filter_fn=lambda module, name: isinstance(module, nn.Linear) and name not in keep)
    return model


def is_quantized(model: nn.Module) -> bool:
    """Whether some weight of `model` is no longer a plain tensor (quantized)."""
    return any(type(param) is not nn.Parameter and not type(param) is torch.Tensor
               for param in model.parameters())
