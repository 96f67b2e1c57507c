"""`rescore moses add-feature | preflight | tune | evaluate`: put the rescored table into a
moses.ini, check a system, tune it, evaluate tuned systems. Each parses, builds the job's
record, calls moses_integration and reports."""

from __future__ import annotations

from pathlib import Path

import click

from moses_integration.ini.moses_install import find_moses
from moses_integration.preflight import run_preflight
from rescorer.cli.moses_runs import working_in
from moses_integration.settings import AddFeatureSettings, EvaluationSettings, PreflightSettings, TuningSettings
from rescorer.cli.options import ANY_PATH, EXISTING_FILE, force_option, output_option, parallel_set
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["SYSTEM_COMMANDS"]


@click.command("add-feature")
@click.argument("ini_path", metavar="MOSES_INI", type=EXISTING_FILE)
@record_options(AddFeatureSettings, only=("table_path", "nplm_path"))
@output_option("moses.ini to write.", type=ANY_PATH, required=True)
@record_options(AddFeatureSettings, only=("feature", "initial_weight", "new_columns"))
@force_option("Overwrite the output.")
@record_options(AddFeatureSettings, only=("base_dir", "moses_dir", "threads"))
@reports_errors
def add_feature(output: Path, force: bool, **options) -> None:
    """Point MOSES_INI's phrase table at the rescored table and add the new columns' weights, or
    (--nplm) add a NeuralLM feature line and its weight.

    Nothing else in the file changes. A PhraseDictionaryCompact table is re-binarized."""
    settings = record_from(AddFeatureSettings, options)
    if settings.nplm_path is not None:
        from moses_integration.ini.neural_lm import NeuralLmJob, add_neural_lm

        job = NeuralLmJob(ini_path=settings.ini_path, nplm_path=settings.nplm_path, out_path=output,
                          base_dir=settings.base_dir, name=settings.feature, initial_weight=settings.initial_weight)
        with RunPaths([("moses.ini", settings.ini_path), ("NPLM model", settings.nplm_path)],
                      [Target(output, "moses.ini output")], force=force):
            say(add_neural_lm(job))
        return
    from moses_integration.tables.new_columns import AddFeatureJob
    from moses_integration.tables.new_columns import add_feature as add_columns

    job = AddFeatureJob(ini_path=settings.ini_path, table_path=settings.table_path, out_path=output,
                        base_dir=settings.base_dir, feature=settings.feature, initial_weight=settings.initial_weight,
                        new_columns=settings.new_columns, moses_dir=settings.moses_dir, threads=settings.threads)
    with RunPaths([("moses.ini", settings.ini_path), ("rescored table", settings.table_path)],
                  [Target(output, "moses.ini output")], force=force):
        say(add_columns(job).summary())


@click.command("preflight")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@record_options(PreflightSettings)
@reports_errors
def preflight(**options) -> None:
    """Check in seconds what would fail a long run; one line per problem, exit 1 if any."""
    settings = record_from(PreflightSettings, options)
    data = [data_set for data_set in (parallel_set("dev", settings.dev, settings.dev_refs),
                                      parallel_set("test", settings.test, settings.test_refs)) if data_set is not None]
    problems = run_preflight(settings.ini_path, settings.base_dir, settings.moses_dir, data, settings.check_install)
    for problem in problems:
        say(f"FAIL {problem}")
    if problems:
        raise click.ClickException(f"preflight: {len(problems)} problem(s)")
    say("preflight: all checks passed")


@click.command("tune")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@record_options(TuningSettings)
@reports_errors
def tune_command(**options) -> None:
    """Tune MOSES_INI's weights with mert-moses.pl; prints the tuned moses.ini path."""
    from moses_integration.tuning.mert_moses import tune

    settings = record_from(TuningSettings, options)
    install = find_moses(settings.moses_dir)
    install.require()  # before the work directory is made
    signature("moses tune", moses=install.root, ini=settings.ini_path, dev=",".join(map(str, settings.dev)),
              references=len(settings.dev_set.ref_paths), nbest=settings.nbest_size,
              seed=settings.seed, optimizer=settings.optimizer, moses_threads=settings.threads)
    with working_in(settings.work_dir, "mert-moses.pl working directory"):
        result = tune(install, settings, progress=lambda i, b: say(
            f"iteration {i}: dev BLEU {'?' if b is None else f'{b:.2f}'}"))
    for warning in result.warnings:
        say(f"warning: {warning}")
    say(f"tuned after {result.iterations} iteration(s), stopped by {result.stopped_by}, dev BLEU "
        f"{'?' if result.dev_bleu is None else f'{result.dev_bleu:.2f}'}")
    click.echo(str(result.ini_path))


def named_systems(items) -> list[tuple[str, Path]]:
    """--system NAME=MOSES_INI, each."""
    named = []
    for item in items:
        name, sep, ini = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=MOSES_INI, found {item!r}", param_hint="--system")
        named.append((name, Path(ini)))
    return named


@click.command("evaluate")
@record_options(EvaluationSettings)
@reports_errors
def evaluate_command(**options) -> None:
    """Decode the test set with each system, score BLEU and chrF against every reference, test
    against the baseline."""
    from moses_integration.evaluation.system_comparison import EvaluationJob, evaluate_systems

    settings = record_from(EvaluationSettings, options)
    systems = named_systems(settings.systems)
    test_set = parallel_set("test", settings.test, settings.test_refs)
    install = find_moses(settings.moses_dir)
    install.require(binaries=("moses",), scripts=())  # before the output directory is made
    job = EvaluationJob(systems=systems, src_path=test_set.src_path, ref_paths=test_set.ref_paths,
                        out_dir=settings.out_dir, base_dir=settings.base_dir, threads=settings.threads,
                        decoder_flags=settings.decoder_flags, detokenize_lang=settings.detokenize_lang,
                        test_type=settings.test_type)
    with working_in(settings.out_dir, "evaluation directory"):
        scores = evaluate_systems(job, install)
    for row in scores.rows():
        click.echo(row)
    say(f"signature: {scores.signature}; {len(test_set.ref_paths)} reference(s)")


SYSTEM_COMMANDS = (add_feature, preflight, tune_command, evaluate_command)
