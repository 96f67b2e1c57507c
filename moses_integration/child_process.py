"""Moses programs run as a process group of their own, ended as a whole when we are interrupted.

mert-moses.pl runs the decoder through `sh -c`, so ending only the script (or only our
process, on SIGTERM from a scheduler or `kill`) left the script and Moses running orphaned: on
the real bible-en-fr ablation they went on decoding the dev set, writing into the working
directory that a rerun with --continue would then share. subprocess.call ends its child on an
exception, but not the child's children, and a bare Popen not even the child.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
from contextlib import contextmanager
from typing import Iterator, Sequence

__all__ = ["process_group", "end_group", "call", "run"]

log = logging.getLogger(__name__)

GRACE_SECONDS = 10.0  # after SIGTERM, before SIGKILL


def end_group(process: subprocess.Popen, grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to the child's whole group, SIGKILL to what is left after `grace`; reaps the child."""
    for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            break  # the group is gone
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the child is gone; are its children (the decoder) too?
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
    process.wait()


@contextmanager
def process_group(argv: Sequence[str], **popen_kwargs) -> Iterator[subprocess.Popen]:
    """Popen(argv) in a new session; leaving the block by an exception (Interrupted on SIGINT or
    SIGTERM included) ends the child and everything it started."""
    log.debug("running: %s", shlex.join(map(str, argv)))  # `rescore -v` shows it
    process = subprocess.Popen(list(argv), start_new_session=True, **popen_kwargs)
    try:
        yield process
    except BaseException:
        end_group(process)
        raise


def call(argv: Sequence[str], **popen_kwargs) -> int:
    """subprocess.call for a short Moses script, its command line shown under `rescore -v`."""
    log.debug("running: %s", shlex.join(map(str, argv)))
    return subprocess.call(list(argv), **popen_kwargs)


def run(argv: Sequence[str], **run_kwargs) -> subprocess.CompletedProcess:
    """subprocess.run for a short Moses program whose output is read, its command line shown under `rescore -v`."""
    log.debug("running: %s", shlex.join(map(str, argv)))
    return subprocess.run(list(argv), **run_kwargs)
