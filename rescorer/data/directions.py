"""Which way a model reads a phrase-table line. A table carries both p(f|e) and p(e|f); the
paper's RNN gives log p(target | source) (`forward`); an `inverse` model, trained on the same
table with its two phrases swapped, gives log p(source | target), so one scoring pass can append
both directions."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["DIRECTIONS", "oriented"]

DIRECTIONS = ("forward", "inverse")
T = TypeVar("T")


def oriented(src: T, tgt: T, direction: str) -> tuple[T, T]:
    """(model source, model target) of a line's (source, target): swapped for an inverse model."""
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
    return (tgt, src) if direction == "inverse" else (src, tgt)
