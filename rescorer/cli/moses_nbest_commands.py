"""`rescore moses rescore-nbest | rerank`: the RNN scores as n-best features, and n-best lists
reranked with them. Both hand moses_integration the one in-process scorer (moses_runs.rnn_scorer)."""

from __future__ import annotations

from pathlib import Path

import click

from moses_integration.ini.moses_install import find_moses
from rescorer.cli.moses_runs import model_placement, working_in
from moses_integration.settings import OPTIMIZER_PROGRAMS, RerankSettings
from rescorer.cli.options import (EXISTING_FILE, device_option, force_option, model_option,
                                  output_option, parallel_set, precision_option)
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import bar, say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["NBEST_COMMANDS"]


@click.command("rescore-nbest")
@click.argument("nbest_path", metavar="NBEST", type=EXISTING_FILE)
@click.option("--input", "input_path", type=EXISTING_FILE, required=True,
              help="The decoder's input (tokenized, one sentence per line, gzip allowed); line i is "
                   "sentence id i.")
@model_option("The model whose log p becomes the feature: a sentence model (rescore train --parallel), "
              "or a phrase-table model with --mode phrase.", required=False)
@record_options(RerankSettings, only=("lms",))
@output_option("Output n-best list (gzipped if it ends in .gz; '-': stdout).", required=True)
@click.option("--feature-name", default="RNN0", show_default=True,
              help="The --model feature's name in the list (NAME= value), as Moses' extractor and mert read it.")
@click.option("--mode", type=click.Choice(["auto", "sentence", "phrase"]), default="auto",
              show_default=True, help="phrase: sum over the segmentation's phrase pairs.")
@click.option("--per-word/--no-per-word", "per_word", default=False, show_default=True,
              help="With --lm: also add each feature's log p per word of the side its model predicts "
                   "(NAMEPerWord=).")
@device_option
@precision_option
@force_option("Overwrite the output.")
@reports_errors
def rescore_nbest_command(nbest_path: Path, input_path: Path, model: Path, lms: tuple, output: Path,
                          feature_name: str, mode: str, per_word: bool, device: str, precision: str,
                          force: bool) -> None:
    """Add the RNN log-probability (--model) and the CSLM's (--lm) as features to every line of a
    Moses n-best list."""
    from moses_integration.nbest.language_check import sentence_model_checks
    from moses_integration.nbest.sentence_models import lm_feature_names
    from moses_integration.scorer import pair_scorer
    from rescorer.cli.moses_runs import rnn_scorer

    if model is None and not lms:
        raise click.UsageError("give the model whose log p becomes a feature: --model, --lm or both")
    if lms and mode == "phrase":
        raise click.UsageError("--lm scores whole hypotheses: --mode phrase applies to --model alone")
    if per_word and not lms:
        raise click.UsageError("--per-word applies with --lm (a sentence model's per-word form: moses rerank)")
    reads = [("n-best list", nbest_path), ("source", input_path), ("model", model),
             *(("language model", lm) for lm in lms)]
    names = ([feature_name] if model is not None else []) + lm_feature_names(len(lms))
    features = [added for name in names for added in ([name, name + "PerWord"] if per_word else [name])]
    signature("moses rescore-nbest", nbest=nbest_path, input=input_path,
              models=",".join(str(path) for path in (model, *lms) if path is not None), features=",".join(features),
              mode=mode, **model_placement(device, precision))

    def lines_bar(total: int):
        return bar(total=total, desc="scoring the n-best list", unit=" lines", unit_scale=True)

    with RunPaths(reads, [Target(output, "output", streamable=True)], force=force):
        if not lms:
            from moses_integration.nbest.rnn_features import rescore_nbest

            scorer = rnn_scorer(device, precision)
            scored = rescore_nbest(nbest_path, output, input_path, pair_scorer(scorer, model), feature_name, mode,
                                   force=force, checks=sentence_model_checks(scorer, model), bar=lines_bar)
        else:
            scored = _with_lm_features(nbest_path, input_path, model, lms, output, feature_name, per_word,
                                       device, precision, force, lines_bar)
    say(scored.report(output))


