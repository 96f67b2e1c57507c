"""`rescore`: add an RNN encoder-decoder score column to a Moses phrase table.

    rescore PHRASE_TABLE [-o OUT] [--model MODEL]   train (unless --model) then score
    rescore train PHRASE_TABLE -o MODEL             the first half
    rescore score PHRASE_TABLE --model MODEL        the second half     (table_commands)
    rescore moses ...                               MERT, ablations, n-best rescoring (moses_commands)
    rescore top-targets | generate                  the paper's Tables 2-3 (analysis_commands)
    rescore translate MODEL --input FILE            a sentence model's own translations (translation_commands)
    rescore plot-...                                its figures (figure_commands)

This module is the group: it sets up signals, logging and the reporter, and gathers the
commands. Commands only parse options, call the library and report; errors of the library
become one-line messages with exit status 1 (2 for bad usage).
"""

from __future__ import annotations

import os
import signal
import sys

from rescorer.runtime.failure_reports import install_signal_handlers

# SIGINT/SIGTERM end the program in one line from here on, even during the imports below
# (torch itself is imported by the commands, under `reports_errors`).
if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "rescore":
    install_signal_handlers()

import logging  # noqa: E402

# OpenMP threads that spin at every barrier starve each other when a core is busy with other
# work (a shared machine, the reader thread): measured 2-5x slower. Passive waiting costs
# nothing measurable otherwise. It must be set before torch loads its OpenMP runtime.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import click  # noqa: E402

from rescorer import __version__  # noqa: E402
from rescorer.cli.reporting import Reporter  # noqa: E402


class DefaultCommandGroup(click.Group):
    """A group whose first positional argument, when it names no subcommand, goes to `run`,
    so that `rescore table.gz` is the main job while `rescore train ...` still works."""

    default_command = "run"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for position, arg in enumerate(args):
            if arg in ("--help", "-h", "--version"):
                break
            if not arg.startswith("-") or arg == "-":
                if arg not in self.commands:
                    args.insert(position, self.default_command)
                break
        return super().parse_args(ctx, args)


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or messages.")
@click.version_option(__version__, prog_name="rescore")
@click.pass_context
def main(ctx: click.Context, quiet: bool) -> None:
    """Score Moses phrase tables with the RNN encoder-decoder of Cho et al. (2014)."""
    # A closed pipe (`rescore score ... -o - | head`) raises BrokenPipeError, so that temporaries
    # are removed on the way out; `reports_errors` then ends quietly, as Unix tools do.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Warnings (trailing garbage, stale temporaries removed) are shown even with -q.
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(message)s",
                        stream=sys.stderr)
    ctx.obj = Reporter(quiet)


def _add_commands() -> None:
    from rescorer.cli.analysis_commands import TABLE_COMMANDS
    from rescorer.cli.figure_commands import FIGURE_COMMANDS
    from rescorer.cli.moses_commands import moses
    from rescorer.cli.table_commands import MAIN_COMMANDS
    from rescorer.cli.translation_commands import TRANSLATION_COMMANDS

    for command in (*MAIN_COMMANDS, *TABLE_COMMANDS, *FIGURE_COMMANDS, *TRANSLATION_COMMANDS):
        main.add_command(command)
    main.add_command(moses)


_add_commands()
