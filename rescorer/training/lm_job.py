"""`rescore train --lm`'s job below the command line: one record in (LmTrainJob), the settings
signature, the progress bars of the other models (rescorer.training.job.TrainingProgress) and
the summary out through a reporter."""

from __future__ import annotations

import dataclasses
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.settings import SETTING_NAMES, ModelOptions
from rescorer.records import SettingError, option_name, signature_items
from rescorer.runtime.placement import Placement, warn_if_emulated
from rescorer.runtime.settings import RuntimeSettings
from rescorer.training.job import TrainingProgress, kept_for_more_training, resume_hint
from rescorer.training.recipes import LM_RECIPE, apply_recipe
from rescorer.training.settings import LmSettings, TrainSettings
from rescorer.training.stop_reasons import updates_made

__all__ = ["LmTrainJob", "NOT_FOR_LM", "lm_train_settings", "train_lm_job"]

# What a language model has no use for: no source side, no pair counts, no token batches of
# sentence pairs, no sampled softmax (self-normalization needs the whole one), no pair cache; a
# sentence longer than the reader's bound is an error, not left out; no label smoothing (its
# loss is the n-gram softmax's own, with the self-normalization penalty); no subwords (the
# CSLM reads words through its shortlist).
NOT_FOR_LM = ("src_corpus", "tgt_corpus", "subwords", "subword_size", "direction", "pair_weights", "batch_tokens",
              "sampled_softmax", "cache_dir", "max_pair_length", "label_smoothing", "valid_src", "valid_tgt")


@dataclass(frozen=True)
class LmTrainJob:
    """Everything one CSLM training run is asked for."""

    corpus_path: Path
    model_path: Path
    preset: str
    settings: TrainSettings
    lm_settings: LmSettings
    runtime: RuntimeSettings
    explicit: frozenset = frozenset()  # names given on the command line: under --resume the others
    # are the checkpoint's
    dropout: Optional[float] = None  # of the network (NgramLmConfig.dropout); None: the LM recipe's


class LmCorpusSource:
    """What `kept_for_more_training` says of the corpus."""

    kind = "corpus"

    def __init__(self, path: Path):
        self.path = path

    def command_args(self) -> str:
        return f"--lm {shlex.quote(str(self.path))}"


def lm_train_settings(settings: TrainSettings, explicit: frozenset) -> TrainSettings:
    """The training settings of an LM: the encoder-decoders' model options and the training
    settings it cannot take refused, each kind in one line, the LM's own recipe (LM_RECIPE)
    where none was given."""
    models = [name for name in ("arch", *SETTING_NAMES) if name in explicit and name != "dropout"]
    if models:  # its dropout it takes (NgramLmConfig.dropout)
        shown = ", ".join(option_name(ModelOptions, name) for name in models)
        raise SettingError(f"{shown}: not for a language model (--lm), whose sizes are its --preset's; "
                           f"drop {'them' if len(models) > 1 else 'it'}")
    given = [name for name in NOT_FOR_LM if name in explicit]
    if given:
        shown = ", ".join(option_name(TrainSettings, name) for name in given)
        raise SettingError(f"{shown}: not for a language model (--lm): it is trained on one tokenized "
                           f"text, on random n-grams of its sentences; drop {'them' if len(given) > 1 else 'it'}")
    return apply_recipe(LM_RECIPE, settings, explicit)


def _resumed(job: LmTrainJob) -> tuple[str, TrainSettings, LmSettings, float, dict]:
    """(preset, settings, LM settings, dropout, checkpoint payload): under --resume, what the
    command line left at its defaults is the checkpoint's."""
    from rescorer.records import from_stored
    from rescorer.training.resume import checkpoint_to_resume, recorded_training, resumed_settings

    payload = checkpoint_to_resume(checkpoint_path_for(job.model_path))
    training = payload["training"]
    recorded, _ = recorded_training(training)
    settings = resumed_settings(job.settings, job.explicit, recorded)
    lm_recorded = from_stored(LmSettings, training.get("lm_settings", {}).get("fields", {}))
    lm_settings = dataclasses.replace(job.lm_settings, **{key: value for key, value in lm_recorded.items()
                                                         if key not in job.explicit})
    preset = job.preset if "preset" in job.explicit else training.get("preset", job.preset)
    dropout = job.dropout if "dropout" in job.explicit else payload.get("config", {}).get("dropout", 0.0)
    return preset, settings, lm_settings, dropout, payload


