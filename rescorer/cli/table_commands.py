"""`rescore [run] | train | score`: the main job and its two halves. They parse the options,
build the job's records (rescorer.training.job.TrainJob, rescorer.scoring.job.ScoreJob), call
the library and report; torch is imported inside the commands."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import click

from rescorer.cli.options import (EXISTING_FILE, EXISTING_OR_STDIN, NEW_FILE, SettingUsageError, device_options,
                                  explicit_options, model_option,
                                  force_option, model_options, output_option, reject_option, run_score_options, score_options,
                                  score_resume_option, train_only_options, train_options)
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import Reporter
from rescorer.errors import ModelSettingError
from rescorer.models.precision import check_request
from rescorer.models.settings import MODEL_OPTION_KEYS, ModelOptions
from rescorer.records import SettingError, settings_of
from rescorer.runtime.failure_reports import reports_errors
from rescorer.runtime.settings import RuntimeSettings
from rescorer.scoring.settings import ScoreSettings
from rescorer.training.settings import LmSettings, TrainSettings

__all__ = ["MAIN_COMMANDS"]

lm_options = record_options(LmSettings)
LM_ONLY = tuple(field.name for field, _ in settings_of(LmSettings))


def default_output(table_path: Path) -> Path:
    """NAME.rnn.gz beside the table; a table read from stdin goes to stdout."""
    if str(table_path) == "-":
        return table_path
    name = table_path.name[:-3] if table_path.name.endswith(".gz") else table_path.name
    return table_path.with_name(name + ".rnn.gz")


def default_model(output_path: Path) -> Path:
    name = output_path.name[:-3] if output_path.name.endswith(".gz") else output_path.name
    return output_path.with_name(name + ".model.pt")


@click.command("run")
@click.argument("phrase_table", type=EXISTING_OR_STDIN)
@output_option("Output table ('-' for stdout) [default: NAME.rnn.gz beside the input].")
@model_option("Score with this model instead of training one (a trained model is saved as "
              "OUT.model.pt); repeat for one column per model.", multiple=True, required=False)
@model_options
@train_options
@run_score_options
@device_options
@click.pass_obj
@reports_errors
def run_command(reporter: Reporter, phrase_table: Path, output: Optional[Path],
                models: tuple, **options) -> None:
    """Train on PHRASE_TABLE (unless --model is given), then write it back with the new column."""
    from rescorer.io.path_checks import RunPaths, output_targets, training_targets
    from rescorer.io.table_reader import SKIP_BAD_LINES
    from rescorer.runtime.placement import placed
    from rescorer.scoring.job import output_already_finished

    training = not models
    scoring = score_job_of(phrase_table, output or default_output(phrase_table), models, options)
    output = scoring.output
    if training:
        models = (default_model(output if str(output) != "-" else default_output(phrase_table)),)
        # its scoring options belong in the resumed run too: the whole command line, not train's
        train = dataclasses.replace(train_job_of(phrase_table, None, models[0], options),
                                    resume_hint="the same command with --resume", precision_use="train-then-score")
        if scoring.settings.reject_path:  # the scoring pass writes the rejects; training skips them
            train = dataclasses.replace(train, reject=SKIP_BAD_LINES)
    else:
        refuse_training_options(explicit_options())
    s = scoring.settings
    writes = output_targets(output, s.reject_path)
    if training:
        writes += training_targets(models[0], train.settings.cache_dir, train.settings.resume)
    reads = [("phrase table", phrase_table), *(("model", None if training else path) for path in models),
             ("source corpus", options["src_corpus"]), ("target corpus", options["tgt_corpus"])]
    with placed(reporter, scoring.runtime, training) as placement:
        if output_already_finished(reporter, placement.ranks, output, s.reject_path, s.resume):
            return
        with placement.ranks.main_only(RunPaths(reads, writes, force=s.force), "checking the paths"):
            run_jobs(reporter, placement, train if training else None,
                     dataclasses.replace(scoring, model_paths=models))


def run_jobs(reporter: Reporter, placement, train, scoring) -> None:
    """`rescore TABLE`'s work once its paths are checked: train (unless --model), then score."""

    from rescorer.scoring.job import check_partial_output, score_job
    from rescorer.training.job import train_job

    s = scoring.settings
    check_partial_output(placement.ranks, scoring.output, s.resume, s.force)
    if train is not None:
        with usage_errors():
            train_job(train, reporter, placement)
        scoring = dataclasses.replace(scoring, settings=dataclasses.replace(s, models_retrained=s.resume))
    try:
        with usage_errors():
            score_job(scoring, reporter, placement)
    except KeyboardInterrupt as interrupt:
        if train is not None:
            model = train.model_path
            interrupt.note = (f"the model {model} is saved; {getattr(interrupt, 'note', '')}"
                              f"; `rescore score {scoring.table_path} --model {model}` scores "
                              f"without training again")
        raise


