"""The encoder-decoders of the literature as phrase scorers, behind one registry.

Parts (embeddings, cells, encoders, attention, the shared output and gold-token bookkeeping in
`base`) are wired into one module per architecture:

- `cho2014`: Cho et al. (2014), the default;
- `rnnsearch`: Bahdanau et al. (2015);
- `luong`: Luong et al. (2015);
- `transformer`: Vaswani et al. (2017), pre-norm.

Importing this package does not import torch: the registry, settings and configs are plain
data, so the CLI starts fast. The model classes (and torch) load when a model is built, or
when one of the torch names below is first read.
"""

from __future__ import annotations

import importlib

from rescorer.models.config import ModelConfig
from rescorer.models.registry import ARCHITECTURES, Architecture, architecture_names, get_architecture
from rescorer.models.settings import ModelSettings, check_config, model_width

__all__ = ["ARCHITECTURES", "Architecture", "DecoderState", "ModelConfig", "ModelSettings",
           "PhraseScorer", "architecture_names", "build_model", "check_config", "count_parameters",
           "get_architecture", "model_width"]

_TORCH_NAMES = {"DecoderState": "rescorer.models.base", "PhraseScorer": "rescorer.models.base",
                "count_parameters": "rescorer.models.base"}


def __getattr__(name: str):
    """`from rescorer.models import PhraseScorer` still works; it imports torch only then."""
    if name in _TORCH_NAMES:
        return getattr(importlib.import_module(_TORCH_NAMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_model(config: ModelConfig):
    """A freshly initialised model of `config`'s architecture (ModelSettingError if it cannot be)."""
    check_config(config)
    return get_architecture(config.arch).model_class(config)