def train_lm_job(job: LmTrainJob, reporter, placement: Placement) -> None:
    """Train the CSLM; the settings line shows what is really used."""
    from rescorer.models.ngram_lm import LM_PRESETS
    from rescorer.models.precision import precision_for
    from rescorer.training.lm_pipeline import train_lm
    from rescorer.training.pipeline import TrainingRun

    if placement.ranks.is_distributed:
        raise SettingError("--lm trains on one device: run it without torchrun")
    settings, lm_settings, preset, payload = job.settings, job.lm_settings, job.preset, None
    dropout = LM_RECIPE.model["dropout"] if job.dropout is None else job.dropout
    if settings.resume:
        preset, settings, lm_settings, dropout, payload = _resumed(job)
    device = placement.device
    precision = precision_for(job.runtime.precision, device.type, "train")
    warn_if_emulated(reporter, precision, device)
    sizes = LM_PRESETS[preset]
    resolved = settings.resolved()
    shown = {key: value for key, value in signature_items(resolved).items() if key not in NOT_FOR_LM}
    if settings.shortlist_size is None and not settings.resume:  # the preset's (resumed: the checkpoint's)
        shown["shortlist_size"] = str(sizes["shortlist_size"])
    reporter.signature("train-lm", preset=preset, order=lm_settings.order, embedding_size=sizes["embedding_size"],
                       hidden_sizes="x".join(map(str, sizes["hidden_sizes"])), dropout=dropout, **shown,
                       log_z_penalty=lm_settings.log_z_penalty, device=device.type, precision=precision)
    started = time.perf_counter()
    progress = TrainingProgress(reporter, "corpus", resolved, device.type)

    def on_ready(valid_ngrams: int) -> None:  # the speed estimate counts n-grams, not sentences
        progress.settings = dataclasses.replace(progress.settings, valid_pairs=max(valid_ngrams, 1))

    with progress:
        report = train_lm(job.corpus_path, job.model_path, preset=preset, settings=settings,
                          lm_settings=lm_settings, dropout=dropout, on_ready=on_ready, run=TrainingRun(
                              device, precision, progress.lines_read, progress.on_pass, progress.on_update,
                              checkpoint_payload=payload,
                              resume_hint=resume_hint(LmCorpusSource(job.corpus_path), job.model_path)))
    state, held_out, reference = report.state, report.held_out, report.reference
    if report.coverage is not None:
        reporter.say(f"shortlist: {len(report.bundle.vocab) - 4} words; token coverage "
                     f"{report.coverage.ratio:.1%}")
    elapsed = time.perf_counter() - started
    reporter.say(f"trained on {report.num_sentences - report.valid_sentences} sentences "
                 f"({report.valid_sentences} held out, {held_out.ngrams} words and sentence ends): "
                 f"{updates_made(state)}, stopped: {state.stopped_because}; valid perplexity "
                 f"{held_out.perplexity:.2f} (update {state.best_update}), unigram "
                 f"{reference.unigram_perplexity:.2f} ([UNK] one word in both; the shortlist covers "
                 f"{reference.coverage.ratio:.1%} of the {reference.coverage.total_tokens} held-out words), mean "
                 f"|log Z| {held_out.mean_abs_log_z:.3f}; {state.train_tokens / max(state.seconds, 1e-9):.0f} "
                 f"n-grams/s; {elapsed:.1f} s; model {job.model_path}")
    kept = kept_for_more_training(LmCorpusSource(job.corpus_path), job.model_path, None)
    if kept:
        reporter.say(kept)
