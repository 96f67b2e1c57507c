"""Settings records: a job's settings declared once, as the fields of a frozen dataclass.

Each field is declared with `setting(...)`: its default, its kind (what values it takes), its
help, its option spelling and whether a resumed run may change it. Everything else is derived
from the declaration: the command-line options (rescorer/cli/record_options.py), the settings
signature, what a checkpoint or a journal stores and the resume check. A field is named by its
concept (`max_seconds`); its option spelling (`--max-time`) is only the command line's, so
renaming an option changes no file format. Stored records carry a format version, and files of an
older format are upgraded on read (`from_stored`).

No torch and no click here: the library below the command line uses records too.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from rescorer.errors import RescorerError

__all__ = ["SettingError", "Kind", "Setting", "setting", "settings_of", "option_name", "check_record", "signature_items",
           "recorded_values", "stored", "from_stored", "like", "MUST_MATCH", "MAY_CHANGE", "NOT_RECORDED", "INT", "POSITIVE_INT", "COUNT",
           "POSITIVE_FLOAT", "NONNEGATIVE_FLOAT", "PROBABILITY_BELOW_ONE", "FLAG", "TEXT", "TEXTS", "choice", "EXISTING_FILE_OR_STDIN",
           "FILE_TO_WRITE", "DIRECTORY_TO_WRITE", "ANY_PATH", "EXISTING_FILE"]

MUST_MATCH = "must-match"  # recorded; a resumed run must ask for the recorded value
MAY_CHANGE = "may-change"  # recorded; a resumed run may ask for another (when to stop, how often)
NOT_RECORDED = "not-recorded"  # about this run only: where it runs, what it writes
RESUME_RULES = (MUST_MATCH, MAY_CHANGE, NOT_RECORDED)


class SettingError(RescorerError, ValueError):
    """A setting's value that its kind does not take, or settings that do not go together."""


@dataclass(frozen=True)
class Kind:
    """What values a setting takes, declaratively: the CLI makes its option type from it and the
    record checks values against it."""

    base: str  # int, float, choice, flag, text or path
    minimum: Optional[float] = None
    min_open: bool = False  # minimum itself is refused
    maximum: Optional[float] = None  # a bound past which the value means nothing (and overflows)
    max_open: bool = False  # maximum itself is refused (a probability below 1)
    choices: tuple = ()
    exists: bool = False  # path: must exist
    allow_dash: bool = False  # path: '-' is stdin or stdout
    file_okay: bool = True
    dir_okay: bool = True
    multiple: bool = False  # repeatable: a tuple of values, () when not given
    nargs: int = 1  # values per use: 2 for a pair (--dev SRC REF), a tuple
    # text: turns the given text into the value (decoder flags into words), raising a ValueError
    # that says why it cannot; the command line makes that a usage error.
    parse: Optional[Callable[[str], Any]] = None

    def refusal(self, value: Any) -> Optional[str]:
        """Why `value` is not one of this kind's values (None: it is); a tuple of a repeatable or
        paired kind is checked value by value."""
        if (self.multiple or self.nargs > 1) and isinstance(value, tuple):
            return next(filter(None, map(dataclasses.replace(self, multiple=False, nargs=1).refusal, value)), None)
        if value is None or self.base in ("flag", "text", "path"):
            return None
        if self.base == "choice":
            return None if value in self.choices else f"valid: {', '.join(map(str, self.choices))}"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (self.base == "int" and not isinstance(value, int)):
            return f"expected {'an integer' if self.base == 'int' else 'a number'}"
        if not math.isfinite(value):
            return "expected a finite number"
        if self.minimum is not None and (value < self.minimum or (self.min_open and value == self.minimum)):
            return f"expected {'>' if self.min_open else '>='} {self.minimum:g}"
        if self.maximum is not None and (value > self.maximum or (self.max_open and value == self.maximum)):
            return f"expected {'<' if self.max_open else '<='} {self.maximum:g}"
        return None


INT = Kind("int")
POSITIVE_INT = Kind("int", minimum=1)
COUNT = Kind("int", minimum=0)  # int >= 0
POSITIVE_FLOAT = Kind("float", minimum=0, min_open=True)  # finite, > 0
NONNEGATIVE_FLOAT = Kind("float", minimum=0)  # finite, >= 0
PROBABILITY_BELOW_ONE = Kind("float", minimum=0, maximum=1, max_open=True)  # in [0, 1)
FLAG = Kind("flag")
TEXT = Kind("text")
TEXTS = Kind("text", multiple=True)  # a repeatable option's texts, a tuple
EXISTING_FILE_OR_STDIN = Kind("path", exists=True, allow_dash=True, dir_okay=False)
FILE_TO_WRITE = Kind("path", dir_okay=False)
DIRECTORY_TO_WRITE = Kind("path", file_okay=False)
ANY_PATH = Kind("path")
EXISTING_FILE = Kind("path", exists=True, dir_okay=False)


