"""Counts in messages: '1 pair', '2 pairs', never '1 pairs' (issue 45). One helper, so that a
message that counts things says it right whatever the count."""

from __future__ import annotations

from typing import Optional

__all__ = ["counted"]


def counted(count: int, noun: str, plural: Optional[str] = None) -> str:
    """`count` and the noun in the number it takes: counted(1, "pair") is '1 pair', counted(0,
    "pair") '0 pairs'; `plural` for a noun whose plural is not noun + 's' ("hypotheses")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
