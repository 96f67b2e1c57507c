"""`rescore score`'s job below the command line: one record in (ScoreJob), the settings
signature and the summary out through a reporter (see rescorer.training.job), and the checks
of what an interrupted run left beside the output."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rescorer.records import SettingError, signature_items
from rescorer.runtime.failure_reports import injected_fault
from rescorer.runtime.placement import Placement, warn_if_emulated
from rescorer.runtime.settings import RuntimeSettings
from rescorer.scoring.settings import ScoreSettings

__all__ = ["ScoreJob", "score_job", "scoring_precision", "check_ensemble_size", "output_already_finished", "check_partial_output"]


@dataclass(frozen=True)
class ScoreJob:
    """Everything one scoring run is asked for."""

    table_path: Path
    output: Path
    model_paths: tuple
    settings: ScoreSettings
    runtime: RuntimeSettings


def score_job(job: ScoreJob, reporter, placement: Placement) -> None:
    """Score with every model, one column each (or their ensemble's)."""
    from rescorer.models.model_files import load_model
    from rescorer.models.precision import precision_for, quantized
    from rescorer.scoring.batch_scoring import default_token_budget
    from rescorer.scoring.host_pipeline import default_host_workers
    from rescorer.scoring.table_rescoring import rescore_table

    device, ranks = placement.device, placement.ranks
    precision_for(job.runtime.precision, device.type, "score")  # a refusal (int8 on CUDA) before the models load
    model_paths = [Path(path) for path in job.model_paths]
    bundles = [load_model(path, device) for path in model_paths]
    check_ensemble(job.settings.ensemble, bundles, model_paths)
    names = [path.name for path in model_paths]
    choice = ranks.on_main(lambda: scoring_precision(job, device, bundles, names), "choosing the precision")
    if choice.line:
        reporter.say(choice.line)
    settings = dataclasses.replace(job.settings, precision=choice.precision)
    warn_if_emulated(reporter, settings.precision, device)
    for bundle in bundles:
        quantized(bundle.model, settings.precision)
    shown = settings.with_token_budget(default_token_budget(device))
    shown = shown.with_host_workers(default_host_workers(device.type))
    reporter.signature("score", model=",".join(f"{name}({bundle.config.arch})" for name, bundle in zip(names, bundles)),
                       **signature_items(shown), device=device.type,
                       **({"ranks": ranks.world_size} if ranks.is_distributed else {}))
    with reporter.bar(desc="scoring", unit=" lines", unit_scale=True) as bar:
        summary = rescore_table(job.table_path, job.output, bundles, settings, progress=bar.update,
                                ranks=ranks, model_names=names)
    reporter.say(summary.report(names, settings.reject_path, settings.unk_penalty, job.output))
    injected_fault("after-summary")


def scoring_precision(job: ScoreJob, device, bundles: list, names: list):
    """The precision this run scores in (rescorer.scoring.precision_check). Under --resume,
    'auto' takes the precision the interrupted run recorded with its units, unchecked: the
    units it finished were scored in it, and the rest are scored alike (a new check could
    decide otherwise on another machine, and the resume would then be refused)."""
    from rescorer.models.precision import precision_for
    from rescorer.scoring.precision_check import PrecisionChoice, choose_precision, table_sample
    from rescorer.scoring.units import recorded_precision

    if job.runtime.precision == "auto" and job.settings.resume:
        recorded = recorded_precision(job.output)
        if recorded is not None and recorded != "auto":
            recorded = precision_for(recorded, device.type, "score")  # refuses a name it does not know, int8 on CUDA
            return PrecisionChoice(recorded, f"precision auto: {recorded}, as the interrupted run chose for "
                                             f"the units it finished (no check)")
    return choose_precision(job.runtime.precision, device, list(zip(names, bundles)),
                            lambda: table_sample(job.table_path))


def check_ensemble_size(ensemble: bool, models: int) -> None:
    if ensemble and models < 2:
        raise SettingError("--ensemble mixes several models into one column: give --model two or more times")


def check_ensemble(ensemble: bool, bundles: list, model_paths: list) -> None:
    """An ensemble mixes distributions over the same thing: two or more models of one direction."""
    if not ensemble:
        return
    check_ensemble_size(ensemble, len(bundles))
    directions = {bundle.direction for bundle in bundles}
    if len(directions) > 1:
        named = ", ".join(f"{path.name} ({bundle.direction})" for path, bundle in zip(model_paths, bundles))
        raise SettingError(f"--ensemble mixes models of one direction, not {named}: score the "
                           f"directions as columns of their own (drop --ensemble)")
    # Each model's log p is a distribution over the target phrases its shortlist can spell ([UNK]
    # for the rest): a mixture of two shortlists' distributions is no distribution of either.
    first = bundles[0].tgt_vocab
    unlike = [f"{path.name}'s ({len(bundle.tgt_vocab) - 3} words)"
              for path, bundle in zip(model_paths[1:], bundles[1:])
              if bundle.tgt_encoding != bundles[0].tgt_encoding]  # subword models: the same pieces too
    if unlike:
        raise SettingError(f"--ensemble mixes models of one target shortlist, and {' and '.join(unlike)} "
                           f"{'is' if len(unlike) == 1 else 'are'} not {model_paths[0].name}'s ({len(first) - 3} "
                           f"words): score them as columns of their own (drop --ensemble), or train them on one "
                           f"shortlist")


def output_already_finished(reporter, ranks, output: Path, reject_path: Optional[Path], resume: bool) -> bool:
    """A run stopped after putting OUT in place but before removing .OUT.partial/ had finished:
    the directory is removed (saying so), and under --resume nothing is left to do. The check
    holds the output's locks, as the run that left it no longer does."""
    from rescorer.io.path_checks import RunPaths, is_stream, output_targets
    from rescorer.io.unit_journal import partial_dir, remove_finished_leftover

    if is_stream(output) or not (partial_dir(output).is_dir() and Path(output).is_file()):
        return False

    def remove() -> Optional[str]:
        targets = [dataclasses.replace(target, may_exist=True)
                   for target in output_targets(output, reject_path)]
        with RunPaths([], targets, force=False):
            return remove_finished_leftover(output)

    removed = ranks.on_main(remove, "checking the paths")
    if removed:
        reporter.say(removed)
    if removed and resume:
        reporter.say(f"{output} is complete: nothing to resume")
        return True
    return False


def check_partial_output(ranks, output: Path, resume: bool, force: bool) -> None:
    """Before any long work: an interrupted scoring left beside OUT needs --resume or --force."""
    from rescorer.io.path_checks import is_stream
    from rescorer.io.unit_journal import check_leftover

    if not is_stream(output):
        ranks.on_main(lambda: check_leftover(output, resume, force), "checking the paths")
