"""One flat, frozen description of a model: its architecture and every size and setting.

The same record serves every architecture; a setting an architecture does not use is None.
Its defaults are those of a version-1 (0.1.0) model file, whose config is a cho2014 GRU model:
such a config dict loads unchanged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Optional

from rescorer.errors import ModelSettingError

CELLS = ("gru", "lstm")
ATTENTIONS = ("global", "local-m", "local-p")
ATTENTION_SCORES = ("dot", "general", "concat")

# Settings that only some architectures use (each architecture lists the ones it takes).
OPTIONAL_SETTINGS = ("maxout_units", "attention_size", "decoder_layers", "attention",
                     "attention_score", "attention_window", "input_feeding", "attention_heads",
                     "tied_embeddings")


# Settings added after model files were first hashed by the unit journal, with the value that
# means "not there" (see ModelConfig.identity_dict).
ADDED_LATER = {"attention_heads": None, "tied_embeddings": None, "dropout": 0.0, "layer_norm": False}


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and settings of a model; vocabulary sizes include the 3 special tokens."""

    src_vocab_size: int
    tgt_vocab_size: int
    embed_dim: int = 500
    embed_rank: Optional[int] = 100  # None: a full V x E embedding matrix
    hidden_size: int = 1000
    maxout_units: Optional[int] = 500  # deep output (cho2014, rnnsearch)
    output_rank: Optional[int] = 500  # None: one matrix to the vocabulary
    reset_after: bool = False  # cuDNN-form GRU
    arch: str = "cho2014"
    cell: str = "gru"
    encoder_layers: int = 1
    bidirectional: bool = False
    reverse_source: bool = False
    attention_size: Optional[int] = None  # inner size of additive attention (rnnsearch, luong concat)
    decoder_layers: Optional[int] = None  # luong's stacked decoder
    attention: Optional[str] = None  # luong: global, local-m, local-p
    attention_score: Optional[str] = None  # luong: dot, general, concat
    attention_window: Optional[int] = None  # luong local: D
    input_feeding: Optional[bool] = None  # luong
    attention_heads: Optional[int] = None  # transformer: heads per attention layer
    tied_embeddings: Optional[bool] = None  # transformer: the output layer is the target embedding table
    # Probability of zeroing a unit in training (never when scoring); 0 in files of format 1 and 2
    # written before it existed, whose configs lack the key.
    dropout: float = 0.0
    # Recurrent architectures: LayerNorm on every recurrent layer's outputs (off in older files).
    layer_norm: bool = False

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    @property
    def annotation_size(self) -> int:
        """Width of the encoder's output at each source position: [->h_j; <-h_j] when bidirectional."""
        return self.directions * self.hidden_size

    @property
    def gates(self) -> int:
        return 4 if self.cell == "lstm" else 3

    def to_dict(self) -> dict:
        return asdict(self)

    def identity_dict(self) -> dict:
        """The dict without the settings added since 0.2 (Transformer, dropout, layer norm) where
        they keep their absent value: what decides the scores, as files before them recorded it,
        so that a model's identity (a unit journal's hash) is the one it had."""
        return {key: value for key, value in asdict(self).items()
                if not (key in ADDED_LATER and value == ADDED_LATER[key])}

    def replace(self, **changes) -> "ModelConfig":
        return replace(self, **changes)

    @classmethod
    def from_dict(cls, values: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown model settings {sorted(unknown)}; valid: {sorted(known)}")
        return cls(**values)


def require(config: ModelConfig, *names: str) -> None:
    """For the architectures' checks (rescorer.models.registry): these settings must be positive integers."""
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ModelSettingError(f"{config.arch} needs {name} as a positive integer, found {value!r}")

