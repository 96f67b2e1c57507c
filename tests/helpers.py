"""What many tests share, written once: where things are, the `rescore` command run as a user
runs it, the click commands invoked in-process, and slices of gzipped files."""

from __future__ import annotations

import gzip
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

from click.testing import CliRunner, Result

REPO = Path(__file__).resolve().parents[1]
# Resolved, so a shared/ that is a symbolic link compares equal to the paths the code resolves.
SHARED = (REPO.parent / "shared").resolve()
FIXTURE_FILES = REPO / "tests" / "fixtures"  # files made for the tests (a 0.1.0 model, its scores)
EXAMPLE_TABLE = REPO / "examples" / "phrase-table.gz"
RESCORE = shutil.which("rescore")


def rescore(*args, cwd: Optional[Path] = None, env: Optional[dict] = None, timeout: int = 600,
            text: bool = True) -> subprocess.CompletedProcess:
    """The installed `rescore` command, in a process of its own, as a user runs it."""
    assert RESCORE, "the rescore command is not installed (pip install -e .)"
    return subprocess.run([RESCORE, *map(str, args)], capture_output=True, text=text, cwd=cwd,
                          env=env, timeout=timeout)


def study_script(name: str, table: Path, *args, seeds: str, **environment) -> subprocess.CompletedProcess:
    """A study script of benchmarks/studies/proxy/ run on TABLE for SEEDS, with this interpreter's
    `rescore` first on PATH (the scripts call the command by name)."""
    script = REPO / "benchmarks" / "studies" / "proxy" / name
    environment = {**os.environ, "TABLE": str(table), "SEEDS": seeds, **environment,
                   "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    return subprocess.run(["bash", str(script), *map(str, args)], env=environment, capture_output=True, text=True)


def invoke(command, *args, catch_exceptions: bool = False) -> Result:
    """A click command (`rescore`'s group, or a subgroup) run in this process."""
    return CliRunner().invoke(command, [str(arg) for arg in args], catch_exceptions=catch_exceptions)


def gz_lines(path: Path, count: Optional[int] = None) -> list[bytes]:
    """The lines of a gzipped file without their newlines, the first `count` only if given."""
    with gzip.open(path, "rb") as handle:
        return [line.rstrip(b"\n") for line in itertools.islice(handle, count)]


def first_lines(path: Path, count: int, out: Path) -> Path:
    """The first `count` lines of gzipped `path`, written to `out` as they are (gzipped when
    `out` ends in .gz)."""
    with gzip.open(path, "rb") as handle:
        data = b"".join(itertools.islice(handle, count))
    out.write_bytes(gzip.compress(data, mtime=0) if out.suffix == ".gz" else data)
    return out


def dead_pid() -> int:
    """The pid of a process that has ended (what a temporary of a killed run carries)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
