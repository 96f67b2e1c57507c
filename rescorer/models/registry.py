"""The registry of architectures: a name, its model class, its presets and which settings it takes.

A new architecture is one module that defines a `PhraseScorer` subclass and calls `register`,
plus one import line in `rescorer/models/__init__.py`. The CLI's `--arch` choices, the presets
and the checks of which settings apply all come from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from rescorer.errors import ModelSettingError

PRESET_NAMES = ("paper", "small", "tiny", "sentence")


@dataclass(frozen=True)
class Architecture:
    name: str
    model_class: type  # a PhraseScorer subclass
    summary: str  # one line, for --help and the README
    settings: frozenset  # the optional settings of ModelConfig it uses (config.OPTIONAL_SETTINGS)
    presets: dict  # paper / small / tiny / sentence: sizes and shortlist_size
    defaults: dict = field(default_factory=dict)  # settings that differ from the common defaults
    attention: bool = False  # whether `step` returns attention weights (attention maps)
    recurrent: bool = True  # whether it takes the recurrent settings (--cell, --bidirectional, ...)
    # Completes resolved settings (given: the names the user set) or raises ModelSettingError.
    resolve: Optional[Callable[[dict, frozenset], dict]] = None


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
