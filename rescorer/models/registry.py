"""The registry of architectures: each one's name, presets, settings and the class that builds it.

The entries are data, so that the CLI reads `--arch`'s choices, the presets and which settings
apply without importing torch; an entry names its model class by module path, and that module
(and torch) loads when a model is first built. A new architecture is one module that defines a
`PhraseScorer` subclass plus one entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Optional

from rescorer.errors import ModelSettingError
from rescorer.models.config import ATTENTION_SCORES, ATTENTIONS, ModelConfig, require

PRESET_NAMES = ("paper", "small", "tiny", "sentence")


@dataclass(frozen=True)
class Architecture:
    name: str
    model: str  # the PhraseScorer subclass, as "package.module.Class"
    summary: str  # one line, for --help and the README
    settings: frozenset  # the optional settings of ModelConfig it uses (config.OPTIONAL_SETTINGS)
    presets: dict  # paper / small / tiny / sentence: sizes and shortlist_size
    defaults: dict = field(default_factory=dict)  # settings that differ from the common defaults
    attention: bool = False  # whether `step` returns attention weights (attention maps)
    recurrent: bool = True  # whether it takes the recurrent settings (--cell, --bidirectional, ...)
    # Completes resolved settings (given: the names the user set) or raises ModelSettingError.
    resolve: Optional[Callable[[dict, frozenset], dict]] = None
    # Raises ModelSettingError if a config lacks a setting the architecture needs (before torch loads).
    check: Optional[Callable[[ModelConfig], None]] = None

    @property
    def model_class(self) -> type:
        """The model class, imported on first use (this is where torch loads)."""
        module, _, name = self.model.rpartition(".")
        return getattr(importlib.import_module(module), name)


ARCHITECTURES: dict[str, Architecture] = {}


def register(architecture: Architecture) -> Architecture:
    missing = [name for name in PRESET_NAMES if name not in architecture.presets]
    if missing:
        raise ValueError(f"architecture {architecture.name} lacks presets {missing}")
    ARCHITECTURES[architecture.name] = architecture
    return architecture


def get_architecture(name: str) -> Architecture:
    if name not in ARCHITECTURES:
        raise ModelSettingError(f"unknown architecture {name!r}; valid: {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name]


def architecture_names() -> list[str]:
    return list(ARCHITECTURES)


def attention_architectures() -> list[str]:
    return [name for name, architecture in ARCHITECTURES.items() if architecture.attention]


# The entries, in the papers' order (the order of --arch's choices).


def check_cho2014(config: ModelConfig) -> None:
    """cho2014 needs its deep output's width."""
    require(config, "maxout_units")


CHO2014_PRESETS = {
    # Appendix A: E=500 through rank 100, H=1000, 500 maxout units, G = G_l G_r with a
    # 500-wide inner dimension, 15,000-word shortlists.
    "paper": dict(embed_dim=500, embed_rank=100, hidden_size=1000, maxout_units=500,
                  output_rank=500, shortlist_size=15000),
    # The same architecture shrunk so a CPU trains it on a small table in minutes.
    "small": dict(embed_dim=128, embed_rank=64, hidden_size=256, maxout_units=128,
                  output_rank=128, shortlist_size=15000),
    # For tests and smoke runs: seconds, not minutes.
    "tiny": dict(embed_dim=32, embed_rank=16, hidden_size=48, maxout_units=32,
                 output_rank=32, shortlist_size=2000),
    # Sentence models at the scale of small-data NMT (Sennrich & Zhang 2019): embeddings 512,
    # hidden 1024, full-rank embeddings and output layer.
    "sentence": dict(embed_dim=512, embed_rank=None, hidden_size=1024, maxout_units=512,
                     output_rank=None, shortlist_size=15000),
}

register(Architecture(
    name="cho2014", model="rescorer.models.cho2014.Cho2014",
    summary="Cho et al. (2014): one summary vector c of the source, fed to every decoder gate",
    settings=frozenset({"maxout_units"}), presets=CHO2014_PRESETS, check=check_cho2014))


def check_rnnsearch(config: ModelConfig) -> None:
    """rnnsearch needs its deep output's and alignment model's widths."""
    require(config, "maxout_units", "attention_size")


RNNSEARCH_PRESETS = {
    # Bahdanau et al. (2015): 1000 hidden units per encoder direction and in the decoder (the
    # notes); from the paper's appendix: 620-dimensional embeddings, a 1000-unit alignment
    # model, 500 maxout units, 30,000-word shortlists, full-rank embeddings and output matrix.
    "paper": dict(embed_dim=620, embed_rank=None, hidden_size=1000, attention_size=1000,
                  maxout_units=500, output_rank=None, shortlist_size=30000),
    # cho2014's small sizes, so that the architectures compare at equal width.
    "small": dict(embed_dim=128, embed_rank=64, hidden_size=256, attention_size=256,
                  maxout_units=128, output_rank=128, shortlist_size=15000),
    "tiny": dict(embed_dim=32, embed_rank=16, hidden_size=48, attention_size=32,
                 maxout_units=32, output_rank=32, shortlist_size=2000),
    # Sentence models at the scale of small-data NMT (Sennrich & Zhang 2019): embeddings 512,
    # hidden 1024 per direction, full-rank embeddings and output layer.
    "sentence": dict(embed_dim=512, embed_rank=None, hidden_size=1024, attention_size=1024,
                     maxout_units=512, output_rank=None, shortlist_size=15000),
}

register(Architecture(
    name="rnnsearch", model="rescorer.models.rnnsearch.RNNsearch",
    summary="Bahdanau et al. (2015): bidirectional encoder, additive attention from s_{i-1} at every step",
    settings=frozenset({"maxout_units", "attention_size"}), presets=RNNSEARCH_PRESETS,
    defaults=dict(bidirectional=True), attention=True, check=check_rnnsearch))


