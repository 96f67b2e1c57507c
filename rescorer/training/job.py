"""`rescore train`'s job below the command line: one record in (TrainJob), the settings
signature, progress bars and the summary out through a reporter (an object with `say`, `bar`,
`signature` and `quiet`, as rescorer/cli/reporting.py's Reporter has)."""

from __future__ import annotations

import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rescorer.data.pair_sources import PairSource
from rescorer.io.file_names import checkpoint_path_for
from rescorer.io.table_reader import RejectSink
from rescorer.models.settings import ModelOptions, ModelSettings
from rescorer.records import SettingError, option_name, recorded_values, signature_items
from rescorer.runtime.placement import Placement, warn_if_emulated
from rescorer.runtime.settings import RuntimeSettings
from rescorer.training.recipes import SENTENCE_RECIPE, SUBWORD_SIZE, apply_recipe, recipe_model_options
from rescorer.training.settings import NO_SUBWORDS, TrainSettings
from rescorer.training.stop_reasons import updates_made

__all__ = ["TrainJob", "train_job", "training_source", "require_rereadable", "TrainingProgress",
           "kept_for_more_training", "resume_hint"]


@dataclass(frozen=True)
class TrainJob:
    """Everything one training run is asked for."""

    source: PairSource  # a phrase table or a parallel corpus (rescorer.data.pair_sources)
    model_path: Path
    model_options: ModelOptions  # as given (None where not given)
    settings: TrainSettings
    runtime: RuntimeSettings
    explicit: frozenset = frozenset()  # names given on the command line: under --resume the others
    reject: Optional[RejectSink] = None  # are the checkpoint's
    resume_hint: str = ""  # how to continue after an interrupt ("": `rescore train SOURCE -o MODEL --resume`)
    # what the model is trained for (rescorer.models.precision): `rescore run` trains the model it
    # then scores, so its --precision int8 trains in fp32
    precision_use: str = "train"


def require_rereadable(path: Path) -> None:
    """Training reads the table several times: stdin, a FIFO or a device cannot do that."""
    from rescorer.io.path_checks import is_stream

    if is_stream(path):
        raise SettingError(f"{path}: training reads its input several times: give a "
                           f"regular file, not a pipe or '-' (or score with --model)")


def training_source(phrase_table: Optional[Path], parallel: Optional[tuple], settings: TrainSettings,
                    explicit: frozenset) -> tuple[PairSource, TrainSettings]:
    """What `rescore train` reads, the table or the parallel corpus, and the settings for it: a
    corpus refuses the settings it cannot take and trains with the sentence recipe
    (rescorer.training.recipes.SENTENCE_RECIPE) where not told otherwise; a table's model reads
    words through shortlists unless --subwords asks for subword models learned on its phrases."""
    from rescorer.data.pair_sources import ParallelCorpusPairs, PhraseTablePairs

    if (phrase_table is None) == (parallel is None):
        raise SettingError("give a PHRASE_TABLE or --parallel SRC TGT (one of them)")
    if phrase_table is not None:
        require_rereadable(phrase_table)
        if settings.valid_src is not None:
            raise SettingError("--valid-src/--valid-tgt: a validation set of sentences goes with --parallel; a "
                               "phrase table validates on a held-out slice of its pairs (--valid-pairs)")
        if not settings.resume:  # resumed, they are the checkpoint's (rescorer.training.resume checks them)
            check_subword_settings(settings, explicit)
        return PhraseTablePairs(phrase_table), settings
    if settings.valid_src is not None and "valid_pairs" in explicit:
        raise SettingError("--valid-pairs: with --valid-src/--valid-tgt every sentence of them is the validation "
                           "set; drop --valid-pairs")
    for name in ("src_corpus", "tgt_corpus"):
        if getattr(settings, name) is not None:
            flag = option_name(TrainSettings, name)
            raise SettingError(f"{flag}: with --parallel the shortlists are counted on the corpus itself; "
                               f"drop {flag}")
    if settings.pair_weights != "unique":
        raise SettingError(f"--pair-weights {settings.pair_weights}: a parallel corpus has no pair "
                           f"counts; its sentence pairs count once each")
    for path in parallel:
        require_rereadable(path)
    if not settings.resume:  # resumed, they are the checkpoint's (rescorer.training.resume checks them)
        settings = apply_recipe(SENTENCE_RECIPE, settings, explicit)
        check_subword_settings(settings, explicit)
    return ParallelCorpusPairs(*parallel), settings


