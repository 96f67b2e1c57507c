"""Options that several `rescore moses` commands share, declared once; values are checked
while parsing, so a bad one is a usage error (exit 2) before any work starts."""

from __future__ import annotations

import math
from pathlib import Path

import click

from moses_integration.decoder_flags import parse_decoder_flags
from moses_integration.errors import MosesConfigError
from moses_integration.systems import parse_column_names

__all__ = ["FINITE_FLOAT", "PATH", "moses_dir_option", "base_dir_option", "threads_option",
           "initial_weight_option", "new_columns_option", "decoder_flags_option"]

PATH = click.Path(path_type=Path)


class FiniteFloat(click.ParamType):
    """A float that is a number: a nan or inf weight would poison every MERT iteration."""

    name = "number"

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value):
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"expected a number, found {value}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, found {value}", param, ctx)
        return number


FINITE_FLOAT = FiniteFloat()


def _parsed(parse):
    """A click callback that turns the library's one-line error into a usage error."""
    def callback(ctx, param, value):
        if value is None:
            return None
        try:
            return parse(value)
        except MosesConfigError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return callback


initial_weight_option = click.option(
    "--initial-weight", type=FINITE_FLOAT, default=None,
    help="Starting weight of every new column. Default: scaled to the table, so that each "
         "new column starts with the weight of an average phrase-table column (see README).")
new_columns_option = click.option(
    "--new-columns", default=None, metavar="NAMES", callback=_parsed(parse_column_names),
    help="Names of the table's new columns in order, e.g. rnn-a,rnn-b,wp ('wp': the word "
         "penalty, last). Default: rnn, or rnn,wp for two new columns.")
decoder_flags_option = click.option(
    "--decoder-flags", default="", metavar='"FLAGS"', show_default=False,
    callback=_parsed(parse_decoder_flags),
    help='Decoder settings for tuning and test decoding, e.g. "-search-algorithm 1 '
         '-cube-pruning-pop-limit 400 -s 400".')
moses_dir_option = click.option("--moses-dir", type=PATH, default=None,
                                help="Moses root (holding bin/ and scripts/); default $MOSES_HOME, then PATH.")
base_dir_option = click.option("--base-dir", type=PATH, default=Path("."), show_default=True,
                               help="Directory relative moses.ini paths are resolved against "
                                    "(where the decoder runs).")
threads_option = click.option("--threads", type=click.IntRange(1), default=4, show_default=True)
