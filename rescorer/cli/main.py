"""`rescore`: add an RNN encoder-decoder score column to a Moses phrase table.

    rescore PHRASE_TABLE [-o OUT] [--model MODEL]   train (unless --model) then score
    rescore train PHRASE_TABLE -o MODEL             the first half
    rescore score PHRASE_TABLE --model MODEL        the second half     (table_commands)
    rescore moses ...                               MERT, ablations, n-best rescoring (moses_commands)
    rescore top-targets | generate                  the paper's Tables 2-3 (analysis_commands)
    rescore translate MODEL --input FILE            a sentence model's own translations (translation_commands)
    rescore export-nplm LM -o OUT.nplm              a target LM for Moses' NeuralLM (nplm_commands)
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
from rescorer.cli.groups import WholeHelpGroup  # noqa: E402
from rescorer.cli.logs import configure_logging  # noqa: E402
from rescorer.cli.reporting import Reporter  # noqa: E402
from rescorer.cli.old_spellings import accept_old_spellings  # noqa: E402


class DefaultCommandGroup(WholeHelpGroup):
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


def _set_verbosity(quiet: bool, verbose: bool) -> None:
    """-q: warnings only, no progress bars; -v: debug messages too (the commands run for Moses),
    and other libraries' warnings (rescorer.cli.logs). Warnings (trailing garbage, stale
    temporaries removed) are shown even with -q."""
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    configure_logging(level, verbose)
    ctx = click.get_current_context(silent=True)
    reporter = ctx.find_root().obj if ctx is not None else None
    if isinstance(reporter, Reporter):
        reporter.quiet = reporter.quiet or quiet


def _verbosity_after_command(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """`rescore score ... -q` means what `rescore -q score ...` does."""
    if value:
        _set_verbosity(quiet=param.name == "quiet", verbose=param.name == "verbose")
    return value


QUIET_HELP = "No progress bars or messages (warnings and errors still show)."
VERBOSE_HELP = "Debug messages too: each Moses command line run."


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="`rescore TABLE [OPTIONS]` is short for `rescore run TABLE [OPTIONS]`, the main "
                    "job. -q and -v may also follow the command. Shell completion: "
                    "eval \"$(_RESCORE_COMPLETE=bash_source rescore)\" (zsh_source, fish_source).")
@click.option("-q", "--quiet", is_flag=True, help=QUIET_HELP)
@click.option("-v", "--verbose", is_flag=True, help=VERBOSE_HELP)
@click.version_option(__version__, prog_name="rescore")
@click.pass_context
def main(ctx: click.Context, quiet: bool, verbose: bool) -> None:
    """Score Moses phrase tables with the RNN encoder-decoder of Cho et al. (2014).

    `rescore TABLE` trains a model on the table's unique phrase pairs and writes the table back
    with its log p(target | source) as one more score (the command `run`).
    """
    # A closed pipe (`rescore score ... -o - | head`) raises BrokenPipeError, so that temporaries
    # are removed on the way out; `reports_errors` then ends quietly, as Unix tools do.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    ctx.obj = Reporter(quiet)
    _set_verbosity(quiet, verbose)


def _with_verbosity_options(command: click.Command) -> None:
    """Give every command -q/-v of its own, so that they may follow the command's name."""
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            _with_verbosity_options(subcommand)
        return
    taken = {opt for param in command.params for opt in getattr(param, "opts", ())}
    for short, name, help in (("-q", "--quiet", QUIET_HELP), ("-v", "--verbose", VERBOSE_HELP)):
        if name not in taken:
            command.params.append(click.Option([short, name], is_flag=True, expose_value=False,
                                               callback=_verbosity_after_command, help=help))


def _add_commands() -> None:
    from rescorer.cli.analysis_commands import TABLE_COMMANDS
    from rescorer.cli.figure_commands import FIGURE_COMMANDS
    from rescorer.cli.model_commands import MODEL_COMMANDS
    from rescorer.cli.moses_commands import moses
    from rescorer.cli.nplm_commands import NPLM_COMMANDS
    from rescorer.cli.table_commands import MAIN_COMMANDS
    from rescorer.cli.translation_commands import TRANSLATION_COMMANDS

    for command in (*MAIN_COMMANDS, *TABLE_COMMANDS, *FIGURE_COMMANDS, *TRANSLATION_COMMANDS, *MODEL_COMMANDS,
                    *NPLM_COMMANDS):
        main.add_command(command)
    main.add_command(moses)
    _with_verbosity_options(main)
    accept_old_spellings(main, "")


_add_commands()
