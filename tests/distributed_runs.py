"""Running `rescore` as one process or as ranks of a torchrun job, for the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import helpers


def one_thread_env(**extra: str) -> dict:
    """One thread per process, as the figures are measured, so results repeat exactly."""
    return {**os.environ, "OMP_NUM_THREADS": "1", **extra}


def rescore(*args, cwd: Path, env=None, timeout: int = 300) -> subprocess.CompletedProcess:
    """One `rescore` process, on one thread unless `env` says otherwise."""
    return helpers.rescore(*args, cwd=cwd, env=env or one_thread_env(), timeout=timeout)


def torchrun(*args, ranks: int = 2, cwd: Path, env=None, timeout: int = 300) -> subprocess.CompletedProcess:
    """`torchrun --standalone --nproc-per-node RANKS -m rescorer ARGS` (a free port each time)."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={ranks}", "-m", "rescorer", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd,
                          env=env or one_thread_env(), timeout=timeout)


def our_lines(stderr: str) -> list[str]:
    """rescore's own lines of a torchrun job's stderr (torchrun's report left out)."""
    ours = []
    for line in stderr.splitlines():
        if line.startswith(("Error: ", "rescore: ", "lines in ")):
            ours.append(line)
    return ours


def assert_no_rescore_traceback(stderr: str) -> None:
    """torchrun prints its own traceback when a rank fails; no rank may print one."""
    assert "/rescorer/" not in stderr and "cli.py" not in stderr, stderr
