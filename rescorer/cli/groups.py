"""The command groups' --help: each command's whole first paragraph, not 45 characters of it."""

from __future__ import annotations

import inspect

import click

__all__ = ["WholeHelpGroup", "first_paragraph"]


def first_paragraph(command: click.Command) -> str:
    """A command's description as its --help starts it, on one line."""
    text = inspect.cleandoc(command.help or "").split("\n\n")[0]
    return " ".join(text.split())


class WholeHelpGroup(click.Group):
    """A group whose --help shows each command's whole first paragraph, not 45 characters of it."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, first_paragraph(command)) for name, command in sorted(self.commands.items())
                if not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
