"""Where bytes stop being UTF-8: subword models segment UTF-8 text, so their readers (a table's
lines, a corpus's sentences) name the first byte that is not."""

from __future__ import annotations

from typing import Optional

__all__ = ["first_non_utf8"]


def first_non_utf8(data: bytes) -> Optional[str]:
    """'byte 0xE9 at byte 4' for the first byte of `data` that is not UTF-8, or None when all is."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"byte 0x{data[error.start]:02X} at byte {error.start + 1}"
    return None
