"""The encoder-decoders of the literature as phrase scorers, behind one registry.

Parts (embeddings, cells, encoders, attention, the shared output and gold-token bookkeeping in
`base`) are wired into one module per architecture. Importing this package registers them:

- `cho2014`: Cho et al. (2014), the default;
- `rnnsearch`: Bahdanau et al. (2015);
- `luong`: Luong et al. (2015);
- `transformer`: Vaswani et al. (2017), pre-norm.

A new architecture is one module plus one import line here.
"""

from rescorer.models import cho2014, rnnsearch, luong, transformer  # noqa: F401, I001  # isort: skip  (each registers itself, in the papers' order)
from rescorer.models.base import DecoderState, PhraseScorer, count_parameters
from rescorer.models.config import ModelConfig
from rescorer.models.registry import ARCHITECTURES, Architecture, architecture_names, get_architecture
from rescorer.models.settings import ModelSettings, check_config, model_width

__all__ = ["ARCHITECTURES", "Architecture", "DecoderState", "ModelConfig", "ModelSettings",
           "PhraseScorer", "architecture_names", "build_model", "check_config", "count_parameters",
           "get_architecture", "model_width"]


def build_model(config: ModelConfig) -> PhraseScorer:
    """A freshly initialised model of `config`'s architecture (ModelSettingError if it cannot be)."""
    check_config(config)
    return get_architecture(config.arch).model_class(config)
