"""The model options, a settings record (rescorer.records), and how an architecture, a preset
and the user's choices become a `ModelConfig`.

Each option is one field of `ModelOptions`, with its CLI spelling, kind and help; the command
line's options are made from it (rescorer/cli/record_options.py), a checkpoint stores its values
and a resumed run takes them back. A setting applies to every architecture if it is in COMMON,
else to those whose registry entry lists it. Resolution order: common defaults, the
architecture's defaults, its preset, then what the user set; a user setting that the
architecture does not take is an error naming the valid ones, never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional

from rescorer.errors import ModelSettingError
from rescorer.models.config import ATTENTION_SCORES, ATTENTIONS, CELLS, OPTIONAL_SETTINGS, ModelConfig
from rescorer.models.registry import PRESET_NAMES, architecture_names, get_architecture
from rescorer.records import FLAG, POSITIVE_INT, PROBABILITY_BELOW_ONE, check_record, choice, option_name, setting

GRU_FORMS = {"paper": False, "cudnn": True}  # --gru-form's words -> ModelConfig.reset_after


def _model_setting(kind, help: str, option: str):
    """A model setting: None unless given (the architecture's or its preset's value stands), its
    own help saying the defaults."""
    return setting(None, kind, help, option=option, show_default=False)


@dataclass(frozen=True)
class ModelOptions:
    """The model options as the user gave them, words as the command line takes them (--gru-form
    paper); None: not given. A checkpoint stores them as they are (`records.recorded_values`), and
    `ModelSettings.from_options` resolves them."""

    arch: str = setting("cho2014", choice(*architecture_names()), "Architecture.", option="--arch",
                        show_default=False)
    preset: str = setting(
        "small", choice(*PRESET_NAMES), "Sizes: 'paper' those of the architecture's paper; 'small' trains on a "
        "CPU in minutes; 'tiny' is for smoke tests; 'sentence' is the scale of small-data sentence NMT "
        "(embeddings 512, hidden 1024; transformer: d 512, feed-forward 1024, 6 + 6 layers).", option="--preset")
    cell: Optional[str] = _model_setting(choice(*CELLS), "Recurrent unit of encoder and decoder [default: gru; "
                                         "lstm for luong].", "--cell")
    encoder_layers: Optional[int] = _model_setting(POSITIVE_INT, "Stacked encoder layers [default: 1; luong: the "
                                                   "preset's].", "--encoder-layers")
    bidirectional: Optional[bool] = _model_setting(
        FLAG, "Annotations [->h_j; <-h_j] from a forward and a backward RNN [default: on for rnnsearch only].",
        "--bidirectional/--no-bidirectional")
    reverse_source: Optional[bool] = _model_setting(FLAG, "Read the source backwards (x_N ... x_1) [default: off].",
                                                    "--reverse-source/--no-reverse-source")
    reset_after: Optional[str] = _model_setting(
        choice(*GRU_FORMS), "GRU candidate: paper tanh(W x + U(r*h)), or cudnn tanh(W x + r*(U h + b)) "
        "[default: paper].", "--gru-form")
    decoder_layers: Optional[int] = _model_setting(POSITIVE_INT, "luong: stacked decoder layers [default: the "
                                                   "preset's].", "--decoder-layers")
    attention: Optional[str] = _model_setting(
        choice(*ATTENTIONS), "luong: attend to the whole source, or to a window at p_t = t (local-m) or "
        "predicted (local-p) [default: global].", "--attention")
    attention_score: Optional[str] = _model_setting(choice(*ATTENTION_SCORES), "luong: score(h_t, h_s) [default: "
                                                    "general].", "--attention-score")
    attention_window: Optional[int] = _model_setting(POSITIVE_INT, "luong local attention: D, the window p_t +- D "
                                                     "[default: the preset's].", "--attention-window")
    input_feeding: Optional[bool] = _model_setting(
        FLAG, "luong: feed the attentional state h~_{t-1} to the next step [default: on].",
        "--input-feeding/--no-input-feeding")
    attention_heads: Optional[int] = _model_setting(
        POSITIVE_INT, "transformer: attention heads per layer, dividing the model width [default: the preset's].",
        "--attention-heads")
    tied_embeddings: Optional[bool] = _model_setting(
        FLAG, "transformer: the output layer's weights are the target embeddings [default: on].",
        "--tied-embeddings/--no-tied-embeddings")
    layer_norm: Optional[bool] = _model_setting(
        FLAG, "Layer normalization of every recurrent layer's outputs, encoder and decoder [default: off] (the "
        "transformer always normalizes).", "--layer-norm/--no-layer-norm")
    dropout: Optional[float] = _model_setting(
        PROBABILITY_BELOW_ONE, "Probability of dropping a unit in training, never when scoring: embeddings, "
        "encoder annotations, decoder states and the deep output's input (transformer: also its layers' "
        "attention and feed-forward outputs) [default: 0].", "--dropout")

    def __post_init__(self) -> None:
        check_record(self)


# The model options' names, as a checkpoint records them (raw values, None when not given).
MODEL_OPTION_KEYS = tuple(field.name for field in fields(ModelOptions))
SETTING_NAMES = MODEL_OPTION_KEYS[2:]  # the settings past --arch and --preset, in field order
COMMON = ("cell", "encoder_layers", "bidirectional", "reverse_source", "reset_after", "layer_norm", "dropout")
COMMON_DEFAULTS = dict(cell="gru", encoder_layers=1, bidirectional=False, reverse_source=False,
                       reset_after=False, layer_norm=False, dropout=0.0)
RECURRENT_ONLY = ("cell", "bidirectional", "reverse_source", "reset_after", "layer_norm")  # of COMMON


def setting_flag(name: str) -> str:
    """The option as users write it: --cell, --bidirectional, --gru-form for reset_after."""
    return option_name(ModelOptions, name)


def applicable_settings(arch: str) -> list[str]:
    """The settings that `arch` takes, in field order."""
    architecture = get_architecture(arch)
    common = set(COMMON) - (set() if architecture.recurrent else set(RECURRENT_ONLY))
    taken = common | architecture.settings
    return [name for name in SETTING_NAMES if name in taken]


def check_probability(name: str, value: Any) -> None:
    """A dropout rate: a finite number in [0, 1) (1 would drop everything)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ModelSettingError(f"{setting_flag(name)} must be a number in [0, 1), found {value!r}")


