"""Click options made from a settings record's fields (rescorer.records), and the record made
back from click's values: a field's option, type, default, help and flag form are declared once,
on the field."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Iterable, Optional

import click

from rescorer.records import Kind, SettingError, settings_of

__all__ = ["record_options", "record_from", "FiniteFloatRange", "FiniteFloat"]


class FiniteFloat(click.ParamType):
    """A float that is a number, without bounds: a nan or inf weight would poison every MERT
    iteration."""

    name = "number"

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value):
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"expected a number, found {value}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, found {value}", param, ctx)
        return number


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange (same help), refusing nan and inf."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, found {value}", param, ctx)
        return number


def click_type(kind: Kind):
    bounded = kind.minimum is not None or kind.maximum is not None
    if kind.base == "int":
        if not bounded:
            return int
        return click.IntRange(None if kind.minimum is None else int(kind.minimum),
                              None if kind.maximum is None else int(kind.maximum), min_open=kind.min_open)
    if kind.base == "float":
        if not bounded:
            return FiniteFloat()
        return FiniteFloatRange(min=kind.minimum, max=kind.maximum, min_open=kind.min_open, max_open=kind.max_open)
    if kind.base == "choice":
        return click.Choice(kind.choices)
    if kind.base == "path":
        return click.Path(path_type=Path, exists=kind.exists, allow_dash=kind.allow_dash,
                          file_okay=kind.file_okay, dir_okay=kind.dir_okay)
    return None


def _parsed(parse, default):
    """A click callback parsing the given text (a ValueError becomes a usage error); not given,
    the field's default, already parsed."""
    def callback(ctx, param, value):
        if value is None:
            return default
        try:
            return parse(value)
        except ValueError as error:
            raise click.BadParameter(str(error), ctx=ctx, param=param) from None
    return callback


def _option(field: dataclasses.Field, declared):
    kind = declared.kind
    extra = {"show_default": True} if declared.show_default else {}
    for name in ("metavar", "required"):
        if getattr(declared, name):
            extra[name] = getattr(declared, name)
    if kind.multiple or kind.nargs > 1:
        extra.update(multiple=kind.multiple, nargs=kind.nargs)
    # "--x/--no-x" is one declaration; "-k --top" two spellings of one option
    spellings = (declared.option,) if "/" in declared.option else tuple(declared.option.split())
    if kind.parse:  # a default shown is given as text, and parsed like a value given
        default = field.default if declared.show_default else None
        return click.option(*spellings, field.name, type=str, default=default,
                            callback=_parsed(kind.parse, field.default), help=declared.help, **extra)
    if declared.kind.base == "flag":
        if "/" in declared.option:  # --x/--no-x
            return click.option(*spellings, field.name, default=field.default, help=declared.help, **extra)
        return click.option(*spellings, field.name, is_flag=True, help=declared.help, **extra)
    return click.option(*spellings, field.name, type=click_type(declared.kind), default=field.default,
                        help=declared.help, **extra)


def record_options(record_type, only: Optional[Iterable[str]] = None, exclude: Iterable[str] = (),
                   changes: Optional[dict] = None):
    """A decorator adding the options of `record_type`'s fields (those that declare one), in field
    order; `only`/`exclude` pick fields by name (two commands' records may share an option);
    `changes` maps a field to changes of its declaration where a command takes it otherwise
    (another help, required), as `records.like` does for a field of another record."""
    only = None if only is None else tuple(only)
    fields = [(field, dataclasses.replace(declared, **(changes or {}).get(field.name, {})))
              for field, declared in settings_of(record_type)
              if declared.option and field.name not in exclude and (only is None or field.name in only)]
    if only is not None:
        fields.sort(key=lambda item: only.index(item[0].name))

    def decorate(command):
        for field, declared in reversed(fields):
            command = _option(field, declared)(command)
        return command
    return decorate


def record_from(record_type, values: dict, **extra):
    """The record of the fields `values` (click's keyword arguments) holds, plus `extra`; settings
    that do not go together are a usage error."""
    names = {field.name for field in dataclasses.fields(record_type)}
    try:
        return record_type(**{**{k: v for k, v in values.items() if k in names}, **extra})
    except SettingError as error:
        raise click.UsageError(str(error)) from None
