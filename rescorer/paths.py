"""Path helpers shared by the table reader and writer."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["same_file"]


def same_file(a: Path | str, b: Path | str) -> bool:
    """True when a and b name the same file: same inode if both exist, else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()
