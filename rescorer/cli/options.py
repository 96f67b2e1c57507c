"""Every option two commands share, declared once; each command picks the ones it takes.

Values are checked while parsing, so a bad one is a usage error (exit 2) before any work starts.
The model options are the fields of one record (rescorer.models.settings.ModelOptions): `--arch`
and `--preset` take their choices from the registry, and `model_settings_from` checks them
together (a setting the architecture does not take is a one-line usage error naming the ones it
does).

Score columns count from 1, as `cut -f` and a reader of moses.ini's weight list count: 1 is a
line's first score, -1 its last. `--column 0` is refused with that rule in the message.
"""

from __future__ import annotations

import functools
from pathlib import Path

import click
from click.core import ParameterSource

from moses_integration.settings import parallel_set as moses_parallel_set
from rescorer.cli.record_options import record_from, record_options
from rescorer.errors import ModelSettingError
from rescorer.models import architecture_names, get_architecture
from rescorer.models.settings import SETTING_NAMES, ModelOptions, ModelSettings
from rescorer.records import settings_of
from rescorer.runtime.settings import RuntimeSettings
from rescorer.scoring.settings import ScoreSettings
from rescorer.training.recipes import LM_RECIPE, SENTENCE_RECIPE, recipe_default, recipe_model_options
from rescorer.training.settings import TrainSettings, parallel_default

# Path types: what a command reads, what it writes, and where '-' means stdin or stdout.
EXISTING_FILE = click.Path(path_type=Path, dir_okay=False, exists=True)
EXISTING_OR_STDIN = click.Path(path_type=Path, dir_okay=False, exists=True, allow_dash=True)
NEW_FILE = click.Path(path_type=Path, dir_okay=False)
FILE_OR_STDOUT = click.Path(path_type=Path, dir_okay=False, allow_dash=True)
ANY_PATH = click.Path(path_type=Path)


def _stacked(*options):
    """One decorator applying `options` in the order they are listed (and shown by --help)."""
    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


class SettingUsageError(click.ClickException):
    """Bad usage in one line: `Error: ...`, exit status 2."""

    exit_code = 2


# ---- shared by the table, analysis, figure and moses commands

def force_option(help: str = "Replace an existing output."):
    return click.option("--force/--no-force", default=False, help=help)


def output_option(help: str, *, dest: str = "output", type=FILE_OR_STDOUT, required: bool = False):
    return click.option("-o", "--output", dest, type=type, required=required, help=help)


device_option = record_options(RuntimeSettings, only=("device",))
precision_option = record_options(RuntimeSettings, only=("precision",))


# ---- the main job: run, train and score

# Their declarations are the records' fields (rescorer.records): rescorer/cli/record_options.py
# makes the options, in field order.
device_options = record_options(RuntimeSettings)
train_options = record_options(TrainSettings)
train_only_options = record_options(  # `rescore train` scores nothing
    TrainSettings, changes={"resume": {"help": "Continue training from MODEL.checkpoint."}})
reject_option = record_options(ScoreSettings, only=("reject_path",))
score_resume_option = record_options(ScoreSettings, only=("resume",))
score_options = record_options(ScoreSettings, exclude=("resume",))
run_score_options = record_options(  # `rescore TABLE` also writes the model it trains
    ScoreSettings, exclude=("resume",),
    changes={"force": {"help": "Replace an existing output, reject file, and the model it trains (with its "
                               "checkpoint)."}})


def explicit_options() -> set:
    """Names of the options given on the command line (not left at their defaults)."""
    ctx = click.get_current_context()
    return {name for name in ctx.params
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}


def _setting_help(name: str) -> str:
    """The model setting's help, its '[default: ...]' with each recipe's value where it has one."""
    help = next(declared.help for field, declared in settings_of(ModelOptions) if field.name == name)
    shown = "".join(f"; {recipe_default(recipe, name)}" for recipe in (SENTENCE_RECIPE, LM_RECIPE)
                    if name in recipe.model)
    head, bracket, tail = help.rpartition("]")
    return f"{head}{shown}{bracket}{tail}" if shown else help


def _arch_help() -> str:
    return ("Architecture: " + "; ".join(f"{name}: {get_architecture(name).summary}" for name in architecture_names())
            + f" [default: cho2014; {parallel_default('arch')}].")


def model_settings_from(options: ModelOptions) -> ModelSettings:
    """The checked ModelSettings of the model options: a setting the architecture does not take
    is a one-line usage error (exit 2)."""
    try:
        return ModelSettings.from_options(options)
    except ModelSettingError as error:
        raise SettingUsageError(str(error)) from None


def model_options(command):
    """Add --arch, --preset and the model settings (ModelOptions' fields), checked before the
    command runs; under --resume the check waits until the checkpoint's own settings have filled
    in the ones not given."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        if not kwargs.get("resume"):  # with --parallel, the sentence recipe's where not given
            options = record_from(ModelOptions, kwargs)
            model_settings_from(recipe_model_options(SENTENCE_RECIPE, options, frozenset(explicit_options()))
                                if kwargs.get("parallel") else options)
        return command(*args, **kwargs)

    recipes_quoted = {name: {"help": _setting_help(name)} for name in SETTING_NAMES}
    return record_options(ModelOptions, changes={"arch": {"help": _arch_help()}, **recipes_quoted})(wrapper)


# ---- the analysis and figure commands

table_output_options = _stacked(
    output_option("Write here instead of stdout."),
    click.option("--csv", "as_csv", is_flag=True, help="CSV, one row per target, instead of Markdown."),
    force_option(),
)


def figure_options(size: str):
    """-o, --dpi and --force of a command that draws one figure; `size` says how large it is."""
    return _stacked(
        output_option("Figure to write (.png, .pdf or .svg).", type=NEW_FILE, required=True),
        click.option("--dpi", type=click.IntRange(20, 600), default=100, show_default=True,
                     help=f"Pixels per inch ({size})."),
        force_option("Replace an existing figure."),
    )


# ---- the moses commands

def parallel_set(label: str, pair, extra_refs: tuple):
    """The ParallelSet of `--LABEL SRC REF` and its `--LABEL-ref` files (None without --LABEL)."""
    if not pair:
        if extra_refs:
            raise click.UsageError(f"--{label}-ref adds a reference to --{label} SRC REF: give --{label} too")
        return None
    return moses_parallel_set(label, pair, extra_refs)


def model_option(help: str, multiple: bool = False, required: bool = True, name: str = "--model"):
    """A model file rescore wrote; `multiple`: repeatable, kept as a tuple under the plural name."""
    dest = name.lstrip("-").replace("-", "_") + ("s" if multiple else "")
    return click.option(name, dest, type=EXISTING_FILE, multiple=multiple, required=required, help=help)
