"""`rescore moses add-feature | preflight | tune | evaluate`: put the rescored table into a
moses.ini, check a system, tune it, evaluate tuned systems. Each parses, builds the job's
record, calls moses_integration and reports."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from moses_integration.ini.moses_install import find_moses
from moses_integration.preflight import run_preflight
from rescorer.cli.moses_runs import working_in
from rescorer.cli.options import (ANY_PATH, EXISTING_FILE, base_dir_option, decoder_flags_option,
                                  detokenize_option, dev_option, feature_option, force_option, initial_weight_option,
                                  max_iterations_option, moses_dir_option, moses_install_options, nbest_size_option,
                                  new_columns_option, optimizer_option, output_option, parallel_set, seed_option,
                                  test_option, test_type_option)
from rescorer.cli.reporting import say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["SYSTEM_COMMANDS", "INITIAL_WEIGHT_HELP"]

INITIAL_WEIGHT_HELP = ("Starting weight of every new column. Default: scaled to the table, so that each new "
                       "column starts with the weight of an average phrase-table column (see docs/moses.md, "
                       "Starting weights).")


@click.command("add-feature")
@click.argument("ini_path", metavar="MOSES_INI", type=EXISTING_FILE)
@click.option("--table", "table_path", type=EXISTING_FILE, required=True,
              help="The rescored phrase table (text, from `rescore score`).")
@output_option("moses.ini to write.", type=ANY_PATH, required=True)
@feature_option()
@initial_weight_option(INITIAL_WEIGHT_HELP)
@new_columns_option
@force_option("Overwrite the output.")
@moses_install_options
@reports_errors
def add_feature(ini_path: Path, table_path: Path, output: Path, feature: Optional[str],
                initial_weight: Optional[float], new_columns: Optional[tuple], force: bool,
                base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Point MOSES_INI's phrase table at the rescored table and add the new columns' weights.

    Nothing else in the file changes. A PhraseDictionaryCompact table is re-binarized."""
    from moses_integration.tables.new_columns import AddFeatureJob
    from moses_integration.tables.new_columns import add_feature as add_columns

    job = AddFeatureJob(ini_path=ini_path, table_path=table_path, out_path=output, base_dir=base_dir,
                        feature=feature, initial_weight=initial_weight, new_columns=new_columns,
                        moses_dir=moses_dir, threads=threads)
    with RunPaths([("moses.ini", ini_path), ("rescored table", table_path)],
                  [Target(output, "moses.ini output")], force=force):
        say(add_columns(job).summary())


@click.command("preflight")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@dev_option(required=False)
@test_option(required=False)
@click.option("--check-install/--no-check-install", default=True, show_default=True,
              help="Also check the Moses installation.")
@base_dir_option
@moses_dir_option
@reports_errors
def preflight(ini_path: Path, dev, dev_refs, test, test_refs, check_install: bool, base_dir: Path,
              moses_dir: Optional[Path]) -> None:
    """Check in seconds what would fail a long run; one line per problem, exit 1 if any."""
    data = [data_set for data_set in (parallel_set("dev", dev, dev_refs), parallel_set("test", test, test_refs))
            if data_set is not None]
    problems = run_preflight(ini_path, base_dir, moses_dir, data, check_install)
    for problem in problems:
        say(f"FAIL {problem}")
    if problems:
        raise click.ClickException(f"preflight: {len(problems)} problem(s)")
    say("preflight: all checks passed")


@click.command("tune")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@dev_option()
@click.option("--work-dir", type=ANY_PATH, required=True, help="mert-moses.pl working directory.")
@nbest_size_option()
@seed_option("Optimizer seed (mert/kbmira -r).", default=None)
@optimizer_option("Moses' optimizer of the weights: MERT, or batch MIRA (mert-moses.pl --batch-mira).")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Continue an interrupted run in --work-dir; --no-resume starts it over.")
@max_iterations_option
@decoder_flags_option
@moses_install_options
@reports_errors
def tune_command(ini_path: Path, dev, dev_refs, work_dir: Path, nbest_size: int, seed: Optional[int],
                 optimizer: str, resume: bool, max_iterations: Optional[int], decoder_flags,
                 base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Tune MOSES_INI's weights with mert-moses.pl; prints the tuned moses.ini path."""
    from moses_integration.tuning.mert_moses import TuningConfig, tune

    dev_set = parallel_set("dev", dev, dev_refs)
    install = find_moses(moses_dir)
    install.require()  # before the work directory is made
    signature("moses tune", moses=install.root, ini=ini_path, dev=",".join(map(str, dev)),
              references=len(dev_set.ref_paths), nbest=nbest_size,
              seed=seed, optimizer=optimizer, threads=threads)
    # Paths given on the command line are relative to the cwd; those inside moses.ini are
    # relative to --base-dir: resolve the former now so the library can join the latter.
    config = TuningConfig(ini_path=ini_path.resolve(), dev_src=dev_set.src_path,
                          dev_ref=dev_set.ref_path, dev_extra_refs=dev_set.extra_refs,
                          work_dir=work_dir, base_dir=base_dir, threads=threads, nbest=nbest_size,
                          seed=seed, batch_mira=optimizer == "batch-mira", resume=resume,
                          max_iterations=max_iterations, decoder_flags=decoder_flags)
    with working_in(work_dir, "mert-moses.pl working directory"):
        result = tune(install, config, progress=lambda i, b: say(
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
@click.option("--system", "systems", multiple=True, required=True, metavar="NAME=MOSES_INI",
              help="A tuned system; repeat; the first is the baseline.")
@test_option()
@click.option("--out-dir", type=ANY_PATH, required=True,
              help="Where each system's translation of the test set (NAME.hyp) and its decoder log go.")
@detokenize_option
@test_type_option
@decoder_flags_option
@moses_install_options
@reports_errors
def evaluate_command(systems, test, test_refs, out_dir: Path, detokenize_lang: Optional[str], test_type: str,
                     decoder_flags, base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Decode the test set with each system, score BLEU and chrF against every reference, test
    against the baseline."""
    from moses_integration.evaluation.system_comparison import EvaluationJob, evaluate_systems

    test_set = parallel_set("test", test, test_refs)
    install = find_moses(moses_dir)
    install.require(binaries=("moses",), scripts=())  # before the output directory is made
    job = EvaluationJob(systems=named_systems(systems), src_path=test_set.src_path,
                        ref_paths=test_set.ref_paths, out_dir=out_dir, base_dir=base_dir, threads=threads,
                        decoder_flags=decoder_flags, detokenize_lang=detokenize_lang, test_type=test_type)
    with working_in(out_dir, "evaluation directory"):
        scores = evaluate_systems(job, install)
    for row in scores.rows():
        click.echo(row)
    say(f"signature: {scores.signature}; {len(test_set.ref_paths)} reference(s)")


SYSTEM_COMMANDS = (add_feature, preflight, tune_command, evaluate_command)