def _flags(names: list[str]) -> str:
    return ", ".join(map(setting_flag, names))


@dataclass(frozen=True)
class ModelSettings:
    """An architecture, a preset and the settings the user chose explicitly (None: not chosen)."""

    arch: str = "cho2014"
    preset: str = "small"
    given: tuple = ()  # ((name, config value), ...)

    @classmethod
    def make(cls, arch: str = "cho2014", preset: str = "small", **given: Any) -> "ModelSettings":
        unknown = sorted(set(given) - set(SETTING_NAMES))
        if unknown:
            raise ModelSettingError(f"unknown model settings {unknown}; valid: {', '.join(SETTING_NAMES)}")
        return cls(arch, preset, tuple((k, v) for k, v in given.items() if v is not None))

    @classmethod
    def from_options(cls, options: ModelOptions) -> "ModelSettings":
        """The checked settings of the model options as given; a setting the architecture does not
        take is a ModelSettingError naming the ones it does."""
        given = {name: getattr(options, name) for name in SETTING_NAMES if getattr(options, name) is not None}
        if "reset_after" in given:
            given["reset_after"] = GRU_FORMS[given["reset_after"]]
        settings = cls.make(options.arch, options.preset, **given)
        settings.check()
        return settings

    def values(self) -> dict:
        """Every ModelConfig field but the vocabulary sizes."""
        architecture = get_architecture(self.arch)
        if self.preset not in architecture.presets:
            raise ModelSettingError(f"unknown preset {self.preset!r}; valid: {', '.join(PRESET_NAMES)}")
        given = dict(self.given)
        taken = applicable_settings(self.arch)
        for name in given:
            if name not in taken:
                takers = [arch for arch in architecture_names() if name in applicable_settings(arch)]
                raise ModelSettingError(f"{setting_flag(name)} does not apply to --arch {self.arch} "
                                        f"(only to {', '.join(takers)}); {self.arch}'s settings are "
                                        f"{_flags(taken)}")
        if "dropout" in given:
            check_probability("dropout", given["dropout"])
            given["dropout"] = float(given["dropout"])
        preset = {k: v for k, v in architecture.presets[self.preset].items() if k != "shortlist_size"}
        values = {**COMMON_DEFAULTS, **{name: None for name in OPTIONAL_SETTINGS},
                  **architecture.defaults, **preset, **given}
        if "reset_after" in given and values["cell"] != "gru":
            raise ModelSettingError(f"--gru-form applies to --cell gru only, not {values['cell']}")
        if architecture.resolve is not None:
            values = architecture.resolve(values, frozenset(given))
        return values

    @property
    def shortlist_size(self) -> int:
        return get_architecture(self.arch).presets[self.preset]["shortlist_size"]

    def config(self, src_vocab_size: int, tgt_vocab_size: int) -> ModelConfig:
        config = ModelConfig(src_vocab_size, tgt_vocab_size, arch=self.arch, **self.values())
        check_config(config)
        return config

    def check(self) -> None:
        """Raise ModelSettingError now if these settings cannot make a model."""
        self.config(10, 10)

    def width(self) -> int:
        """The model's width (model_width), before its shortlists are known."""
        return model_width(self.config(10, 10))

    def describe(self) -> dict:
        """arch, preset and every setting that applies, resolved: for the settings signature."""
        values = self.values()
        described = {"arch": self.arch, "preset": self.preset}
        for name in applicable_settings(self.arch):
            value = values[name]
            if name == "reset_after":  # back to the CLI word
                value = next(word for word, mapped in GRU_FORMS.items() if mapped == value)
            if name in ("dropout", "layer_norm") and not value:
                continue  # signatures of runs without them read as before they existed
            if value is not None and not (name == "reset_after" and values["cell"] != "gru"):
                described[setting_flag(name).lstrip("-")] = value
        return described