def check_subword_settings(settings: TrainSettings, explicit: frozenset) -> None:
    """With subwords the vocabularies are the subword models' pieces, so there is no shortlist
    to size; without them there are no pieces to count."""
    if settings.subwords != NO_SUBWORDS and "shortlist_size" in explicit:
        words = "" if "subwords" in explicit else ", or give --subwords none for a model of words"
        raise SettingError(f"--shortlist-size: with --subwords {settings.subwords} the vocabularies are the "
                           f"subword models' pieces; size them with --subword-size (drop --shortlist-size{words})")
    if settings.subwords == NO_SUBWORDS and "subword_size" in explicit:
        raise SettingError("--subword-size: only with --subwords bpe or unigram (the model reads words now)")
    corpora = [name for name in ("src_corpus", "tgt_corpus") if getattr(settings, name) is not None]
    if settings.subwords != NO_SUBWORDS and corpora:
        shown = ", ".join(option_name(TrainSettings, name) for name in corpora)
        raise SettingError(f"{shown}: with --subwords {settings.subwords} there are no shortlists to count: the "
                           f"vocabularies are the subword models' pieces, learned on the table's phrases; drop "
                           f"{'them' if len(corpora) > 1 else 'it'}")


def resumed(job: TrainJob) -> tuple[TrainSettings, ModelOptions, Optional[dict]]:
    """(settings, model options, checkpoint): under --resume, what the command line left at
    its defaults is the checkpoint's; otherwise a parallel corpus's model takes the sentence
    recipe's options where none was given."""
    if not job.settings.resume:
        if job.source.kind != "corpus":
            return job.settings, job.model_options, None
        return job.settings, recipe_model_options(SENTENCE_RECIPE, job.model_options, job.explicit), None
    from rescorer.training.resume import (checkpoint_to_resume, recorded_training, resumed_model_options,
                                          resumed_settings)

    payload = checkpoint_to_resume(checkpoint_path_for(job.model_path))
    recorded, recorded_model = recorded_training(payload.get("training", {}))
    return (resumed_settings(job.settings, job.explicit, recorded),
            resumed_model_options(job.model_options, job.explicit, recorded_model), payload)


