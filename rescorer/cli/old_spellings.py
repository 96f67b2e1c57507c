"""One spelling per idea across the commands, and the old spellings that still work for a version.

The spellings themselves are declared once, with the options (the settings records and
options.py); docs/options.md lists them. This module keeps only what changed: each old spelling,
the commands that took it and the words it means now. An old spelling is rewritten before the
command parses its arguments, with one line on stderr saying what to write instead, so that the
scripts users wrote keep working while they move. Old spellings are in no --help.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Sequence

import click

__all__ = ["OldSpelling", "OLD_SPELLINGS", "rewritten", "accept_old_spellings"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OldSpelling:
    commands: tuple  # the commands that took it, as typed after `rescore`: "moses tune"
    words: tuple  # as users wrote it: ("--batch-mira",) or ("--optimizer", "kbmira")
    now: tuple  # what it means now: ("--optimizer", "batch-mira")

    def notice(self, command: str) -> str:
        return (f"rescore {command}: {' '.join(self.words)} is an old spelling, accepted until the "
                f"next version: write {' '.join(self.now)}")


TUNING = ("moses tune", "moses ablation")

OLD_SPELLINGS = (
    OldSpelling(TUNING, ("--batch-mira",), ("--optimizer", "batch-mira")),
    OldSpelling(TUNING, ("--mert",), ("--optimizer", "mert")),
    OldSpelling(("moses rerank",), ("--optimizer", "kbmira"), ("--optimizer", "batch-mira")),
    OldSpelling(("moses ablation",), ("--rerank-optimizer", "kbmira"), ("--rerank-optimizer", "batch-mira")),
    OldSpelling((*TUNING, "translate"), ("--nbest",), ("--nbest-size",)),
    OldSpelling(("moses tune",), ("--continue",), ("--resume",)),
    OldSpelling(("moses tune",), ("--restart",), ("--no-resume",)),
    OldSpelling(("moses rescore-nbest",), ("--source",), ("--input",)),
)


def _match(spelling: OldSpelling, args: Sequence[str], at: int) -> tuple[int, list]:
    """(words consumed, their replacement) where `args[at:]` starts with the old spelling, else (0, [])."""
    words, now = list(spelling.words), list(spelling.now)
    if list(args[at:at + len(words)]) == words:
        return len(words), now
    joined = "=".join(words) if len(words) == 2 else None
    if args[at] == joined:  # --optimizer=kbmira
        return 1, ["=".join(now)] if len(now) == 2 else now
    if len(words) == 1 and len(now) == 1 and args[at].startswith(words[0] + "="):  # --nbest=50
        return 1, [now[0] + args[at][len(words[0]):]]
    return 0, []


def rewritten(command: str, args: Sequence[str], say: Callable[[str], None] = log.warning) -> list:
    """`args` with the old spellings `command` took replaced by today's (nothing after `--`)."""
    spellings = [spelling for spelling in OLD_SPELLINGS if command in spelling.commands]
    result, at = [], 0
    while at < len(args):
        if args[at] == "--":
            result += args[at:]
            break
        for spelling in spellings:
            consumed, replacement = _match(spelling, args, at)
            if consumed:
                say(spelling.notice(command))
                result += replacement
                at += consumed
                break
        else:
            result.append(args[at])
            at += 1
    return result


def accept_old_spellings(command: click.Command, path: str) -> None:
    """Let `command` (named `path` after `rescore`) and its subcommands take their old spellings."""
    if isinstance(command, click.Group):
        for name, subcommand in command.commands.items():
            accept_old_spellings(subcommand, f"{path} {name}".strip())
        return
    if getattr(command, "takes_old_spellings", False) or \
            not any(path in spelling.commands for spelling in OLD_SPELLINGS):
        return
    command.takes_old_spellings = True  # once, whichever group installs it first
    parse = command.parse_args

    def parse_args(ctx: click.Context, args: list) -> list:
        return parse(ctx, rewritten(path, args))

    command.parse_args = parse_args
