"""`rescore average`: commands that make a model file from model files."""

from __future__ import annotations

from pathlib import Path

import click

from rescorer.cli.options import EXISTING_FILE, NEW_FILE, force_option, output_option
from rescorer.cli.reporting import Reporter
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["MODEL_COMMANDS"]


@click.command("average")
@click.argument("model_paths", metavar="MODEL...", nargs=-1, required=True, type=EXISTING_FILE)
@output_option("The averaged model file.", type=NEW_FILE, required=True)
@force_option("Replace an existing output.")
@click.pass_obj
@reports_errors
def average_command(reporter: Reporter, model_paths: tuple, output: Path, force: bool) -> None:
    """Write one model whose weights are the mean of the given models' (checkpoints of one run)."""
    from rescorer.io.path_checks import RunPaths, Target
    from rescorer.models.model_files import save_model
    from rescorer.training.averaging import average_models

    with RunPaths([("model", path) for path in model_paths], [Target(output, "output")], force=force):
        save_model(average_models(list(model_paths)), output)
    reporter.say(f"{output}: the mean of {len(model_paths)} models' weights")


MODEL_COMMANDS = (average_command,)
