"""`rescore moses ablation | plot-scores`: the ablation study (systems x replicates, tuned,
evaluated, optionally reranked) and the paper's Fig. 3. Each parses, builds the record, calls
moses_integration and reports; scoring goes through the one in-process scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.moses_install import find_moses
from rescorer.cli.moses_runs import working_in
from rescorer.cli.moses_system_commands import INITIAL_WEIGHT_HELP
from rescorer.cli.options import (ANY_PATH, EXISTING_FILE, SCORE_COLUMN, TUNING_OPTIMIZERS, column_index, decoder_flags_option,
                                  detokenize_option, dev_option, device_option, feature_option, force_option,
                                  initial_weight_option, max_iterations_option, model_option, moses_install_options,
                                  nbest_size_option, new_columns_option, optimizer_option, output_option,
                                  parallel_set, precision_option, seed_option, test_option, test_type_option)
from rescorer.cli.reporting import say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["STUDY_COMMANDS"]


@click.command("plot-scores")
@click.argument("table_path", metavar="RESCORED_TABLE", type=EXISTING_FILE)
@output_option("PNG to write.", type=ANY_PATH, required=True)
@click.option("--rnn-column", type=SCORE_COLUMN, default=5, show_default=True,
              help="Score column of the RNN score, counted from 1 (-1: the last).")
@click.option("--sample-size", type=click.IntRange(1), default=10000, show_default=True,
              help="Phrase pairs drawn from the table for the scatter and rho.")
@seed_option("Which pairs are sampled.")
@force_option("Overwrite the output.")
@reports_errors
def plot_scores(table_path: Path, output: Path, rnn_column: int, sample_size: int, seed: int,
                force: bool) -> None:
    """Scatter the RNN score against the table's p(f|e) (paper Fig. 3) and p(e|f) for a sample
    of pairs, with Spearman's rho of each."""
    from moses_integration.study.score_plots import plot_rnn_vs_table
    from rescorer.analysis.figures import check_figure_path

    with RunPaths([("rescored table", table_path)], [Target(output, "figure")], force=force):
        check_figure_path(output)
        result = plot_rnn_vs_table(table_path, column_index(rnn_column), output, sample_size, seed, force)
    say(f"wrote {output}: {result.summary()}")


@click.command("ablation")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@click.option("--rescored-table", type=ANY_PATH, default=None,
              help="Table with the model (and word-penalty) columns, from `rescore score --unk-penalty`.")
@model_option("Instead of --rescored-table: score the ini's (text) table with this model; "
              "repeat for several (one column each; systems are named after the files).",
              multiple=True, required=False)
@new_columns_option
@dev_option()
@test_option()
@click.option("--out-dir", type=ANY_PATH, required=True,
              help="The study's working directory (tables, tuning, decoding, results.md); a rerun "
                   "resumes there.")
@click.option("--replicates", type=click.IntRange(1), default=3, show_default=True,
              help="Tuning runs of each system, with seeds --seed + r: MERT's variance enters the test.")
@click.option("--system", "systems", multiple=True, metavar="NAME",
              help="Only these systems, e.g. +RNN (Baseline is always built), or +a+b: the table's "
                   "columns a and b together. Default: all the fixed systems.")
@feature_option()
@nbest_size_option()
@seed_option("Replicate r uses seed + r (same seeds in every system).")
@optimizer_option("Moses' optimizer of the weights: MERT, or batch MIRA (mert-moses.pl --batch-mira).")
@max_iterations_option
@initial_weight_option(INITIAL_WEIGHT_HELP)
@click.option("--warm-start/--no-warm-start", default=True, show_default=True,
              help="Start each system from the same replicate's tuned Baseline weights.")
@decoder_flags_option
@click.option("--filter-test/--no-filter-test", default=True, show_default=True,
              help="Filter the test set's text tables once for every system.")
@detokenize_option
@test_type_option
@click.option("--plot/--no-plot", default=True, show_default=True,
              help="Write mert-curves.png and fig3-rnn-vs-direct.png (paper Fig. 3).")
@model_option("A sentence model (rescore train --parallel); repeat. Adds the rows +rerank and "
              "+RNN+rerank: those systems' n-best lists reranked with the models (see moses rerank).",
              multiple=True, required=False, name="--rerank-model")