def _with_lm_features(nbest_path: Path, input_path: Path, model, lms: tuple, output: Path, feature_name: str,
                      per_word: bool, device: str, precision: str, force: bool, lines_bar):
    """Every feature of one pass over the list: --model's whole-hypothesis log p, then each CSLM's."""
    from moses_integration.nbest.rnn_features import add_sentence_features
    from moses_integration.nbest.sentence_models import lm_feature_names, lm_sentence_model, rnn_sentence_model
    from rescorer.cli.moses_runs import lm_scorer, rnn_scorer

    models = []
    if model is not None:
        models.append(rnn_sentence_model(feature_name, rnn_scorer(device, precision), model))
    language_models = lm_scorer(device, precision)
    models += [lm_sentence_model(name, language_models, Path(lm)) for name, lm in zip(lm_feature_names(len(lms)), lms)]
    return add_sentence_features(nbest_path, output, input_path, models, per_word=per_word, force=force,
                                 bar=lines_bar)


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
    config = rerank_config(settings)
    optimizer = config.optimizer  # the program: mert or kbmira
    install, config.tuner = rerank_tuner(settings, optimizer)
    if install is not None:
        install.require(binaries=(() if config.tuner == "numpy" else ("extractor", optimizer))
                        + (("moses",) if settings.decodes else ()),
                        scripts=("training/filter-model-given-input.pl",)
                        if settings.decodes and settings.filter_tables else ())
    add_features, config.new_features = sentence_features(
        rnn_scorer(settings.device, settings.precision) if settings.models else None, settings.models,
        settings.per_word, lm_scorer(settings.device, settings.precision) if settings.lms else None, settings.lms)
    signature("moses rerank", moses=install.root if install else "-", tuner=config.tuner, ini=settings.ini_path,
              models=",".join(m.name for m in (*settings.models, *settings.lms)),
              features=",".join(config.new_features), optimizer=optimizer, seeds=settings.seeds, seed=settings.seed,
              nbest=settings.nbest_size, test=settings.test_type, references=len(config.test.ref_paths),
              **model_placement(settings.device, settings.precision))
    with working_in(settings.out_dir, "reranking directory"):
        run_rerank(config, install, add_features, report=say)
    click.echo((settings.out_dir / "results.md").read_text(encoding="utf-8"), nl=False)


def rerank_tuner(settings: RerankSettings, optimizer: str):
    """(the Moses install, or None where none is needed and none is found; "moses" or "numpy"):
    numpy when asked, or under auto when the lists are given and Moses' extractor or optimizer
    is not found."""
    from moses_integration.errors import MosesNotFoundError

    if settings.tuner == "numpy" and optimizer != "mert":
        raise click.UsageError("--tuner numpy runs MERT only; use --optimizer mert or --tuner moses")
    try:
        install = find_moses(settings.moses_dir)
    except MosesNotFoundError:
        if settings.decodes or settings.tuner == "moses" or optimizer != "mert":
            raise
        return None, "numpy"
    if settings.tuner != "auto":
        return install, settings.tuner
    lacking = install.missing(binaries=("extractor", optimizer), scripts=())
    return install, "numpy" if lacking and not settings.decodes and optimizer == "mert" else "moses"


def rerank_config(settings: RerankSettings):
    """The library's RerankConfig of the command's settings (paths given on the command line
    resolved against the cwd; the program of the optimizer; the seeds as a range)."""
    from moses_integration.nbest.reranking import RerankConfig

    return RerankConfig(
        dev_nbest=settings.dev_nbest, dev=parallel_set("dev", settings.dev, settings.dev_refs),
        test_nbest=settings.test_nbest, test=parallel_set("test", settings.test, settings.test_refs),
        ini_path=settings.ini_path.resolve(), out_dir=settings.out_dir.resolve(), nbest_size=settings.nbest_size,
        base_dir=settings.base_dir, threads=settings.threads, decoder_flags=settings.decoder_flags,
        filter_tables=settings.filter_tables, optimizer=OPTIMIZER_PROGRAMS[settings.optimizer],
        seeds=tuple(range(settings.seed, settings.seed + settings.seeds)),
        initial_weight=0.0 if settings.initial_weight is None else settings.initial_weight,
        test_type=settings.test_type, detokenize_lang=settings.detokenize_lang,
        scored_with=[str(Path(model).resolve()) for model in (*settings.models, *settings.lms)],
        scoring={"precision": settings.precision})


NBEST_COMMANDS = (rescore_nbest_command, rerank_command)
