"""The features field of a Moses n-best line, `LexicalReordering0= -2.5 0 0 Distortion0= 0 LM0= -52.4 ...`,
read as Moses' extractor reads it (mert/Data.cpp InitFeatureMap), and checked: a value that
Python's float takes but Moses never writes (`nan`, `inf`, `1_0`, `1e999`) would reach mert as
a number and spoil the tuning."""

from __future__ import annotations

import math
import re

__all__ = ["NUMBER", "feature_values", "dense_name_problem"]

NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")  # as C++ streams print a double


def dense_name_problem(name: str) -> str | None:
    """What keeps `name` from being a dense feature's name that rescore adds to a list, or None."""
    if "_" in name or not name or " " in name:
        return (f"feature name {name!r}: Moses' extractor reads a name with '_' as a sparse feature; "
                f"use letters and digits")
    return None


def _value(token: str, name: str) -> float:
    """A feature's value: a finite number as Moses prints one (not `nan`, `inf`, `1_0` or `1e999`,
    which Python's float would take)."""
    if NUMBER.match(token):
        number = float(token)
        if math.isfinite(number):
            return number
    try:
        number = float(token)
    except ValueError:
        raise ValueError(f"could not convert string to float: {token!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}= {token} is not a finite number")
    raise ValueError(f"{name}= {token!r} is not a number as Moses writes one")


def feature_values(field: str) -> list[tuple[str, float]]:
    """`LM0= -52.4 TM0= -1 -2` -> [("LM0_0", -52.4), ("TM0_0", -1.0), ("TM0_1", -2.0)]: the dense
    features, named as Moses' extractor names them. A name with `_` is a sparse feature, which
    the extractor skips with its value (mert/Data.cpp InitFeatureMap), and so does this. A
    ValueError says what is wrong: a value that is not a finite number, a name without values,
    a value before any name, a dense name twice."""
    values: list[tuple[str, float]] = []
    seen: set[str] = set()
    tokens = field.split()
    if not tokens:
        raise ValueError("no features; Moses writes 'Name= value ...' for each")
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if not token.endswith("="):
            raise ValueError(f"value {token!r} before any feature name")
        name = token[:-1]
        if not name:
            raise ValueError("'=' without a feature name")
        count = 0
        while position < len(tokens) and not tokens[position].endswith("="):
            value = _value(tokens[position], name)
            position += 1
            if "_" not in name:
                values.append((f"{name}_{count}", value))
            count += 1
        if count == 0:
            raise ValueError(f"{name}= has no value")
        if "_" in name:
            if count != 1:
                raise ValueError(f"the sparse feature {name}= has {count} values; Moses writes one")
        elif name in seen:
            raise ValueError(f"{name}= twice")
        seen.add(name)
    return values


