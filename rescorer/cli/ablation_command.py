"""`rescore moses ablation`: the paper's Table 1 on a real Moses system (see ablation.py). It
only parses options, calls the library and reports."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from rescorer.runtime.failure_reports import reports_errors

from rescorer.cli.moses_options import (PATH, base_dir_option, decoder_flags_option, initial_weight_option,
                          moses_dir_option, new_columns_option, threads_option)
from moses_integration.moses_install import find_moses
from moses_integration.moses_ini import MosesIni
from moses_integration.preflight import ParallelSet
from rescorer.cli.reporting import say, signature

__all__ = ["ablation_command"]


@click.command("ablation")
@click.argument("ini_path", metavar="MOSES_INI", type=PATH)
@click.option("--rescored-table", type=PATH, default=None,
              help="Table with the model (and word-penalty) columns, from `rescore score --unk-penalty`.")
@click.option("--model", "models", type=PATH, multiple=True,
              help="Instead of --rescored-table: score the ini's (text) table with this model; "
                   "repeat for several (one column each; systems are named after the files).")
@new_columns_option
@click.option("--dev", nargs=2, type=PATH, required=True, metavar="SRC REF")
@click.option("--test", nargs=2, type=PATH, required=True, metavar="SRC REF")
@click.option("--out-dir", type=PATH, required=True)
@click.option("--replicates", type=click.IntRange(1), default=3, show_default=True)
@click.option("--system", "systems", multiple=True, metavar="NAME",
              help="Only these systems, e.g. +RNN (Baseline is always built). Default: all possible.")
@click.option("--feature", default=None, help="Phrase-table feature name if there are several.")
@click.option("--nbest", type=click.IntRange(1), default=100, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True,
              help="Replicate r uses seed + r (same seeds in every system).")
@click.option("--batch-mira/--mert", default=False)
@click.option("--max-iterations", type=click.IntRange(1), default=None,
              help="MERT iterations at most (mert-moses.pl's default: 25).")
@initial_weight_option
@click.option("--warm-start/--no-warm-start", default=True, show_default=True,
              help="Start each system from the same replicate's tuned Baseline weights.")
@decoder_flags_option
@click.option("--filter-test/--no-filter-test", default=True, show_default=True,
              help="Filter the test set's text tables once for every system.")
@click.option("--detokenize", "detokenize_lang", default=None, metavar="LANG")
@click.option("--test-type", type=click.Choice(["ar", "bs"]), default="ar", show_default=True)
@click.option("--plot/--no-plot", default=True, show_default=True,
              help="Write mert-curves.png and fig3-rnn-vs-direct.png (paper Fig. 3).")
@base_dir_option
@moses_dir_option
@threads_option
@reports_errors
def ablation_command(ini_path: Path, rescored_table: Optional[Path], models, new_columns, dev,
                     test, out_dir: Path, replicates: int, systems, feature: Optional[str],
                     nbest: int, seed: int, batch_mira: bool, max_iterations: Optional[int],
                     initial_weight: Optional[float], warm_start: bool, decoder_flags,
                     filter_test: bool, detokenize_lang: Optional[str], test_type: str,
                     plot: bool, base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Baseline, +RNN, +WP, +RNN+WP: R tuning replicates each, test scores, results table."""
    from moses_integration.ablation import AblationConfig, run_ablation
    from moses_integration.figure import plot_rnn_vs_table
    from moses_integration.model_scoring import score_table
    from moses_integration.systems import names_from_models

    if (rescored_table is None) == (not models):
        raise click.UsageError("give exactly one of --rescored-table and --model")
    install = find_moses(moses_dir)
    if models:
        new_columns = new_columns or names_from_models(models)
        table = MosesIni.read(ini_path).phrase_table(feature)
        rescored_table = score_table(base_dir / table.args["path"], models,
                                     out_dir / "tables" / "rescored.phrase-table.gz")
    signature(moses=install.root, ini=ini_path, table=rescored_table, replicates=replicates,
              seed=seed, nbest=nbest, optimizer="batch-mira" if batch_mira else "mert",
              start="warm" if warm_start else "cold", initial_weight="scaled" if initial_weight is None else initial_weight,
              decoder_flags=" ".join(decoder_flags) or "none", test=test_type,
              detok=detokenize_lang or "no")
    config = AblationConfig(
        ini_path=ini_path.resolve(), rescored_table=rescored_table.resolve(),
        dev=ParallelSet("dev", dev[0].resolve(), dev[1].resolve()),
        test=ParallelSet("test", test[0].resolve(), test[1].resolve()), out_dir=out_dir.resolve(),
        base_dir=base_dir, feature=feature, new_columns=new_columns, replicates=replicates,
        threads=threads, nbest=nbest, seed=seed, batch_mira=batch_mira,
        initial_weight=initial_weight, warm_start=warm_start, decoder_flags=decoder_flags,
        filter_test=filter_test, test_type=test_type, detokenize_lang=detokenize_lang,
        max_iterations=max_iterations, systems=list(systems) or None, plot_curves=plot)
    run_ablation(config, install, report=say)
    if plot:
        ini = MosesIni.read(ini_path)
        num_base = ini.phrase_table(feature).int_arg("num-features", ini.origin)
        figure = out_dir / "fig3-rnn-vs-direct.png"
        if not figure.is_file():
            say(plot_rnn_vs_table(rescored_table, num_base, figure).summary())
    click.echo((out_dir / "results.md").read_text(encoding="utf-8"), nl=False)