def check_luong(config: ModelConfig) -> None:
    """luong: the attention settings agree with each other and with the encoder."""
    require(config, "decoder_layers")
    if config.attention not in ATTENTIONS or config.attention_score not in ATTENTION_SCORES:
        raise ModelSettingError(f"luong needs attention in {ATTENTIONS} and attention_score in "
                                f"{ATTENTION_SCORES}, found {config.attention!r}, {config.attention_score!r}")
    if not isinstance(config.input_feeding, bool):
        raise ModelSettingError("luong needs input_feeding true or false")
    if config.attention == "global":
        if config.attention_window is not None:
            raise ModelSettingError("--attention-window applies to --attention local-m or local-p only")
    else:
        require(config, "attention_window")
    if config.attention_score == "concat":
        require(config, "attention_size")
    elif config.attention_size is not None:
        raise ModelSettingError("attention_size applies to --attention-score concat only")
    if config.attention_score == "dot" and config.annotation_size != config.hidden_size:
        raise ModelSettingError("--attention-score dot needs annotations as wide as the decoder: "
                                "not with --bidirectional (valid: general, concat)")


def resolve_luong(values: dict, given: frozenset) -> dict:
    """luong: a window only for local attention (the preset's goes with global attention; one
    given stays, for check_luong to refuse), an inner size only for concat (the decoder's width)."""
    if values["attention"] == "global" and "attention_window" not in given:
        values["attention_window"] = None
    values["attention_size"] = values["hidden_size"] if values["attention_score"] == "concat" else None
    return values


LUONG_PRESETS = {
    # Luong et al. (2015): 4-layer LSTMs of 1000 cells, 1000-dimensional embeddings, D = 10,
    # 50,000-word vocabularies (the paper; the notes give no sizes). No dropout here.
    "paper": dict(embed_dim=1000, embed_rank=None, hidden_size=1000, encoder_layers=4,
                  decoder_layers=4, output_rank=None, attention_window=10, shortlist_size=50000),
    # cho2014's small widths; two layers each side; a window of 7 positions suits phrases.
    "small": dict(embed_dim=128, embed_rank=64, hidden_size=256, encoder_layers=2, decoder_layers=2,
                  output_rank=128, attention_window=3, shortlist_size=15000),
    "tiny": dict(embed_dim=32, embed_rank=16, hidden_size=48, encoder_layers=1, decoder_layers=2,
                 output_rank=32, attention_window=1, shortlist_size=2000),
    # Sentence models at the scale of small-data NMT (Sennrich & Zhang 2019): embeddings 512,
    # hidden 1024, two layers each side, full-rank embeddings and output layer.
    "sentence": dict(embed_dim=512, embed_rank=None, hidden_size=1024, encoder_layers=2, decoder_layers=2,
                     output_rank=None, attention_window=10, shortlist_size=15000),
}

register(Architecture(
    name="luong", model="rescorer.models.luong.Luong",
    summary="Luong et al. (2015): stacked decoder, global or local attention, input feeding",
    settings=frozenset({"decoder_layers", "attention", "attention_score", "attention_window",
                        "input_feeding", "attention_size"}),
    presets=LUONG_PRESETS, defaults=dict(cell="lstm", attention="global", attention_score="general",
                                         input_feeding=True),
    resolve=resolve_luong, check=check_luong, attention=True))


def check_transformer(config: ModelConfig) -> None:
    """transformer: heads divide the width; full-rank embeddings; tying is on or off."""
    require(config, "decoder_layers", "attention_heads")
    if config.embed_dim % config.attention_heads:
        raise ModelSettingError(f"transformer: {config.attention_heads} attention heads do not divide "
                                f"the model width {config.embed_dim}")
    if config.embed_rank is not None or config.output_rank is not None:
        raise ModelSettingError("transformer: embeddings and output layer are full matrices "
                                "(embed_rank and output_rank None)")
    if not isinstance(config.tied_embeddings, bool):
        raise ModelSettingError("transformer needs tied_embeddings true or false")


TRANSFORMER_PRESETS = {
    # Vaswani et al. (2017), base model: d 512, feed-forward 2,048, 6 + 6 layers, 8 heads.
    "paper": dict(embed_dim=512, embed_rank=None, hidden_size=2048, encoder_layers=6, decoder_layers=6,
                  attention_heads=8, output_rank=None, shortlist_size=32000),
    # Small-data NMT (fairseq's IWSLT recipe, scaled down): trains on 2 CPU cores in hours.
    "small": dict(embed_dim=256, embed_rank=None, hidden_size=1024, encoder_layers=3, decoder_layers=3,
                  attention_heads=4, output_rank=None, shortlist_size=15000),
    "tiny": dict(embed_dim=64, embed_rank=None, hidden_size=128, encoder_layers=2, decoder_layers=2,
                 attention_heads=2, output_rank=None, shortlist_size=2000),
    # fairseq's small-data Transformer (transformer_iwslt_de_en): d 512, feed-forward 1,024,
    # 6 + 6 layers, 4 heads; the base model's depth and width with half its feed-forward.
    "sentence": dict(embed_dim=512, embed_rank=None, hidden_size=1024, encoder_layers=6, decoder_layers=6,
                     attention_heads=4, output_rank=None, shortlist_size=15000),
}

register(Architecture(
    name="transformer", model="rescorer.models.transformer.Transformer",
    summary="Vaswani et al. (2017): self-attention encoder and decoder, pre-norm, tied target embeddings",
    settings=frozenset({"decoder_layers", "attention_heads", "tied_embeddings"}), presets=TRANSFORMER_PRESETS,
    defaults=dict(tied_embeddings=True), attention=True, recurrent=False, check=check_transformer))
