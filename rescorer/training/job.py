"""`rescore train`'s job below the command line, for every model kind: one record in (TrainJob),
the settings signature, progress bars and the summary out through a reporter (an object with
`say`, `bar`, `signature` and `quiet`, as rescorer/cli/reporting.py's Reporter has). What differs
between the kinds is theirs (rescorer.training.pair_job: phrase tables and parallel corpora;
rescorer.training.lm_job: the CSLM's text): the settings they take, how they train and what
their summary says."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Optional

from rescorer.io.file_names import checkpoint_path_for
from rescorer.runtime.placement import Placement, warn_if_emulated
from rescorer.training import lm_job, pair_job
from rescorer.training.settings import TrainSettings
from rescorer.training.train_request import TrainJob

__all__ = ["TrainJob", "train_job", "TrainingProgress", "kept_for_more_training", "resume_hint"]


def train_job(job: TrainJob, reporter, placement: Placement) -> None:
    """Train on the job's source; the settings line shows what is really used."""
    from rescorer.models.precision import precision_for
    from rescorer.training.pipeline import TrainingRun

    kind = lm_job if isinstance(job.source, lm_job.LmText) else pair_job
    plan = kind.plan(job, placement)
    ranks, device = placement.ranks, placement.device
    precision = precision_for(job.runtime.precision, device.type, job.precision_use)
    warn_if_emulated(reporter, precision, device)
    reporter.signature(plan.signature_name, **plan.signature, device=device.type, precision=precision,
                       **({"ranks": ranks.world_size} if ranks.is_distributed else {}))
    started = time.perf_counter()
    progress = TrainingProgress(reporter, job.source.kind, plan.settings, device.type)
    hint = job.resume_hint or resume_hint(job.source, job.model_path, plan.settings.cache_dir)
    with progress:
        report = kind.train(job, plan, TrainingRun(device, precision, progress.lines_read, progress.on_pass,
                                                   progress.on_update, job.reject, plan.recorded_options, plan.payload,
                                                   ranks, hint), progress)
    for line in kind.summary(job, plan, report, time.perf_counter() - started):
        reporter.say(line)
    kept = kept_for_more_training(job.source, job.model_path, plan.settings.cache_dir)
    if kept:
        reporter.say(kept)


def resume_hint(source, model_path: Path, cache_dir: Optional[Path] = None) -> str:
    """The command line that continues a training from its checkpoint, in backquotes. Options left
    out take the checkpoint's values (rescorer.training.resume); the pair cache's directory is
    not recorded, so it is given again."""
    cache = f" --cache-dir {shlex.quote(str(cache_dir))}" if cache_dir is not None else ""
    return f"`rescore train {source.command_args()} -o {shlex.quote(str(model_path))} --resume{cache}`"


class TrainingProgress:
    """The bars of a training run: one per pass over the table while it is read, then one of
    updates, with the speed estimate (rescorer.training.budget.SpeedProbe) once it is measured."""

    def __init__(self, reporter, source_kind: str, settings: TrainSettings, device_type: str):
        self.reporter, self.source_kind, self.settings, self.device_type = reporter, source_kind, settings, device_type
        self.bars = {}
        self.probe = None  # the SpeedProbe, made at the first update (when the update limit is known)

    def __enter__(self) -> "TrainingProgress":
        return self

    def __exit__(self, *exc) -> None:
        for bar in self.bars.values():
            bar.close()

    def lines_read(self, lines: int) -> None:
        self.bars["lines"].update(lines)

    def on_pass(self, what: str) -> None:  # each pass over the table counts its own lines
        if "lines" in self.bars:
            self.bars["lines"].close()
        self.bars["lines"] = self.reporter.bar(desc=f"reading {self.source_kind} ({what})", unit=" lines",
                                               unit_scale=True)

    def _start_updates(self, state) -> None:
        from rescorer.training.budget import SpeedProbe, describe_limit

        if "lines" in self.bars:  # reading is over once updates start
            self.bars.pop("lines").close()
        self.bars["updates"] = self.reporter.bar(desc="training", total=state.update_limit, unit=" upd",
                                                 initial=state.updates - 1)
        s = self.settings
        limit = describe_limit(state.update_limit, s.max_updates, s.max_epochs)
        time_left = None if s.max_seconds is None else max(s.max_seconds - state.seconds, 0.0)
        self.probe = SpeedProbe(state.update_limit, limit, s.valid_every, s.valid_pairs,
                                state.train_pairs / max(state.updates, 1), self.device_type, time_left)

    def on_update(self, state, ppl: Optional[float]) -> None:
        if "updates" not in self.bars:
            self._start_updates(state)
        bar = self.bars["updates"]
        estimate = self.probe.update(state.updates)
        if estimate and self.probe.reachable < bar.total:  # --max-time ends it sooner
            bar.total = self.probe.reachable
        if estimate and not self.reporter.quiet:
            from rescorer.runtime.progress import LogLineBar

            if isinstance(bar, LogLineBar):  # whole lines: no bar to clear first
                self.reporter.say(estimate)
            else:
                bar.write(estimate, file=sys.stderr)
        bar.n = state.updates
        postfix = {"best_valid_ppl": f"{state.best_valid_ppl:.2f}"}
        if ppl is not None:
            postfix["valid_ppl"] = f"{ppl:.2f}"
        if ppl is not None and state.honest_ppl is not None:  # a phrase table's honest held-out pairs
            postfix["honest_ppl"] = f"{state.honest_ppl:.2f}"
        bar.set_postfix(postfix, refresh=False)
        bar.refresh()


def kept_for_more_training(source, model_path: Path, cache_dir: Optional[Path]) -> str:
    """What training leaves beside the model and why, so that a user can reclaim the space."""
    kept = [path for path in (checkpoint_path_for(model_path),
                              cache_dir or model_path.with_name(model_path.name + ".cache"))
            if path.exists()]
    if not kept:
        return ""
    sizes = ", ".join(f"{path} ({_megabytes(path)})" for path in kept)
    return (f"kept for more training (`rescore train {source.command_args()} -o {model_path} --resume "
            f"--max-updates N`): {sizes}; when done, `rm -r {' '.join(map(str, kept))}`")


def _megabytes(path: Path) -> str:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return f"{sum(p.stat().st_size for p in files) / 1e6:.1f} MB"