@click.option("--rerank-system", "rerank_systems", multiple=True, metavar="NAME",
              help="A system whose n-best lists --rerank-model reranks; repeat. Default: Baseline and "
                   "+RNN, or Baseline and the --system ones.")
@optimizer_option("Moses' optimizer of the reranking weights: mert, or batch MIRA (kbmira).",
                  name="--rerank-optimizer")
@click.option("--rerank-per-word/--no-rerank-per-word", default=True, show_default=True,
              help="The reranked rows also add each model's log p per word (NAMEPerWord=), as moses "
                   "rerank does by default.")
@device_option
@precision_option
@moses_install_options
@reports_errors
def ablation_command(ini_path: Path, rescored_table: Optional[Path], models, new_columns, dev, dev_refs,
                     test, test_refs, out_dir: Path, replicates: int, systems, feature: Optional[str],
                     nbest_size: int, seed: int, optimizer: str, max_iterations: Optional[int],
                     initial_weight: Optional[float], warm_start: bool, decoder_flags,
                     filter_test: bool, detokenize_lang: Optional[str], test_type: str,
                     plot: bool, rerank_models, rerank_systems, rerank_optimizer: str, rerank_per_word: bool,
                     device: str, precision: str, base_dir: Path,
                     moses_dir: Optional[Path], threads: int) -> None:
    """Baseline, +RNN, +WP, +RNN+WP: R tuning replicates each, test scores, results table; with
    --rerank-model also +rerank and +RNN+rerank (or +<system>+rerank for --system's)."""
    from moses_integration.nbest.sentence_models import sentence_features
    from moses_integration.study.ablation import AblationConfig, RerankRows, run_ablation
    from moses_integration.study.score_plots import ablation_scores_figure
    from moses_integration.tables.columns import names_from_models
    from moses_integration.tables.rescored_table import rescored_table as scored_table
    from rescorer.cli.moses_runs import rnn_scorer

    if (rescored_table is None) == (not models):
        raise click.UsageError("give exactly one of --rescored-table and --model")
    install = find_moses(moses_dir)
    scorer = rnn_scorer(device, precision) if models or rerank_models else None
    if models:
        new_columns = new_columns or names_from_models(models)
        table = MosesIni.read(ini_path).phrase_table(feature)
        rescored_table = scored_table(scorer, base_dir / table.args["path"], models,
                                      out_dir / "tables" / "rescored.phrase-table.gz", report=say)
    signature("moses ablation", moses=install.root, ini=ini_path, table=rescored_table, replicates=replicates,
              seed=seed, nbest=nbest_size, optimizer=optimizer,
              start="warm" if warm_start else "cold", initial_weight="scaled" if initial_weight is None else initial_weight,
              decoder_flags=" ".join(decoder_flags) or "none", test=test_type,
              detok=detokenize_lang or "no")
    config = AblationConfig(
        ini_path=ini_path.resolve(), rescored_table=rescored_table.resolve(),
        dev=parallel_set("dev", dev, dev_refs), test=parallel_set("test", test, test_refs),
        out_dir=out_dir.resolve(),
        base_dir=base_dir, feature=feature, new_columns=new_columns, replicates=replicates,
        threads=threads, nbest=nbest_size, seed=seed, batch_mira=optimizer == "batch-mira",
        initial_weight=initial_weight, warm_start=warm_start, decoder_flags=decoder_flags,
        filter_test=filter_test, test_type=test_type, detokenize_lang=detokenize_lang,
        max_iterations=max_iterations, systems=list(systems) or None, plot_curves=plot)
    if rerank_models:
        add_features, names = sentence_features(scorer, rerank_models, per_word=rerank_per_word)
        config.rerank = RerankRows(add_features, names, TUNING_OPTIMIZERS[rerank_optimizer], systems=rerank_systems,
                                   scored_with=[str(Path(m).resolve()) for m in rerank_models])
    elif rerank_systems:
        raise click.UsageError("--rerank-system needs --rerank-model")
    with working_in(out_dir, "ablation directory"):
        run_ablation(config, install, report=say)
    if plot:
        figure = ablation_scores_figure(ini_path, feature, rescored_table, out_dir)
        if figure is not None:
            say(figure.summary())
    click.echo((out_dir / "results.md").read_text(encoding="utf-8"), nl=False)


STUDY_COMMANDS = (plot_scores, ablation_command)
