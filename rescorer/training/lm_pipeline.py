"""Getting a CSLM ready and training it: the corpus read once, its shortlist, its n-grams, a
fresh network of the preset (or the checkpoint's under --resume), and LmTrainer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import torch

from rescorer.data.lm_corpus import NgramStream, ngram_stream, read_lm_corpus
from rescorer.data.vocabulary import Coverage, coverage
from rescorer.errors import RescorerError
from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.lm_files import LmBundle, lm_bundle_from_payload, lm_vocabulary, save_lm
from rescorer.models.ngram_lm import LM_PRESETS, NgramLM, lm_config
from rescorer.records import from_stored, option_name
from rescorer.training.lm_reference import LmReference, lm_reference
from rescorer.training.lm_trainer import HeldOut, LmTrainer
from rescorer.training.pipeline import TrainingRun, kept_after_interrupt, save_trained
from rescorer.training.resume import CHANGEABLE_SETTINGS, checkpoint_to_resume, resume_differences
from rescorer.training.settings import LM_SETTINGS_FORMAT, LmSettings, TrainSettings
from rescorer.training.trainer import TrainState

__all__ = ["LmTrainReport", "train_lm", "check_lm_resume"]


@dataclass
class LmTrainReport:
    bundle: LmBundle
    state: TrainState
    num_sentences: int
    valid_sentences: int
    held_out: HeldOut  # of the kept (best) weights
    coverage: Optional[Coverage]  # of the shortlist on the corpus (None when resumed)
    reference: LmReference  # the unigram perplexity and the shortlist's coverage, on the same held-out text


def train_lm(corpus_path: Path, model_path: Path, *, preset: str = "small",
             settings: Optional[TrainSettings] = None, lm_settings: Optional[LmSettings] = None,
             run: Optional[TrainingRun] = None, dropout: float = 0.0,
             on_ready: Callable[[int], None] = lambda valid_ngrams: None) -> LmTrainReport:
    """Train a CSLM of `preset` on the corpus (one tokenized sentence a line, '-' for stdin) and
    save the best one at `model_path`, a checkpoint beside it (`<model>.checkpoint`) for
    `settings.resume`, which refuses settings and a corpus other than the checkpoint's.
    `dropout`: the network's in training. `on_ready` is told the held-out n-grams before the
    first update."""
    settings = settings or TrainSettings(batch_size=256)
    lm_settings = lm_settings or LmSettings()
    run = run or TrainingRun()
    checkpoint = checkpoint_path_for(model_path)
    run.on_pass("reading the corpus")
    corpus = read_lm_corpus(corpus_path, run.progress)
    corpus_record = {"lm_corpus_name": Path(corpus.name).name, "corpus_digest": corpus.digest}
    payload = None
    trainer = None
    try:
        if settings.resume:
            payload = checkpoint_to_resume(checkpoint, run.checkpoint_payload)
            bundle = lm_bundle_from_payload(payload, checkpoint)
            check_lm_resume(checkpoint, payload, bundle, preset, settings, lm_settings, corpus_record, dropout)
            bundle.model.train()
            shortlist = None
        else:
            torch.manual_seed(settings.seed)
            size = settings.shortlist_size or LM_PRESETS[preset]["shortlist_size"]
            ranked = sorted(corpus.counts, key=lambda word: (-corpus.counts[word], word))
            vocab = lm_vocabulary(ranked[:size])
            bundle = LmBundle(NgramLM(lm_config(preset, len(vocab), lm_settings.order, dropout)), vocab,
                              {"preset": preset, "model_options": {"preset": preset}})
            shortlist = coverage(vocab, corpus.counts)
        ngrams: NgramStream = ngram_stream(corpus.sentences, bundle.vocab, bundle.config.order)
        trainer = LmTrainer(bundle, ngrams, settings, lm_settings, run.device, run.precision, checkpoint,
                            run.on_update, corpus_record)
        if settings.resume:
            trainer.resume(payload, checkpoint)
        on_ready(len(trainer.split.valid_targets))
        state = trainer.train()
    except KeyboardInterrupt as interrupt:
        interrupt.note = kept_after_interrupt(trainer, checkpoint, run.resume_hint)
        raise
    held_out = trainer.held_out()
    save_trained(save_lm, bundle, model_path, trainer)
    reference = lm_reference(ngrams, trainer.split.train_targets, trainer.split.valid_targets, len(bundle.vocab))
    return LmTrainReport(bundle, state, ngrams.num_sentences, len(trainer.split.valid_sentences), held_out,
                         shortlist, reference)


def check_lm_resume(checkpoint: Path, payload: dict, bundle: LmBundle, preset: str, settings: TrainSettings,
                    lm_settings: LmSettings, corpus_record: dict, dropout: float = 0.0) -> None:
    """Refuse, in one line listing every difference, a resume that contradicts the checkpoint:
    the network (preset, order, dropout), the training settings, the LM's own and the corpus."""
    asked = lm_config(preset, bundle.config.vocab_size, lm_settings.order, dropout)
    differences = resume_differences(payload, bundle.config.to_dict(), asked.to_dict(), settings, {})
    training = payload.get("training", {})
    stored = training.get("lm_settings", {})
    if stored.get("format") != LM_SETTINGS_FORMAT:
        raise RescorerError(f"{checkpoint}: LM settings of format {stored.get('format')!r}: this rescorer "
                            f"reads format {LM_SETTINGS_FORMAT}")
    recorded = from_stored(LmSettings, stored.get("fields", {}))
    # the order is the network's, compared with its config above
    for name, value in recorded.items():
        if name != "order" and getattr(lm_settings, name) != value:
            differences.append(f"{name.replace('_', '-')} {value!r} (checkpoint) vs "
                               f"{getattr(lm_settings, name)!r} (now)")
    if training.get("corpus_digest") != corpus_record["corpus_digest"]:
        differences.append(f"corpus {training.get('lm_corpus_name')!r} (checkpoint) vs "
                           f"{corpus_record['lm_corpus_name']!r} (now), whose text differs")
    if differences:
        changeable = ", ".join(option_name(TrainSettings, name) for name in CHANGEABLE_SETTINGS)
        raise RescorerError(
            f"{checkpoint}: --resume asks for other settings than the checkpoint was trained with: "
            f"{'; '.join(differences)}. Only {changeable} may change: drop the other options, or start over "
            f"without --resume (with --force)")
