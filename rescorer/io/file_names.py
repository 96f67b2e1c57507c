"""Path helpers shared by the readers and writers: identity of two paths, and the names of the
temporary, lock and checkpoint files a run keeps beside each file it writes."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["same_file", "temporary_prefix", "temporary_name", "stale_temporaries", "lock_path",
           "checkpoint_path_for"]


def same_file(a: Path | str, b: Path | str) -> bool:
    """True when a and b name the same file: same inode if both exist, else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def temporary_prefix(path: Path) -> str:
    """Temporaries for `path` are `.NAME.tmp-PID[-XXXX]` beside it: hidden, found again after a
    crash, and owned by the process PID."""
    return f".{path.name}.tmp-"


def temporary_name(path: Path) -> str:
    """The name of this process's temporary for `path` (a random `-XXXX` may follow it)."""
    return f"{temporary_prefix(path)}{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def stale_temporaries(path: Path) -> list[Path]:
    """Temporaries for `path` whose owner is dead. Names are matched exactly, never as a glob
    pattern: `a[b].gz` must not take `.ab.gz.tmp-*`, which belong to `ab.gz`, and a temporary
    of a live process is never one (`a.gz`'s prefix also begins `a.gz.tmp-x.gz`'s)."""
    pattern = re.compile(re.escape(temporary_prefix(path)) + r"(\d+)(-[^/]*)?")
    try:
        names = sorted(os.listdir(path.parent))
    except OSError:
        return []
    stale = []
    for name in names:
        match = pattern.fullmatch(name)
        if match and not _alive(int(match.group(1))):
            stale.append(path.parent / name)
    return stale


def lock_path(path: Path) -> Path:
    """The lock a run holds while it writes `path`: `.NAME.lock` beside it."""
    return path.with_name(f".{path.name}.lock")


def checkpoint_path_for(model_path: Path) -> Path:
    """Training keeps its resumable state in `MODEL.checkpoint` beside the model."""
    return model_path.with_name(model_path.name + ".checkpoint")
