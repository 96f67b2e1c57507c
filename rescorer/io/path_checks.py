"""What a run may write, decided once before any long work.

A command lists every path it reads and every path it will write (output, reject file, model,
checkpoint, pair cache, moses.ini). `RunPaths` refuses, in one line and before hours of work:
a target that is one of the inputs or another target (through symbolic and hard links), a
directory target that holds an input or another target, an existing target without `--force`,
a target that cannot be created (no write permission, a file where a directory should be).
While the run lasts it holds a lock beside each target, so that a second run writing the same
file refuses instead of racing, and it removes the temporaries a killed run left beside them.
Directories it had to create are removed again if the run fails.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Optional, Sequence

from rescorer.errors import RescorerError
from rescorer.io.file_names import checkpoint_path_for, lock_path, same_file, stale_temporaries

__all__ = ["Target", "RunPaths", "is_stream", "is_pair_cache_dir"]

log = logging.getLogger("rescorer")
STDIO = "-"


@dataclass(frozen=True)
class Target:
    """A path the run writes. `role` names it in messages ("output", "model", ...).

    kind: "file", "dir" (a pair cache: replaced when it is not one) or "work-dir" (a directory a
    run works in and may continue: never replaced, only locked). streamable: a FIFO or a device there is written into, never replaced
    (outputs and reject files). may_exist: an existing target is expected and not a reason to
    ask for --force (a checkpoint under --resume, a pair cache that is reused or rebuilt).
    hint: what to say besides --force when it exists.
    """

    path: Path
    role: str
    kind: str = "file"
    streamable: bool = False
    may_exist: bool = False
    hint: str = ""


def is_stream(path: Path) -> bool:
    """True for `-` and for an existing path that is not a regular file or directory (a FIFO,
    /dev/null, a terminal): such a target is written into as it is, never replaced."""
    if str(path) == STDIO:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def is_pair_cache_dir(path: Path) -> bool:
    """A directory that `rescorer.data.pair_cache` wrote (it has the cache's meta.json)."""
    return (path / "meta.json").is_file() and (path / "src.offsets").exists()


def _inside(inner: Path, outer: Path) -> bool:
    inner, outer = Path(os.path.realpath(inner)), Path(os.path.realpath(outer))
    return inner != outer and outer in inner.parents


def _describe_kind(path: Path) -> str:
    mode = os.stat(path).st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class RunPaths:
    """Checks, locks and cleans up the targets of one run; use as a context manager around it."""

    def __init__(self, reads: Sequence[tuple[str, Optional[Path]]], writes: Sequence[Optional[Target]],
                 force: bool = False):
        self.reads = [(role, Path(path)) for role, path in reads if path is not None]
        self.writes = [target for target in writes if target is not None]
        self.force = force
        self.created_dirs: list[Path] = []
        self._locks: list[tuple[Path, int]] = []

    # ---- checks (no side effects) ----------------------------------------------------
    def check(self) -> None:
        """Raise RescorerError for the first target this run must not write."""
        for target in self.writes:
            if str(target.path) != STDIO:
                self._check_against_inputs(target)
        for index, target in enumerate(self.writes):
            if str(target.path) == STDIO:
                continue
            for other in self.writes[index + 1:]:
                if str(other.path) != STDIO:
                    self._check_pair(target, other)
            self._check_existing(target)
            self._check_directory(target)

    def _check_against_inputs(self, target: Target) -> None:
        for role, path in self.reads:
            if str(path) == STDIO:
                continue
            if same_file(target.path, path):
                raise RescorerError(f"{target.path}: the {target.role} would overwrite the {role} "
                                    f"{path}; refusing (give another path)")
            if target.kind == "dir" and _inside(path, target.path):  # a work-dir is not replaced
                raise RescorerError(f"{target.path}: the {target.role} directory holds the {role} "
                                    f"{path}; refusing to replace it (give another path)")

    def _check_pair(self, target: Target, other: Target) -> None:
        if same_file(target.path, other.path):
            raise RescorerError(f"{target.path}: given both as the {target.role} and as the "
                                f"{other.role}; give them different paths")
        for outer, inner in ((target, other), (other, target)):
            if outer.kind in ("dir", "work-dir") and _inside(inner.path, outer.path):
                raise RescorerError(f"{inner.path}: the {inner.role} would lie inside the "
                                    f"{outer.role} directory {outer.path}; give another path")

    def _check_existing(self, target: Target) -> None:
        path = target.path
        if not os.path.lexists(path):
            return
        if os.path.islink(path) and not path.exists():
            raise RescorerError(f"{path}: the {target.role} is a broken symbolic link")
        if target.kind in ("dir", "work-dir"):
            if not path.is_dir():
                raise RescorerError(f"{path}: the {target.role} must be a directory, found a file")
            if target.kind == "dir" and any(path.iterdir()) and not is_pair_cache_dir(path):
                raise RescorerError(f"{path}: exists and is not a rescorer pair cache; refusing to "
                                    f"replace it (give an empty or new --cache-dir)")
            return
        if path.is_dir():
            raise RescorerError(f"{path}: the {target.role} is a directory")
        if is_stream(path):
            if not target.streamable:
                raise RescorerError(f"{path}: the {target.role} must be a regular file, found "
                                    f"{_describe_kind(path)}")
            return
        if not (self.force or target.may_exist):
            hint = f", {target.hint}" if target.hint else ""
            raise RescorerError(f"{path}: the {target.role} exists; pass --force to replace it{hint}")

    def _check_directory(self, target: Target) -> None:
        """The directory the target goes in exists and is writable, or can be created."""
        directory = Path(os.path.realpath(target.path)).parent
        missing = []
        while not directory.exists():
            if os.path.lexists(directory):  # a broken link
                raise RescorerError(f"{target.path}: cannot create {directory} (a broken symbolic link)")
            missing.append(directory)
            directory = directory.parent
        if not directory.is_dir():
            raise RescorerError(f"{target.path}: cannot write the {target.role}: {directory} is a "
                                f"file, not a directory")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise RescorerError(f"{target.path}: cannot write the {target.role}: no permission to "
                                f"write in {directory}")

    # ---- side effects ---------------------------------------------------------------
    def __enter__(self) -> RunPaths:
        self.check()
        try:
            for target in self.writes:
                if str(target.path) == STDIO:
                    continue
                self._make_parents(target.path)
                if not is_stream(target.path):
                    self._lock(target)
        except BaseException:
            self._release(failed=True)
            raise
        for target in self.writes:
            if str(target.path) != STDIO and not is_stream(target.path):
                self._remove_stale_temporaries(target.path)
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self._release(failed=exc_type is not None)

    def _make_parents(self, path: Path) -> None:
        directory = Path(os.path.realpath(path)).parent
        todo = []
        while not directory.exists():
            todo.append(directory)
            directory = directory.parent
        for directory in reversed(todo):
            try:
                directory.mkdir()
            except FileExistsError:
                continue
            except OSError as error:
                raise RescorerError(f"{path}: cannot create {directory} ({error.strerror})") from None
            self.created_dirs.append(directory)

    def _lock(self, target: Target) -> None:
        path = lock_path(Path(os.path.realpath(target.path)))
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as error:
                raise RescorerError(f"{target.path}: cannot create the lock {path} "
                                    f"({error.strerror})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                if error.errno in (errno.EWOULDBLOCK, errno.EACCES):
                    raise RescorerError(f"{target.path}: another rescore run (pid {holder}) is writing "
                                        f"the {target.role}; wait for it to end") from None
                raise RescorerError(f"{target.path}: cannot lock {path} ({error.strerror})") from None
            try:  # the lock file may have been removed and made anew by a run that just ended
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._locks.append((path, fd))

    def _remove_stale_temporaries(self, path: Path) -> None:
        """Temporaries beside a target we hold the lock of belong to a run that was killed."""
        for stale in stale_temporaries(Path(os.path.realpath(path))):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)
            log.warning(f"{stale}: removed, a temporary left by an interrupted run")

    def _release(self, failed: bool) -> None:
        for path, fd in reversed(self._locks):
            try:
                os.unlink(path)
            except OSError:
                pass
            os.close(fd)
        self._locks.clear()
        if failed:
            for directory in reversed(self.created_dirs):
                try:
                    directory.rmdir()  # only when empty: it may hold a checkpoint worth keeping
                except OSError:
                    pass


def output_targets(output: Optional[Path], reject_path: Optional[Path]) -> list[Target]:
    """The targets of a scoring run: the rescored table and the reject file (both may be a FIFO
    or a device, written into; `-` is stdout)."""
    targets = []
    if output is not None:
        targets.append(Target(Path(output), "output", streamable=True))
    if reject_path is not None:
        targets.append(Target(Path(reject_path), "reject file", streamable=True))
    return targets


def training_targets(model_path: Path, cache_dir: Optional[Path], resume: bool) -> list[Target]:
    """The targets of a training run: the model, its checkpoint and the pair cache.

    Under --resume the model and checkpoint are expected to exist (the run continues them);
    otherwise an existing one needs --force. A pair cache may exist: it is reused when it
    matches the table, rebuilt when not.
    """
    checkpoint = checkpoint_path_for(model_path)
    cache = cache_dir or model_path.with_name(model_path.name + ".cache")
    return [
        Target(model_path, "model", may_exist=resume,
               hint="or --resume to continue its training"),
        Target(checkpoint, "checkpoint", may_exist=resume,
               hint="or --resume to continue the training it holds"),
        Target(cache, "pair cache", kind="dir", may_exist=True),
    ]
