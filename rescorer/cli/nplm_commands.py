"""`rescore export-nplm`: the CSLM (a target language model) in NPLM's text format, which Moses'
`NeuralLM` feature loads for decoding (rescorer.models.nplm_format says how it is laid out)."""

from __future__ import annotations

from pathlib import Path

import click

from rescorer.cli.options import EXISTING_FILE, force_option, output_option
from rescorer.cli.reporting import Reporter
from rescorer.counts import counted
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["NPLM_COMMANDS"]


@click.command("export-nplm")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@output_option("The NPLM model file (plain text; '-': stdout), for Moses' NeuralLM feature "
               "(`rescore moses add-feature --nplm`).", required=True)
@force_option()
@click.pass_obj
@reports_errors
def export_nplm_command(reporter: Reporter, model_path: Path, output: Path, force: bool) -> None:
    """Write MODEL, a target language model (`rescore train --lm`), as an NPLM model file.

    NPLM, and so Moses, scores with the raw output layer, unnormalized: the exported scores are
    log probabilities only as far as MODEL is self-normalized.
    """
    from rescorer.errors import RescorerError
    from rescorer.io.path_checks import is_stream
    from rescorer.models.lm_files import load_lm
    from rescorer.models.nplm_format import write_nplm

    if output.name.endswith(".gz") and not is_stream(output):
        raise click.UsageError(f"{output}: NPLM reads plain text only; name the output without .gz")
    bundle = load_lm(model_path)
    model, tokens = bundle.model, bundle.vocab.tokens
    try:
        lines = write_nplm(model, tokens, output, force=force)
    except ValueError as error:
        raise RescorerError(f"{model_path}: cannot be written in NPLM's format ({error})") from None
    config = model.config
    reporter.say(f"{output}: NPLM {config.order}-gram model, {config.vocab_size} words, layers "
                 f"{config.embedding_size}x{config.context_size}-{config.hidden_sizes[0]}-"
                 f"{config.hidden_sizes[1]}, {counted(lines, 'line')}")


NPLM_COMMANDS = (export_nplm_command,)
