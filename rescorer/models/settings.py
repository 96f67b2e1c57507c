"""The one table of model settings, and how an architecture, a preset and the user's choices
become a `ModelConfig`.

Each setting is named once here, with its CLI spelling, type and help; the CLI options are
built from this table (`rescorer/cli/options.py`). A setting applies to every architecture if it
is in COMMON, else to those whose registry entry lists it. Resolution order: common defaults,
the architecture's defaults, its preset, then what the user set; a user setting that the
architecture does not take is an error naming the valid ones, never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from rescorer.errors import ModelSettingError
from rescorer.models.config import ATTENTION_SCORES, ATTENTIONS, CELLS, OPTIONAL_SETTINGS, ModelConfig
from rescorer.models.registry import PRESET_NAMES, architecture_names, get_architecture


@dataclass(frozen=True)
class Setting:
    name: str  # the ModelConfig field
    option: str  # CLI spelling; "--x/--no-x" for on/off flags
    kind: type = str  # str (a choice), int (positive), bool, or float (a probability in [0, 1))
    choices: tuple = ()  # CLI words; `values` maps them to config values when they differ
    values: Optional[dict] = None
    help: str = ""

    @property
    def flag(self) -> str:
        """The option as users write it: --cell, --bidirectional."""
        return self.option.split("/")[0]

    def cli_to_config(self, value: Any) -> Any:
        return self.values[value] if self.values else value


SETTINGS = (
    Setting("cell", "--cell", choices=CELLS,
            help="Recurrent unit of encoder and decoder [default: gru; lstm for luong]."),
    Setting("encoder_layers", "--encoder-layers", kind=int,
            help="Stacked encoder layers [default: 1; luong: the preset's]."),
    Setting("bidirectional", "--bidirectional/--no-bidirectional", kind=bool,
            help="Annotations [->h_j; <-h_j] from a forward and a backward RNN [default: on for rnnsearch only]."),
    Setting("reverse_source", "--reverse-source/--no-reverse-source", kind=bool,
            help="Read the source backwards (x_N ... x_1) [default: off]."),
    Setting("reset_after", "--gru-form", choices=("paper", "cudnn"), values={"paper": False, "cudnn": True},
            help="GRU candidate: paper tanh(W x + U(r*h)), or cudnn tanh(W x + r*(U h + b)) [default: paper]."),
    Setting("decoder_layers", "--decoder-layers", kind=int,
            help="luong: stacked decoder layers [default: the preset's]."),
    Setting("attention", "--attention", choices=ATTENTIONS,
            help="luong: attend to the whole source, or to a window at p_t = t (local-m) or predicted (local-p) [default: global]."),
    Setting("attention_score", "--attention-score", choices=ATTENTION_SCORES,
            help="luong: score(h_t, h_s) [default: general]."),
    Setting("attention_window", "--attention-window", kind=int,
            help="luong local attention: D, the window p_t +- D [default: the preset's]."),
    Setting("input_feeding", "--input-feeding/--no-input-feeding", kind=bool,
            help="luong: feed the attentional state h~_{t-1} to the next step [default: on]."),
    Setting("attention_heads", "--attention-heads", kind=int,
            help="transformer: attention heads per layer, dividing the model width [default: the preset's]."),
    Setting("tied_embeddings", "--tied-embeddings/--no-tied-embeddings", kind=bool,
            help="transformer: the output layer's weights are the target embeddings [default: on]."),
    Setting("layer_norm", "--layer-norm/--no-layer-norm", kind=bool,
            help="Layer normalization of every recurrent layer's outputs, encoder and decoder "
                 "[default: off] (the transformer always normalizes)."),
    Setting("dropout", "--dropout", kind=float,
            help="Probability of dropping a unit in training, never when scoring: embeddings, encoder "
                 "annotations, decoder states and the deep output's input (transformer: also its "
                 "layers' attention and feed-forward outputs) [default: 0]."),
)
SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}
# The model options' names (raw values, None when not given), as a checkpoint records them.
MODEL_OPTION_KEYS = ("arch", "preset", *SETTINGS_BY_NAME)
COMMON = ("cell", "encoder_layers", "bidirectional", "reverse_source", "reset_after", "layer_norm", "dropout")
COMMON_DEFAULTS = dict(cell="gru", encoder_layers=1, bidirectional=False, reverse_source=False,
                       reset_after=False, layer_norm=False, dropout=0.0)
RECURRENT_ONLY = ("cell", "bidirectional", "reverse_source", "reset_after", "layer_norm")  # of COMMON


def applicable_settings(arch: str) -> list[Setting]:
    """The table's settings that `arch` takes, in table order."""
    architecture = get_architecture(arch)
    common = set(COMMON) - (set() if architecture.recurrent else set(RECURRENT_ONLY))
    taken = common | architecture.settings
    return [setting for setting in SETTINGS if setting.name in taken]


def check_probability(name: str, value: Any) -> None:
    """A dropout rate: a finite number in [0, 1) (1 would drop everything)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ModelSettingError(f"{SETTINGS_BY_NAME[name].flag} must be a number in [0, 1), found {value!r}")


def _flags(settings: list[Setting]) -> str:
    return ", ".join(setting.flag for setting in settings)


@dataclass(frozen=True)
class ModelSettings:
    """An architecture, a preset and the settings the user chose explicitly (None: not chosen)."""

    arch: str = "cho2014"
    preset: str = "small"
    given: tuple = ()  # ((name, config value), ...)

    @classmethod
    def make(cls, arch: str = "cho2014", preset: str = "small", **given: Any) -> "ModelSettings":
        unknown = sorted(set(given) - set(SETTINGS_BY_NAME))
        if unknown:
            raise ModelSettingError(f"unknown model settings {unknown}; valid: {', '.join(SETTINGS_BY_NAME)}")
        return cls(arch, preset, tuple((k, v) for k, v in given.items() if v is not None))

    @classmethod
    def from_options(cls, options: dict) -> "ModelSettings":
        """The checked settings of the raw model options (MODEL_OPTION_KEYS, None when not given);
        a setting the architecture does not take is a ModelSettingError naming the ones it does."""
        given = {setting.name: setting.cli_to_config(options[setting.name]) for setting in SETTINGS
                 if options.get(setting.name) is not None}
        settings = cls.make(options["arch"], options["preset"], **given)
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
            if name not in {setting.name for setting in taken}:
                takers = [arch for arch in architecture_names()
                          if name in {setting.name for setting in applicable_settings(arch)}]
                raise ModelSettingError(f"{SETTINGS_BY_NAME[name].flag} does not apply to --arch {self.arch} "
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
        for setting in applicable_settings(self.arch):
            value = values[setting.name]
            if setting.values:  # back to the CLI word
                value = next(word for word, mapped in setting.values.items() if mapped == value)
            if setting.name in ("dropout", "layer_norm") and not value:
                continue  # signatures of runs without them read as before they existed
            if value is not None and not (setting.name == "reset_after" and values["cell"] != "gru"):
                described[setting.flag.lstrip("-")] = value
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
