"""How every command reports: messages and progress bars on stderr that honour `rescore
-q/--quiet`, and one settings signature line, so a result can be reproduced from its log (as
sacrebleu's signature does)."""

from __future__ import annotations

import importlib.metadata
import sys
from typing import Any, Optional

import click

from rescorer import __version__

__all__ = ["Reporter", "bar", "is_quiet", "say", "signature", "torch_threads"]


class Reporter:
    """Messages and progress bars on stderr; `--quiet` silences both. The `rescore` group keeps
    one as its context object."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def say(self, message: str) -> None:
        if not self.quiet:
            click.echo(message, err=True)

    def bar(self, **kwargs):
        from rescorer.runtime.progress import progress_bar

        return progress_bar(self.quiet, sys.stderr, **kwargs)

    def signature(self, job: str, **settings: object) -> str:
        """The settings signature line (see `signature`), for the jobs below the command line."""
        return signature(job, **settings)


def _reporter() -> Optional[Any]:
    """The `rescore` group's Reporter, or None when a command runs on its own (in tests)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return obj if hasattr(obj, "say") else None


def is_quiet() -> bool:
    """True when `rescore -q/--quiet` was given."""
    return bool(getattr(_reporter(), "quiet", False))


def say(message: str) -> None:
    """A message on stderr, unless `rescore -q` was given."""
    reporter = _reporter()
    if reporter is not None:
        reporter.say(message)
    else:
        click.echo(message, err=True)


def bar(**kwargs):
    """A progress bar on stderr (rescorer.runtime.progress), none under `rescore -q`."""
    from rescorer.runtime.progress import progress_bar

    return progress_bar(is_quiet(), sys.stderr, **kwargs)


def signature(job: str, **settings: object) -> str:
    """Say, and return, one line naming the version, the job, every setting and torch's thread
    count. torch's version is read from its package metadata, which needs no import."""
    fields = [f"rescore {__version__}", f"job:{job}",
              *(f"{key.replace('_', '-')}:{value}" for key, value in settings.items()),
              f"threads:{torch_threads()}", f"torch:{importlib.metadata.version('torch')}"]
    line = "|".join(fields)
    say(line)
    return line


def torch_threads() -> str:
    """torch's intra-op threads (torch.get_num_threads: OMP_NUM_THREADS, else one per core), which
    a model's results depend on: a product of few rows is summed in another order on two threads
    than on one. '-' where torch is not loaded (the command ran no model)."""
    torch = sys.modules.get("torch")
    return str(torch.get_num_threads()) if torch is not None else "-"