@click.command("train")
@click.argument("phrase_table", type=EXISTING_OR_STDIN, required=False)
@click.option("--parallel", nargs=2, type=EXISTING_FILE, metavar="SRC TGT", default=None,
              help="Train on a parallel corpus instead of a phrase table: tokenized source and "
                   "target text, one sentence per line (gzip allowed), as Moses trains on; for "
                   "sentence models that rerank n-best lists.")
@click.option("--lm", "lm", type=EXISTING_OR_STDIN, metavar="TARGET_TEXT", default=None,
              help="Train the paper's target language model (CSLM, a feed-forward n-gram network) on "
                   "tokenized target text, one sentence a line (gzip allowed, '-' for stdin); --preset "
                   "paper gives the paper's sizes.")
@output_option("Model file to write.", type=NEW_FILE, required=True)
@model_options
@train_only_options
@lm_options
@reject_option
@force_option("Replace an existing model (and its checkpoint).")
@device_options
@click.pass_obj
@reports_errors
def train_command(reporter: Reporter, phrase_table: Optional[Path], parallel: Optional[tuple],
                  lm: Optional[Path], output: Path, reject_path: Optional[Path], force: bool, **options) -> None:
    """Train a model on the unique phrase pairs of PHRASE_TABLE, on the sentence pairs of a
    parallel corpus (--parallel SRC TGT), or a target language model on text (--lm TARGET_TEXT)."""
    from rescorer.io.atomic_output import AtomicOutput, committed_together
    from rescorer.io.path_checks import RunPaths
    from rescorer.runtime.placement import placed
    from rescorer.training.job import train_job

    lm_given = sorted(name for name in explicit_options() if name in LM_ONLY)
    if lm is None and lm_given:
        raise click.UsageError(f"{', '.join('--' + name.replace('_', '-') for name in lm_given)}: only with "
                               f"--lm (a language model)")
    job = train_job_of(phrase_table, parallel, output, options, lm)
    with usage_errors():
        check_request(job.runtime.precision, job.precision_use)
    reads, writes = training_paths(job, reject_path)
    with placed(reporter, job.runtime) as placement, \
            placement.ranks.main_only(RunPaths(reads, writes, force=force), "checking the paths"):
        rejects = (AtomicOutput(reject_path, force=force, only_if_written=True)
                   if reject_path and placement.ranks.is_main else None)
        with committed_together(rejects), usage_errors():
            train_job(dataclasses.replace(job, reject=rejects), reporter, placement)
        if rejects is not None and rejects.lines_written:
            reporter.say(f"{rejects.lines_written} bad lines rejected to {reject_path}")


def training_paths(job, reject_path: Optional[Path]) -> tuple[list, list]:
    """What a training run reads and writes, for the path checks: the source's files, the model,
    its checkpoint, the reject file and the pair cache (an LM has neither of the last two)."""
    from rescorer.io.path_checks import output_targets, training_targets
    from rescorer.training.lm_job import LmText

    source, s = job.source, job.settings
    model, checkpoint, cache = training_targets(job.model_path, s.cache_dir, s.resume)
    if isinstance(source, LmText):
        return [("language model text", source.path)], [model, checkpoint]
    writes = [*output_targets(None, reject_path), model, checkpoint, cache]
    if source.kind == "corpus":
        return [("source side of the corpus", source.src_path), ("target side of the corpus", source.tgt_path),
                ("validation source", s.valid_src), ("validation target", s.valid_tgt)], writes
    return [("phrase table", source.path), ("source corpus", s.src_corpus), ("target corpus", s.tgt_corpus)], writes


