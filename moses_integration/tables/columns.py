"""Which new columns a rescored table holds, and which ablation systems they make.

`rescore score --model a.pt [--model b.pt ...] [--unk-penalty]` appends one column per model, in
the order given, then the word-penalty column. The ablation must know which column is which:
`--new-columns a,b,wp` names them (`wp` is the word penalty); without it the layout is inferred
as today's: one new column is the RNN, two are the RNN and the word penalty. With several model
columns the systems are Baseline, +<model> for each, +RNN (all model columns), +WP and +RNN+WP;
`+a+b` names any other combination of columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from rescorer.counts import counted

from ..errors import MosesConfigError

__all__ = ["PENALTY", "ColumnLayout", "SystemSpec", "parse_column_names", "names_from_models",
           "infer_layout", "plan_systems"]

PENALTY = "wp"  # the word-penalty column's name
DEFAULT_MODEL = "rnn"  # the one model column of today's layout
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# Directory names of the fixed systems; a model column may not take one (case-insensitively).
_RESERVED = ("baseline", "rnn", "wp", "rnn-wp")


@dataclass(frozen=True)
class ColumnLayout:
    """The rescored table's new columns, in table order: model columns, then maybe `wp`."""

    names: tuple

    @property
    def model_names(self) -> tuple:
        return tuple(n for n in self.names if n != PENALTY)

    @property
    def has_penalty(self) -> bool:
        return PENALTY in self.names

    def is_penalty(self, name: str) -> bool:
        return name == PENALTY


@dataclass(frozen=True)
class SystemSpec:
    """One configuration: its name, the new columns it adds (by name) and its directory name."""

    name: str
    new_columns: tuple
    slug: str


def parse_column_names(text: str, origin: str = "--new-columns") -> tuple:
    """`a,b,wp` -> ("a", "b", "wp"): names for directories and systems, unique, `wp` at most once."""
    names = tuple(part.strip() for part in text.split(","))
    for name in names:
        if not _NAME.match(name):
            raise MosesConfigError(f"{origin}: expected names of letters, digits, '.', '_' or '-' "
                                   f"separated by commas, found {name!r} in {text!r}")
    lowered = [n.lower() for n in names]
    duplicates = sorted({n for n in lowered if lowered.count(n) > 1})
    if duplicates:
        raise MosesConfigError(f"{origin}: each column needs its own name, found {duplicates} "
                               "more than once")
    if PENALTY in names and names[-1] != PENALTY:
        raise MosesConfigError(f"{origin}: expected the word-penalty column '{PENALTY}' last, as "
                               f"`rescore score --unk-penalty` writes it, found {text!r}")
    models = [n for n in names if n != PENALTY]
    if not models:
        raise MosesConfigError(f"{origin}: expected at least one model column, found {text!r}")
    if len(models) > 1:
        reserved = [n for n in models if n.lower() in _RESERVED]
        if reserved:
            raise MosesConfigError(
                f"{origin}: {reserved} name the fixed systems ({', '.join(_RESERVED)}); "
                "give the model columns other names")
    return names


def names_from_models(model_paths: Sequence[Path], penalty: bool = True) -> tuple:
    """Column names from model files (a.pt -> "a"), then `wp`: systems are named after them."""
    stems = [Path(p).stem for p in model_paths]
    names = ",".join(stems + ([PENALTY] if penalty else []))
    return parse_column_names(names, origin="--model file names (rename with --new-columns)")


def infer_layout(num_base: int, num_found: int, names: Optional[Sequence[str]] = None,
                 origin: str = "rescored table") -> ColumnLayout:
    """The layout of a table with `num_found` scores over an ini with `num_base` (num-features)."""
    num_new = num_found - num_base
    if names is not None:
        if len(names) != num_new:
            raise MosesConfigError(
                f"{origin}:1: expected {counted(num_base + len(names), 'score')} (the {num_base} of "
                f"num-features plus {','.join(names)}), found {num_found}")
        return ColumnLayout(tuple(names))
    if num_new == 1:
        return ColumnLayout((DEFAULT_MODEL,))
    if num_new == 2:
        return ColumnLayout((DEFAULT_MODEL, PENALTY))
    raise MosesConfigError(
        f"{origin}:1: expected {num_base + 1} or {num_base + 2} scores (the {num_base} of "
        f"num-features plus the RNN score and optionally the word penalty), found {num_found}; "
        "name the new columns with --new-columns (e.g. rnn-a,rnn-b,wp)")


def _all_systems(layout: ColumnLayout) -> list[SystemSpec]:
    models = layout.model_names
    systems = [SystemSpec("Baseline", (), "baseline")]
    if len(models) > 1:
        systems += [SystemSpec(f"+{m}", (m,), m.lower()) for m in models]
    systems.append(SystemSpec("+RNN", models, "rnn"))
    if layout.has_penalty:
        systems += [SystemSpec("+WP", (PENALTY,), "wp"),
                    SystemSpec("+RNN+WP", models + (PENALTY,), "rnn-wp")]
    return systems


def _combination(name: str, layout: ColumnLayout) -> Optional[SystemSpec]:
    """`+a+b`: a system with exactly the columns a and b (any case, kept in table order), for the
    combinations the fixed systems lack, such as two of three models; None if it names no columns."""
    parts = name.split("+")
    if len(parts) < 3 or parts[0]:
        return None
    by_lower = {n.lower(): n for n in layout.names}
    columns = {by_lower.get(part.lower()) for part in parts[1:]}
    if None in columns or len(columns) != len(parts) - 1:
        return None
    ordered = tuple(n for n in layout.names if n in columns)
    return SystemSpec(name, ordered, "-".join(n.lower() for n in ordered))


def plan_systems(layout: ColumnLayout, wanted: Optional[Sequence[str]] = None,
                 origin: str = "rescored table") -> list[SystemSpec]:
    """Systems possible with this table, or the `wanted` ones (Baseline is always built).
    A wanted `+a+b` that is no fixed system is the combination of those columns."""
    available = _all_systems(layout)
    if not wanted:
        return available
    names = [s.name for s in available]
    chosen = {"Baseline"} | {n for n in wanted if n in names}  # every system is compared with it
    by_columns = {s.new_columns: s for s in available}
    combinations, unknown = [], []
    for name in (n for n in wanted if n not in names):
        spec = _combination(name, layout)
        if spec is None:
            unknown.append(name)
        elif spec.new_columns in by_columns:  # the columns of a fixed system: that system
            chosen.add(by_columns[spec.new_columns].name)
        elif spec.new_columns in {c.new_columns for c in combinations}:
            continue  # another spelling of a combination already wanted
        elif spec.slug in {s.slug for s in available + combinations}:
            raise MosesConfigError(f"system {name}'s directory name {spec.slug!r} is taken by another "
                                   "system; rename the columns with --new-columns")
        else:
            combinations.append(spec)
    if unknown:
        hint = (f"; {origin} has no word-penalty column (rescore with --unk-penalty)"
                if any(PENALTY.upper() in n for n in unknown) and not layout.has_penalty else "")
        models = layout.model_names
        combine = (f", or a combination of the columns {list(layout.names)} such as "
                   f"+{'+'.join(models[:2])}" if len(models) > 1 else "")
        raise MosesConfigError(f"unknown system(s) {unknown}; expected some of {names}{combine}{hint}")
    return [s for s in available if s.name in chosen] + combinations