def choice(*values: str) -> Kind:
    return Kind("choice", choices=tuple(values))


@dataclass(frozen=True)
class Setting:
    """A field's declaration, kept in its `dataclasses.field(metadata={"setting": ...})`."""

    kind: Kind
    help: Optional[str] = None
    option: Optional[str] = None  # "--max-time", "--x/--no-x", "-k --top"; None: the field is no option
    show_default: bool = True
    resume: str = MUST_MATCH
    signature: bool = True  # shown in the settings signature
    legacy_names: tuple = ()  # names older files stored it under (raw option names)
    metavar: Optional[str] = None  # how --help names the value ("SRC REF"); None: its type's
    required: bool = False  # the command refuses to run without the option

    @property
    def recorded(self) -> bool:
        return self.resume != NOT_RECORDED


def setting(default: Any, kind: Kind, help: Optional[str] = None, **declaration) -> Any:
    """A record field declared once: `declaration` names the rest of its `Setting` (option,
    show_default, resume, signature, legacy_names, metavar, required)."""
    declared = Setting(kind, help, **declaration)
    if declared.resume not in RESUME_RULES:
        raise ValueError(f"resume must be one of {RESUME_RULES}, not {declared.resume!r}")
    declared = dataclasses.replace(declared, legacy_names=tuple(declared.legacy_names))
    return dataclasses.field(default=default, metadata={"setting": declared})


def like(record_type, name: str, **changes) -> Any:
    """A field declared as `record_type`'s field `name`, with `changes` to its declaration (another
    help): records that share a setting declare it once, and each keeps its own field order."""
    field = next(field for field in dataclasses.fields(record_type) if field.name == name)
    declared = dataclasses.replace(field.metadata["setting"], **changes)
    return dataclasses.field(default=field.default, metadata={"setting": declared})


def settings_of(record) -> Iterator[tuple[dataclasses.Field, Setting]]:
    """A record's (class or instance) declared fields and their declarations, in field order."""
    for field in dataclasses.fields(record):
        declared = field.metadata.get("setting")
        if declared is not None:
            yield field, declared


def _shown_name(field: dataclasses.Field, declared: Setting) -> str:
    return declared.option.split("/")[0].split()[-1] if declared.option else field.name.replace("_", "-")


def option_name(record, name: str) -> str:
    """How the command line spells a field's option (--max-time for max_seconds), for messages."""
    for field, declared in settings_of(record):
        if field.name == name:
            return _shown_name(field, declared)
    return "--" + name.replace("_", "-")


def check_record(record) -> None:
    """Refuse a value its field's kind does not take, naming the option (or field)."""
    for field, declared in settings_of(record):
        value = getattr(record, field.name)
        reason = declared.kind.refusal(value)
        if reason:
            raise SettingError(f"{_shown_name(field, declared)} {value!r}: {reason}")


def plain(value: Any) -> Any:
    """A value as files store it: paths as their text, everything else as it is."""
    return str(value) if isinstance(value, Path) else value


def shown(value: Any) -> str:
    """A value as the settings signature shows it: '-' for None (not set), yes/no for flags."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def signature_items(record) -> dict:
    """The record's settings for the one-line signature: field name to shown value, in field order."""
    return {field.name: shown(getattr(record, field.name)) for field, declared in settings_of(record)
            if declared.signature}


def recorded_values(record, *, value=lambda declared, value: plain(value)) -> dict:
    """The recorded fields' values (made plain by `value`) by field name, in field order."""
    return {field.name: value(declared, getattr(record, field.name))
            for field, declared in settings_of(record) if declared.recorded}


def stored(record, fmt: int) -> dict:
    """What a file keeps of the record: {"format": fmt, "fields": {field name: plain value}}, the
    recorded fields only."""
    return {"format": fmt, "fields": recorded_values(record)}


def from_stored(record_type, fields: dict) -> dict:
    """The values of `fields` (a stored record's, or an older file's raw option names) that
    `record_type` declares, by field name: legacy names are renamed, paths made Paths again,
    unknown names dropped."""
    values = {}
    for field, declared in settings_of(record_type):
        for name in (field.name, *declared.legacy_names):
            if name in fields:
                value = fields[name]
                values[field.name] = Path(value) if declared.kind.base == "path" and value is not None else value
                break
    return values
