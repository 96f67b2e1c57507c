"""The CSLM's model file as `rescore export-nplm` reads it, until model_files has kind "lm".

Assumed payload (a `torch.save`d dict, read with `weights_only=True`):
{"kind": "lm", "config": NgramLmConfig.to_dict(), "vocab": [token by id], "weights": state_dict};
other keys are ignored. `load_lm` is the one function the command calls, so wiring it to the
real format is changing that function alone.
"""

from __future__ import annotations

import os
import pickle
import warnings
import zipfile
from pathlib import Path

import torch

from rescorer.errors import ModelFileError
from rescorer.io.file_names import temporary_name
from rescorer.models.ngram_lm import NgramLM, NgramLmConfig

__all__ = ["LM_KIND", "load_lm", "save_lm"]

LM_KIND = "lm"


def save_lm(model: NgramLM, tokens: list[str], path: Path) -> None:
    """Write the assumed payload atomically (tests, and until training writes the real one)."""
    path = Path(path)
    payload = {"kind": LM_KIND, "config": model.config.to_dict(), "vocab": list(tokens),
               "weights": {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}}
    temporary = path.with_name(temporary_name(path))
    try:
        torch.save(payload, temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _payload(path: Path) -> dict:
    if not path.is_file():
        raise ModelFileError(f"{path}: model file not found")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError,
            KeyError, IndexError, TypeError, AttributeError):
        raise ModelFileError(f"{path}: not a readable model file (truncated, corrupt or not a "
                             f"rescorer model)") from None
    if not isinstance(payload, dict):
        raise ModelFileError(f"{path}: not a rescorer model file")
    return payload


def load_lm(path: Path) -> tuple[NgramLM, list[str]]:
    """The CSLM of a model file (eval mode, CPU) and its vocabulary by id; ModelFileError,
    naming the file, for anything else (a phrase-table model included)."""
    path = Path(path)
    payload = _payload(path)
    kind = payload.get("kind")
    if kind != LM_KIND:
        what = "a phrase-table model" if "src_vocab" in payload else f"a model of kind {kind!r}"
        raise ModelFileError(f"{path}: {what}, not a target language model (kind '{LM_KIND}')")
    try:
        config = NgramLmConfig.from_dict(payload["config"])
        tokens = [str(token) for token in payload["vocab"]]
        model = NgramLM(config)
        model.load_state_dict(payload["weights"])
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelFileError(f"{path}: language model file does not match its own config ({reason})") from None
    if len(tokens) != config.vocab_size:
        raise ModelFileError(f"{path}: {len(tokens)} words in the vocabulary, {config.vocab_size} in the config")
    model.eval()
    return model, tokens
