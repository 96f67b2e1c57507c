"""`rescore moses ...`: the group of the Moses integration's commands, which live by job in
moses_system_commands (add-feature, preflight, tune, evaluate), moses_nbest_commands
(rescore-nbest, rerank) and moses_study_commands (ablation, plot-scores). They only parse
options, call the library (moses_integration, which imports neither torch nor click) and report;
library errors become one-line messages (exit 1)."""

from __future__ import annotations

import logging

import click

from rescorer.cli.groups import WholeHelpGroup
from rescorer.cli.logs import configure_logging
from rescorer.cli.moses_nbest_commands import NBEST_COMMANDS
from rescorer.cli.moses_study_commands import STUDY_COMMANDS
from rescorer.cli.moses_system_commands import SYSTEM_COMMANDS
from rescorer.cli.reporting import is_quiet
from rescorer.cli.old_spellings import accept_old_spellings

__all__ = ["moses"]


@click.group(cls=WholeHelpGroup, context_settings={"help_option_names": ["-h", "--help"]})
def moses() -> None:
    """Use the RNN score in a Moses system: edit moses.ini, check, tune, evaluate, ablate."""
    if not logging.getLogger().handlers:  # the group run on its own: the `rescore` group configures it otherwise
        configure_logging(logging.WARNING if is_quiet() else logging.INFO)


for _command in (*SYSTEM_COMMANDS, *NBEST_COMMANDS, *STUDY_COMMANDS):
    moses.add_command(_command)
accept_old_spellings(moses, "moses")  # also when the group runs on its own (tests, other entry points)
