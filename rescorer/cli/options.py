"""The CLI's model options, built from the one table of settings (rescorer.models.settings).

`--arch` and `--preset` take their choices from the registry; every other option comes from
a `Setting`. The command receives them as raw values (`model_settings_from` turns them into
one ModelSettings), checked at once: a setting the architecture does not take is a one-line
usage error (exit 2) naming the ones it does, before any table is read.
"""

from __future__ import annotations

import functools

import click

from rescorer.errors import ModelSettingError
from rescorer.models import architecture_names, get_architecture
from rescorer.models.registry import PRESET_NAMES
from rescorer.models.settings import SETTINGS, ModelSettings, Setting


class SettingUsageError(click.ClickException):
    """Bad usage in one line: `Error: ...`, exit status 2."""

    exit_code = 2


def _option(setting: Setting):
    if setting.kind is bool:
        return click.option(setting.option, setting.name, default=None, help=setting.help)
    kind = click.IntRange(1) if setting.kind is int else click.Choice(setting.choices)
    return click.option(setting.option, setting.name, type=kind, default=None, help=setting.help)


def _arch_help() -> str:
    return "Architecture: " + "; ".join(f"{name}: {get_architecture(name).summary}"
                                        for name in architecture_names()) + "."


# The keys the model options add to a command's options (raw CLI values, as a checkpoint
# records them for --resume).
MODEL_KEYS = ("arch", "preset", *(setting.name for setting in SETTINGS))


def model_settings_from(options: dict) -> ModelSettings:
    """The checked ModelSettings of the model options in `options` (raw CLI values, None when
    not given): a setting the architecture does not take is a one-line usage error (exit 2)."""
    given = {setting.name: setting.cli_to_config(options[setting.name]) for setting in SETTINGS
             if options.get(setting.name) is not None}
    settings = ModelSettings.make(options["arch"], options["preset"], **given)
    try:
        settings.check()
    except ModelSettingError as error:
        raise SettingUsageError(str(error)) from None
    return settings


def model_options(command):
    """Add --arch, --preset and the table's settings (kept as raw values under MODEL_KEYS),
    checked before the command runs; under --resume the check waits until the checkpoint's
    own settings have filled in the ones not given."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        if not kwargs.get("resume"):
            model_settings_from(kwargs)
        return command(*args, **kwargs)

    options = [
        click.option("--arch", type=click.Choice(architecture_names()), default="cho2014", show_default=True,
                     help=_arch_help()),
        click.option("--preset", type=click.Choice(PRESET_NAMES), default="small", show_default=True,
                     help="Sizes: 'paper' those of the architecture's paper; 'small' trains on a CPU in "
                          "minutes; 'tiny' is for smoke tests."),
        *map(_option, SETTINGS),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper
