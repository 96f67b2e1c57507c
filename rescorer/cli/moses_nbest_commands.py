"""`rescore moses rescore-nbest | rerank`: the RNN scores as n-best features, and n-best lists
reranked with them. Both hand moses_integration the one in-process scorer (moses_runs.rnn_scorer)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from moses_integration.ini.moses_install import find_moses
from rescorer.cli.moses_runs import model_placement, working_in
from moses_integration.settings import NUMPY_OPTIMIZERS, NbestFeatureSettings, RerankSettings
from rescorer.cli.options import EXISTING_FILE, force_option, output_option
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import bar, say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["NBEST_COMMANDS"]


@click.command("rescore-nbest")
@click.argument("nbest_path", metavar="NBEST", type=EXISTING_FILE)
@record_options(NbestFeatureSettings, only=("input_path", "model", "lms"))
@output_option("Output n-best list (gzipped if it ends in .gz; '-': stdout).", required=True)
@record_options(NbestFeatureSettings, only=("feature_name", "mode", "per_word", "device", "precision"))
@force_option("Overwrite the output.")
@reports_errors
def rescore_nbest_command(nbest_path: Path, output: Path, force: bool, **options) -> None:
    """Add the RNN log-probability (--model) and the CSLM's (--lm) as features to every line of a
    Moses n-best list."""
    from moses_integration.nbest.sentence_models import lm_feature_names, rnn_nbest_model
    from rescorer.cli.moses_runs import rnn_scorer

    settings = record_from(NbestFeatureSettings, options)
    model, lms = settings.model, settings.lms
    reads = [("n-best list", nbest_path), ("source", settings.input_path), ("model", model),
             *(("language model", lm) for lm in lms)]
    names = ([settings.feature_name] if model is not None else []) + lm_feature_names(len(lms))
    features = [added for name in names for added in ([name, name + "PerWord"] if settings.per_word else [name])]
    signature("moses rescore-nbest", nbest=nbest_path, input=settings.input_path,
              models=",".join(str(path) for path in (model, *lms) if path is not None), features=",".join(features),
              mode=settings.mode, **model_placement(settings.device, settings.precision))

    def lines_bar(total: int):
        return bar(total=total, desc="scoring the n-best list", unit=" lines", unit_scale=True)

    with RunPaths(reads, [Target(output, "output", streamable=True)], force=force):
        if not lms:
            from moses_integration.nbest.rnn_features import rescore_nbest

            feature = rnn_nbest_model(settings.feature_name, rnn_scorer(settings.device, settings.precision), model)
            scored = rescore_nbest(nbest_path, output, settings.input_path, feature, settings.mode, force=force,
                                   bar=lines_bar)
        else:
            scored = _with_lm_features(nbest_path, output, settings, force, lines_bar)
    say(scored.report(output))


def _with_lm_features(nbest_path: Path, output: Path, settings: NbestFeatureSettings, force: bool, lines_bar):
    """Every feature of one pass over the list: --model's whole-hypothesis log p, then each CSLM's."""
    from moses_integration.nbest.rnn_features import add_sentence_features
    from moses_integration.nbest.sentence_models import lm_feature_names, lm_nbest_model, rnn_nbest_model
    from rescorer.cli.moses_runs import lm_scorer, rnn_scorer

    models = []
    if settings.model is not None:
        models.append(rnn_nbest_model(settings.feature_name, rnn_scorer(settings.device, settings.precision),
                                      settings.model))
    language_models = lm_scorer(settings.device, settings.precision)
    models += [lm_nbest_model(name, language_models, Path(lm))
               for name, lm in zip(lm_feature_names(len(settings.lms)), settings.lms)]
    return add_sentence_features(nbest_path, output, settings.input_path, models, per_word=settings.per_word,
                                 force=force, bar=lines_bar)


@click.command("rerank")
@record_options(RerankSettings)
@reports_errors
def rerank_command(**options) -> None:
    """Rerank a tuned system's dev and test n-best lists with sentence models' scores: tune the
    reranking weights on dev with mert or kbmira, rerank test, compare with the 1-best."""
    from moses_integration.nbest.reranking import run_rerank
    from moses_integration.nbest.sentence_models import sentence_features
    from rescorer.cli.moses_runs import lm_scorer, rnn_scorer

    settings = record_from(RerankSettings, options)
    if not settings.models and not settings.lms:
        raise click.UsageError("give the features to rerank with: --model (a sentence model), --lm (a target "
                               "language model) or both")
    optimizer = settings.optimizer_program
    install, tuner = rerank_tuner(settings, optimizer)
    settings = replace(settings, tuner=tuner)
    if install is not None:
        install.require(binaries=(() if tuner == "numpy" else ("extractor", optimizer))
                        + (("moses",) if settings.decodes else ()),
                        scripts=("training/filter-model-given-input.pl",)
                        if settings.decodes and settings.filter_tables else ())
    features = sentence_features(
        rnn_scorer(settings.device, settings.precision) if settings.models else None, settings.models,
        settings.per_word, lm_scorer(settings.device, settings.precision) if settings.lms else None, settings.lms,
        scoring={"precision": settings.precision})
    signature("moses rerank", moses=install.root if install else "-", tuner=tuner, ini=settings.ini_path,
              models=",".join(m.name for m in (*settings.models, *settings.lms)),
              features=",".join(features.names), optimizer=optimizer, seeds=settings.seeds, seed=settings.seed,
              nbest=settings.nbest_size, test=settings.test_type, references=len(settings.test_set.ref_paths),
              **model_placement(settings.device, settings.precision))
    with working_in(settings.out_dir, "reranking directory"):
        run_rerank(settings, install, features, report=say)
    click.echo((settings.out_dir / "results.md").read_text(encoding="utf-8"), nl=False)


def rerank_tuner(settings: RerankSettings, optimizer: str):
    """(the Moses install, or None where none is needed and none is found; "moses" or "numpy"):
    numpy when asked, for PRO always, or under auto when the lists are given and Moses' extractor
    or optimizer is not found (the record refuses the optimizers a tuner cannot run)."""
    from moses_integration.errors import MosesNotFoundError

    try:
        install = find_moses(settings.moses_dir)
    except MosesNotFoundError:
        if settings.decodes or settings.tuner == "moses" or settings.optimizer not in NUMPY_OPTIMIZERS:
            raise
        return None, "numpy"
    if optimizer == "pro":
        return install, "numpy"
    if settings.tuner != "auto":
        return install, settings.tuner
    lacking = install.missing(binaries=("extractor", optimizer), scripts=())
    return install, "numpy" if lacking and not settings.decodes and optimizer == "mert" else "moses"


NBEST_COMMANDS = (rescore_nbest_command, rerank_command)
