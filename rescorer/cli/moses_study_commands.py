"""`rescore moses ablation | plot-scores`: the ablation study (systems x replicates, tuned,
evaluated, optionally reranked) and the paper's Fig. 3. Each parses, builds the record, calls
moses_integration and reports; scoring goes through the one in-process scorer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.moses_install import find_moses
from moses_integration.settings import AblationSettings, ScorePlotSettings
from rescorer.cli.moses_runs import model_placement, working_in
from rescorer.cli.options import ANY_PATH, EXISTING_FILE, force_option, output_option
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.io.score_format import column_index
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["STUDY_COMMANDS"]


@click.command("plot-scores")
@click.argument("table_path", metavar="RESCORED_TABLE", type=EXISTING_FILE)
@output_option("PNG to write.", type=ANY_PATH, required=True)
@record_options(ScorePlotSettings)
@force_option("Overwrite the output.")
@reports_errors
def plot_scores(table_path: Path, output: Path, force: bool, **options) -> None:
    """Scatter the RNN score against the table's p(f|e) (paper Fig. 3) and p(e|f) for a sample
    of pairs, with Spearman's rho of each."""
    from moses_integration.study.score_plots import plot_rnn_vs_table
    from rescorer.analysis.figures import check_figure_path

    settings = record_from(ScorePlotSettings, options)
    with RunPaths([("rescored table", table_path)], [Target(output, "figure")], force=force):
        check_figure_path(output)
        result = plot_rnn_vs_table(table_path, column_index(settings.rnn_column), output, settings.sample_size,
                                   settings.seed, force)
    say(f"wrote {output}: {result.summary()}")


@click.command("ablation")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@record_options(AblationSettings)
@reports_errors
def ablation_command(**options) -> None:
    """Baseline, +RNN, +WP, +RNN+WP: R tuning replicates each, test scores, results table; with
    --rerank-model also +rerank and +RNN+rerank (or +<system>+rerank for --system's); with --lm
    the paper's +CSLM, +CSLM+RNN and +CSLM+RNN+WP (n-best reranking); with --nplm the same with
    the CSLM in decoding, +CSLM(dec), +CSLM(dec)+RNN and +CSLM(dec)+RNN+WP."""
    from moses_integration.nbest.sentence_models import sentence_features
    from moses_integration.study.ablation import run_ablation
    from moses_integration.study.score_plots import ablation_scores_figure
    from moses_integration.tables.columns import names_from_models
    from moses_integration.tables.rescored_table import rescored_table as scored_table
    from rescorer.cli.moses_runs import lm_scorer, rnn_scorer

    settings = record_from(AblationSettings, options)
    install = find_moses(settings.moses_dir)
    scorer = rnn_scorer(settings.device, settings.precision) if settings.models or settings.rerank_models else None
    if settings.models:  # the ini's table scored here, its new columns named after the models
        table = MosesIni.read(settings.ini_path).phrase_table(settings.feature)
        rescored = scored_table(scorer, settings.base_dir / table.args["path"], settings.models,
                                settings.out_dir / "tables" / "rescored.phrase-table.gz", report=say)
        settings = replace(settings, rescored_table=rescored, models=(),
                           new_columns=settings.new_columns or names_from_models(settings.models))
    signature("moses ablation", moses=install.root, ini=settings.ini_path, table=settings.rescored_table,
              replicates=settings.replicates, seed=settings.seed, nbest=settings.nbest_size,
              optimizer=settings.optimizer, start="warm" if settings.warm_start else "cold",
              initial_weight="scaled" if settings.initial_weight is None else settings.initial_weight,
              decoder_flags=" ".join(settings.decoder_flags) or "none", test=settings.test_type,
              detok=settings.detokenize_lang or "no", **({"nplm": settings.nplm_path} if settings.nplm_path else {}),
              **(model_placement(settings.device, settings.precision) if scorer is not None
                 else {"device": "-", "precision": "-"}))
    scoring = {"precision": settings.precision}
    rerank = (sentence_features(scorer, settings.rerank_models, settings.rerank_per_word, scoring=scoring)
              if settings.rerank_models else None)
    cslm = (sentence_features(None, (), settings.rerank_per_word, lm_scorer(settings.device, settings.precision),
                              settings.lms, scoring=scoring) if settings.lms else None)
    with working_in(settings.out_dir, "ablation directory"):
        run_ablation(settings, install, report=say, rerank=rerank, cslm=cslm)
    if settings.plot:
        figure = ablation_scores_figure(settings.ini_path, settings.feature, settings.rescored_table, settings.out_dir)
        if figure is not None:
            say(figure.summary())
    click.echo((settings.out_dir / "results.md").read_text(encoding="utf-8"), nl=False)


STUDY_COMMANDS = (plot_scores, ablation_command)
