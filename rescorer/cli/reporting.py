"""How `rescore moses` commands report: messages on stderr that honour `rescore -q/--quiet`,
and a one-line settings signature."""

from __future__ import annotations

from typing import Any

import click

__all__ = ["is_quiet", "say", "signature"]


def _reporter() -> Any:
    """The `rescore` group's Reporter (holding -q/--quiet), or None when this group runs alone.

    Told by its `say` rather than imported: cli.py imports torch, and this package must not."""
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


def signature(**settings: object) -> None:
    """One line of every setting, so a run can be reproduced from its log."""
    say("settings: " + "|".join(f"{k}:{v}" for k, v in settings.items()))
