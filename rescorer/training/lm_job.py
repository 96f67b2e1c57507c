"""The CSLM's model kind (`rescore train --lm`), as rescorer.training.job runs it: the settings
an LM cannot take refused, its recipe, under --resume the checkpoint's, the settings line, the
training on n-grams of its text (rescorer.training.lm_pipeline) and its summary."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.settings import SETTING_NAMES, ModelOptions
from rescorer.records import SettingError, option_name, signature_items
from rescorer.runtime.placement import Placement
from rescorer.training.recipes import LM_RECIPE, apply_recipe
from rescorer.training.settings import LmSettings, TrainSettings
from rescorer.training.stop_reasons import updates_made
from rescorer.training.train_request import TrainingPlan, TrainJob

__all__ = ["LmText", "LmModel", "NOT_FOR_LM", "lm_training_source", "lm_train_settings", "plan", "train", "summary"]

# What a language model has no use for: no source side, no pair counts, no token batches of
# sentence pairs, no sampled softmax (self-normalization needs the whole one), no pair cache; a
# sentence longer than the reader's bound is an error, not left out; no label smoothing (its
# loss is the n-gram softmax's own, with the self-normalization penalty); no subwords (the
# CSLM reads words through its shortlist).
NOT_FOR_LM = ("src_corpus", "tgt_corpus", "subwords", "subword_size", "direction", "pair_weights", "batch_tokens",
              "sampled_softmax", "cache_dir", "max_pair_length", "label_smoothing", "valid_src", "valid_tgt")


class LmText:
    """What an LM trains on: one tokenized text (`--lm TEXT`)."""

    kind = "corpus"  # the progress bars read "reading corpus (...)"

    def __init__(self, path: Path):
        self.path = path

    def command_args(self) -> str:
        return f"--lm {shlex.quote(str(self.path))}"


@dataclass(frozen=True)
class LmModel:
    """The network an LM job trains: its preset, its own settings, its dropout."""

    preset: str
    lm_settings: LmSettings
    dropout: float


def lm_training_source(text: Path, phrase_table: Optional[Path], parallel: Optional[tuple],
                       settings: TrainSettings, explicit: frozenset) -> tuple[LmText, TrainSettings]:
    """What `rescore train --lm TEXT` reads and the settings for it, as pair_job.training_source
    is for the other kinds: an LM reads its one text, so a table, a corpus and a reject file are
    refused, and so are the settings it cannot take (lm_train_settings)."""
    if phrase_table is not None or parallel:
        raise SettingError("--lm trains a language model on one text: give no PHRASE_TABLE or --parallel")
    if "reject_path" in explicit:
        raise SettingError("--reject: not for a language model (--lm): a line of its text that cannot be read "
                           "stops the run, naming it; drop it")
    return LmText(text), lm_train_settings(settings, explicit)


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


def _resumed(job: TrainJob) -> tuple[TrainSettings, LmModel, dict]:
    """(settings, network, checkpoint payload): what the command line left at its defaults is
    the checkpoint's."""
    from rescorer.records import from_stored
    from rescorer.training.resume import checkpoint_to_resume, recorded_training, resumed_settings

    payload = checkpoint_to_resume(checkpoint_path_for(job.model_path))
    training = payload["training"]
    recorded, _ = recorded_training(training)
    settings = resumed_settings(job.settings, job.explicit, recorded)
    lm_recorded = from_stored(LmSettings, training.get("lm_settings", {}).get("fields", {}))
    lm_settings = dataclasses.replace(job.lm_settings, **{key: value for key, value in lm_recorded.items()
                                                         if key not in job.explicit})
    preset = job.model_options.preset if "preset" in job.explicit else training.get("preset", job.model_options.preset)
    dropout = (job.model_options.dropout if "dropout" in job.explicit
               else payload.get("config", {}).get("dropout", 0.0))
    return settings, LmModel(preset, lm_settings, dropout), payload


def plan(job: TrainJob, placement: Placement) -> TrainingPlan:
    """The settings and the network this job trains, and its settings line."""
    from rescorer.models.ngram_lm import LM_PRESETS

    if placement.ranks.is_distributed:
        raise SettingError("--lm trains on one device: run it without torchrun")
    options: ModelOptions = job.model_options
    dropout = LM_RECIPE.model["dropout"] if options.dropout is None else options.dropout
    settings, model, payload = job.settings, LmModel(options.preset, job.lm_settings, dropout), None
    if settings.resume:
        settings, model, payload = _resumed(job)
    sizes = LM_PRESETS[model.preset]
    shown = {key: value for key, value in signature_items(settings.resolved()).items() if key not in NOT_FOR_LM}
    if settings.shortlist_size is None and not settings.resume:  # the preset's (resumed: the checkpoint's)
        shown["shortlist_size"] = str(sizes["shortlist_size"])
    own = signature_items(model.lm_settings)  # the order beside the network's shape, the others last
    return TrainingPlan(settings, model, payload, "train-lm", dict(
        preset=model.preset, order=own.pop("order"), embedding_size=sizes["embedding_size"],
        hidden_sizes="x".join(map(str, sizes["hidden_sizes"])), dropout=model.dropout, **shown, **own))


def train(job: TrainJob, plan: TrainingPlan, run, progress):
    """Train the CSLM (rescorer.training.lm_pipeline.train_lm)."""
    from rescorer.training.lm_pipeline import train_lm

    def on_ready(valid_ngrams: int) -> None:  # the speed estimate counts n-grams, not sentences
        progress.settings = dataclasses.replace(progress.settings, valid_pairs=max(valid_ngrams, 1))

    model = plan.model
    return train_lm(job.source.path, job.model_path, preset=model.preset, settings=plan.settings,
                    lm_settings=model.lm_settings, dropout=model.dropout, on_ready=on_ready, run=run)


def summary(job: TrainJob, plan: TrainingPlan, report, elapsed: float) -> list[str]:
    """The shortlist, and what was learned on how much, a line each."""
    state, held_out, reference, lines = report.state, report.held_out, report.reference, []
    if report.coverage is not None:
        lines.append(f"shortlist: {len(report.bundle.vocab) - 4} words; token coverage {report.coverage.ratio:.1%}")
    lines.append(f"trained on {report.num_sentences - report.valid_sentences} sentences "
                 f"({report.valid_sentences} held out, {held_out.ngrams} words and sentence ends): "
                 f"{updates_made(state)}, stopped: {state.stopped_because}; valid perplexity "
                 f"{held_out.perplexity:.2f} (update {state.best_update}), unigram "
                 f"{reference.unigram_perplexity:.2f} ([UNK] one word in both; the shortlist covers "
                 f"{reference.coverage.ratio:.1%} of the {reference.coverage.total_tokens} held-out words), mean "
                 f"|log Z| {held_out.mean_abs_log_z:.3f}; {state.train_tokens / max(state.seconds, 1e-9):.0f} "
                 f"n-grams/s; {elapsed:.1f} s; model {job.model_path}")
    return lines
