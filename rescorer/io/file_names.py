"""Path helpers shared by the readers and writers: identity of two paths, and the names of the
temporary, lock and checkpoint files a run keeps beside each file it writes."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["same_file", "temporary_prefix", "lock_path", "checkpoint_path_for"]


def same_file(a: Path | str, b: Path | str) -> bool:
    """True when a and b name the same file: same inode if both exist, else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def temporary_prefix(path: Path) -> str:
    """Temporaries for `path` are `.NAME.tmp-*` beside it: hidden, and found again after a crash."""
    return f".{path.name}.tmp-"


def lock_path(path: Path) -> Path:
    """The lock a run holds while it writes `path`: `.NAME.lock` beside it."""
    return path.with_name(f".{path.name}.lock")


def checkpoint_path_for(model_path: Path) -> Path:
    """Training keeps its resumable state in `MODEL.checkpoint` beside the model."""
    return model_path.with_name(model_path.name + ".checkpoint")