def model_width(config: ModelConfig) -> int:
    """The width of the vectors a model's layers pass on: the hidden state of a recurrent model,
    d_model (embed_dim) of a Transformer, whose hidden_size is its feed-forward layers'. Every
    architecture's `small` is 256 wide; the default learning rate scales with it
    (rescorer.training.recipes.TOKEN_BATCH_ADAM)."""
    return config.hidden_size if get_architecture(config.arch).recurrent else config.embed_dim


def check_config(config: ModelConfig) -> None:
    """Raise ModelSettingError unless the config describes a model its architecture can build."""
    architecture = get_architecture(config.arch)
    if config.cell not in CELLS:
        raise ModelSettingError(f"unknown cell {config.cell!r}; valid: {', '.join(CELLS)}")
    if config.reset_after and config.cell != "gru":
        raise ModelSettingError("the cuDNN GRU form (reset_after) needs cell gru")
    for name in ("src_vocab_size", "tgt_vocab_size", "embed_dim", "hidden_size", "encoder_layers"):
        if not isinstance(getattr(config, name), int) or getattr(config, name) < 1:
            raise ModelSettingError(f"{name} must be a positive integer, found {getattr(config, name)!r}")
    check_probability("dropout", config.dropout)
    if config.layer_norm and not architecture.recurrent:
        raise ModelSettingError(f"layer_norm applies to recurrent architectures, not {config.arch}")
    for name in OPTIONAL_SETTINGS:
        if name not in architecture.settings and getattr(config, name) is not None:
            raise ModelSettingError(f"{name} does not apply to architecture {config.arch}")
    if architecture.check is not None:
        architecture.check(config)