def train_job(job: TrainJob, reporter, placement: Placement) -> None:
    """Train on the job's source; the settings line shows what is really used."""
    from rescorer.models.precision import precision_for
    from rescorer.training.distributed_trainer import check_batch_size
    from rescorer.training.pipeline import TrainingRun, train_on_table

    settings, model_options, payload = resumed(job)
    model = ModelSettings.from_options(model_options)
    ranks, device = placement.ranks, placement.device
    if ranks.is_distributed and settings.batch_size is not None:
        check_batch_size(settings.batch_size, ranks)
    precision = precision_for(job.runtime.precision, device.type, job.precision_use)
    warn_if_emulated(reporter, precision, device)
    shown = signature_items(settings.resolved(model.width()))
    if settings.subwords == NO_SUBWORDS:  # a model of words has no pieces to count
        shown["subword_size"] = "-"
    reporter.signature("train", **model.describe(), **shown, device=device.type, precision=precision,
                       **({"ranks": ranks.world_size} if ranks.is_distributed else {}))
    started = time.perf_counter()
    progress = TrainingProgress(reporter, job.source.kind, settings, device.type)
    recorded_options = recorded_values(model_options)
    with progress:
        report = train_on_table(job.source, job.model_path, model=model, settings=settings, run=TrainingRun(
            device, precision, progress.lines_read, progress.on_pass, progress.on_update, job.reject,
            recorded_options, payload, ranks, job.resume_hint or resume_hint(job.source, job.model_path,
                                                                              settings.cache_dir)))
    state = report.state
    if report.vocabularies is not None and report.vocabularies.subwords is not None:
        vocab = report.vocabularies
        sizes = (len(vocab.subwords.source.pieces), len(vocab.subwords.target.pieces))
        fitted = (f" (fewer than the default {SUBWORD_SIZE}: all that the corpus allows)"
                  if settings.subword_size is None and min(sizes) < SUBWORD_SIZE else "")
        reporter.say(f"subwords ({settings.subwords}) learned on {vocab.counted_from}: "
                     f"{sizes[0]} source, {sizes[1]} target pieces{fitted}")
    elif report.vocabularies is not None:
        vocab = report.vocabularies
        reporter.say(f"shortlists from {vocab.counted_from}: {len(vocab.src_vocab) - 3} source, "
                     f"{len(vocab.tgt_vocab) - 3} target words; token coverage "
                     f"{vocab.src_coverage.ratio:.1%} source, {vocab.tgt_coverage.ratio:.1%} target")
    elapsed = time.perf_counter() - started
    left_out = (f"; {report.too_long} longer than {settings.max_pair_length or 0} words left out"
                if report.too_long else "")
    held = (f"validated on {report.valid_pairs} sentence pairs of {report.valid_set}" if report.valid_set
            else f"{report.valid_pairs} held out")
    trained = report.num_pairs - (0 if report.valid_set else report.valid_pairs)
    reporter.say(f"trained on {trained} pairs ({held}"
                 f"{left_out}): "
                 f"{updates_made(state)}, stopped: {state.stopped_because}; "
                 f"valid perplexity {state.best_valid_ppl:.2f} (update {state.best_update}"
                 f"{honest_figure(state.honest_ppl_at_best, report.honest_pairs, report.honest_unigram_ppl)}), "
                 f"unigram {report.unigram_ppl:.2f}; {state.train_tokens / max(state.seconds, 1e-9):.0f} "
                 f"target tokens/s; {elapsed:.1f} s; model {job.model_path}")
    if state.averaged_updates:
        reporter.say(f"{job.model_path} holds the mean of the weights of the {len(state.averaged_updates)} best "
                     f"validations (updates {', '.join(map(str, state.averaged_updates))}): valid perplexity "
                     f"{state.averaged_valid_ppl:.2f}"
                     f"{honest_figure(state.averaged_honest_ppl, report.honest_pairs, report.honest_unigram_ppl)}")
    kept = kept_for_more_training(job.source, job.model_path, settings.cache_dir)
    if kept:
        reporter.say(kept)


def resume_hint(source, model_path: Path, cache_dir: Optional[Path] = None) -> str:
    """The command line that continues a training from its checkpoint, in backquotes. Options left
    out take the checkpoint's values (rescorer.training.resume); the pair cache's directory is
    not recorded, so it is given again."""
    cache = f" --cache-dir {shlex.quote(str(cache_dir))}" if cache_dir is not None else ""
    return f"`rescore train {source.command_args()} -o {shlex.quote(str(model_path))} --resume{cache}`"


def honest_figure(ppl: Optional[float], num_honest: Optional[int], unigram: Optional[float] = None) -> str:
    """The honest held-out perplexity beside the held-out one (rescorer.training.honest_heldout),
    against the unigram model's on the same pairs (the summary's other unigram figure is on all
    held-out pairs, the wrong floor for these), or why there is none; nothing where it is not
    measured (sentence pairs)."""
    if num_honest is None:
        return ""
    if not num_honest:
        return "; honest n/a: every held-out pair is a piece of a training pair"
    if ppl is None:  # the best update came before a resumed checkpoint's rescorer measured it
        return "; honest n/a"
    against = f" against unigram {unigram:.2f}" if unigram is not None else ""
    return f"; honest {ppl:.2f}{against} on the {num_honest} held-out pairs no training pair contains"


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
