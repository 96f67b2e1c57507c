"""`rescore translate`: a sentence model's own translations of a file, by batched beam search,
so that its BLEU can be reported beside Moses'."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from rescorer.cli.options import (ANY_PATH, EXISTING_FILE, EXISTING_OR_STDIN, device_option, force_option,
                                  output_option, precision_option)
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import Reporter
from rescorer.runtime.settings import RuntimeSettings
from rescorer.scoring.settings import TranslateSettings
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["TRANSLATION_COMMANDS"]


@click.command("translate")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@click.option("--input", "input_path", type=EXISTING_OR_STDIN, required=True,
              help="Tokenized sentences, one per line (gzip allowed; '-': stdin), in the model's source "
                   "language.")
@output_option("1-best translations, one line per input line ('.gz': gzipped; '-' or no -o: stdout).",
               type=ANY_PATH)
@record_options(TranslateSettings, only=("beam", "nbest_size"))
@click.option("--nbest-out", "nbest_path", type=ANY_PATH, default=None,
              help="Also write the n best as a Moses n-best list: id ||| words ||| RNN= log p ||| score.")
@record_options(TranslateSettings, only=("alpha", "batch_size", "length_ratio", "min_length"))
@device_option
@precision_option
@force_option("Replace existing outputs.")
@click.pass_obj
@reports_errors
def translate_command(reporter: Reporter, model_path: Path, input_path: Path, output: Optional[Path],
                      nbest_path: Optional[Path], force: bool, **options) -> None:
    """Translate every line of --input with MODEL's beam search."""
    from rescorer.io.path_checks import RunPaths, Target
    from rescorer.scoring.translate_job import TranslateJob, translate_job

    output = output if output is not None else Path("-")  # like marian-decoder and fairseq-interactive
    settings = record_from(TranslateSettings, options)
    if settings.nbest_size > 1 and nbest_path is None:
        raise click.UsageError("--nbest-size writes to --nbest-out: give the n-best list's file")
    if str(output) == "-" and str(nbest_path) == "-":
        raise click.UsageError("-o - and --nbest-out - would interleave the 1-best lines and the n-best list "
                               "on standard output: give one of them a file")
    # Like score's outputs: '-', a FIFO or a device (/dev/null) is written into as a stream.
    targets = [Target(output, "output", streamable=True)] + \
        ([Target(nbest_path, "n-best list", streamable=True)] if nbest_path else [])
    with RunPaths([("model", model_path), ("input", input_path)], targets, force=force):
        translate_job(TranslateJob(model_path, input_path, output, nbest_path, settings,
                                   record_from(RuntimeSettings, options), force), reporter)


TRANSLATION_COMMANDS = (translate_command,)