@click.command("score")
@click.argument("phrase_table", type=EXISTING_OR_STDIN)
@model_option("Model file; repeat it for one column per model, in the order given.", multiple=True)
@output_option("Output table ('-' for stdout) [default: NAME.rnn.gz beside the input].")
@score_resume_option
@score_options
@device_options
@click.pass_obj
@reports_errors
def score_command(reporter: Reporter, phrase_table: Path, models: tuple,
                  output: Optional[Path], **options) -> None:
    """Write PHRASE_TABLE back with each model's log p(target | source) (log p(source | target) for
    an inverse model) appended to every line's scores (then the word penalty with --unk-penalty)."""
    from rescorer.io.path_checks import RunPaths, output_targets
    from rescorer.runtime.placement import placed
    from rescorer.scoring.job import check_partial_output, output_already_finished, score_job

    job = score_job_of(phrase_table, output or default_output(phrase_table), models, options)
    s = job.settings
    reads = [("phrase table", phrase_table), *(("model", path) for path in models)]
    with placed(reporter, job.runtime, training=False) as placement:
        if output_already_finished(reporter, placement.ranks, job.output, s.reject_path, s.resume):
            return
        with placement.ranks.main_only(RunPaths(reads, output_targets(job.output, s.reject_path),
                                                force=s.force), "checking the paths"):
            check_partial_output(placement.ranks, job.output, s.resume, s.force)
            with usage_errors():
                score_job(job, reporter, placement)


def score_job_of(phrase_table: Path, output: Path, model_paths: tuple, options: dict):
    """The ScoreJob of `rescore score`'s (or `rescore TABLE`'s) options."""
    from rescorer.scoring.job import ScoreJob, check_ensemble_size

    with usage_errors():
        check_ensemble_size(options["ensemble"], len(model_paths))
    return ScoreJob(phrase_table, output, tuple(model_paths), record_from(ScoreSettings, options),
                    record_from(RuntimeSettings, options))


def train_job_of(phrase_table: Optional[Path], parallel: Optional[tuple], model_path: Path, options: dict,
                 lm: Optional[Path] = None):
    """The TrainJob of `rescore train`'s (or `rescore TABLE`'s) options: of a phrase table or a
    parallel corpus, or with `lm` of a CSLM's text."""
    from rescorer.training.job import TrainJob
    from rescorer.training.lm_job import lm_training_source
    from rescorer.training.pair_job import training_source

    explicit = frozenset(explicit_options())
    settings = record_from(TrainSettings, options)
    with usage_errors():
        source, settings = (training_source(phrase_table, parallel, settings, explicit) if lm is None
                            else lm_training_source(lm, phrase_table, parallel, settings, explicit))
    return TrainJob(source, model_path, record_from(ModelOptions, options), settings,
                    record_from(RuntimeSettings, options), explicit,
                    lm_settings=record_from(LmSettings, options) if lm is not None else None)


def refuse_training_options(explicit: set) -> None:
    """With --model nothing is trained: an option that describes the model to train (or how to
    train it) would be silently ignored, so it is refused in one line instead."""
    scoring = {field.name for field, _ in settings_of(ScoreSettings)}
    training = (*MODEL_OPTION_KEYS, *(field.name for field, _ in settings_of(TrainSettings)))
    ignored = [name for name in training if name in explicit and name not in scoring]
    if ignored:
        params = {param.name: param for param in click.get_current_context().command.params}
        shown = ", ".join(params[name].opts[-1] for name in ignored)
        raise click.UsageError(f"{shown}: with --model nothing is trained, and the model's own "
                               f"settings are used; drop {'them' if len(ignored) > 1 else 'it'}, "
                               f"or drop --model to train a new model")


@contextmanager
def usage_errors():
    """Settings that do not go together, found by the library, are usage errors (exit 2)."""
    try:
        yield
    except ModelSettingError as error:
        raise SettingUsageError(str(error)) from None
    except SettingError as error:
        raise click.UsageError(str(error)) from None


MAIN_COMMANDS = (run_command, train_command, score_command)
