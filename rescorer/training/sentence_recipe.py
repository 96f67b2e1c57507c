"""The sentence recipe: what `rescore train --parallel` trains with where the command line says
nothing. Measured by issue 30's study (docs/sentence-models.md, benchmarks/sentence_study.sh):
the model trained with it reached 41.53 test BLEU against 5.27 with the phrase-pair defaults
(cho2014 on words, no regularization), which a phrase table's training keeps.

An option given on the command line always wins, and the recipe steps aside where its value
would contradict one (token batches beside --batch-size, Adam's rate beside another optimizer,
label smoothing beside a sampled softmax). Under --resume the checkpoint's values stand in
instead (rescorer.training.resume), so a checkpoint trained before the recipe resumes as it was.
The subword size is not here: the field's own default (8000) is the recipe's, fitted to a
corpus too small for it (rescorer.data.subwords.learn_subwords).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rescorer.training.settings import TrainSettings

__all__ = ["SENTENCE_MODEL_RECIPE", "SENTENCE_TRAINING_RECIPE", "sentence_settings", "sentence_model_options",
           "parallel_default"]

# Model options (rescorer.models.settings.MODEL_OPTION_KEYS): fairseq's small-data Transformer.
SENTENCE_MODEL_RECIPE = {"arch": "transformer", "dropout": 0.3}
# TrainSettings fields. 80 words a side is how Moses' clean-corpus-n.perl is usually run; the
# study's final model was still improving after 22 epochs, so the epoch bound is far above 10.
SENTENCE_TRAINING_RECIPE = {
    "max_pair_length": 80, "subwords": "bpe", "label_smoothing": 0.1, "weight_decay": 1e-4,
    "lr_schedule": "inverse-sqrt", "warmup_updates": 1000, "learning_rate": 1e-3, "batch_tokens": 4000,
    "average": 5, "patience": 8, "max_epochs": 60.0}
# Measured with Adam (AdamW's decoupled decay): another optimizer keeps its own defaults for these.
ADAM_ONLY = ("learning_rate", "warmup_updates", "weight_decay")


def parallel_default(name: str) -> str:
    """How a help text says the recipe's value of `name`: '0.1 with --parallel'."""
    value = {**SENTENCE_MODEL_RECIPE, **SENTENCE_TRAINING_RECIPE}[name]
    return f"{value:g} with --parallel" if isinstance(value, float) else f"{value} with --parallel"


def sentence_settings(settings: "TrainSettings", explicit: frozenset) -> "TrainSettings":
    """`settings` with the recipe's value in every field not given on the command line (`explicit`)
    that no given option excludes."""
    values = {name: value for name, value in SENTENCE_TRAINING_RECIPE.items() if name not in explicit}
    if "batch_size" in explicit:  # random pairs instead of token batches
        values.pop("batch_tokens", None)
    if settings.optimizer != "adam":
        for name in ADAM_ONLY:
            values.pop(name, None)
    if settings.sampled_softmax:  # label smoothing needs the whole softmax
        values.pop("label_smoothing", None)
    warmup = values.get("warmup_updates", settings.warmup_updates)
    if not warmup:  # the inverse-sqrt decay starts at the end of a warm-up (None: the optimizer's, 0)
        values.pop("lr_schedule", None)
    return dataclasses.replace(settings, **values)


def sentence_model_options(options: dict, explicit: frozenset) -> dict:
    """The raw model options with the recipe's value for each one not given on the command line."""
    return {**options, **{name: value for name, value in SENTENCE_MODEL_RECIPE.items() if name not in explicit}}
