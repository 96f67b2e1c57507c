"""The training recipes: the defaults that depend on what is trained, as data, applied by one
function, so that a phrase table, a parallel corpus and a language model differ only in their
rows here. Torch-free and below the settings record (rescorer.training.settings), whose help
texts quote them.

Two layers, applied in this order:
- a kind's recipe (SENTENCE_RECIPE with --parallel, LM_RECIPE with --lm; a phrase table has
  none: the fields' own defaults are the paper's), filled in where the command line says nothing
  (`apply_recipe`, `recipe_model_options`); under --resume the checkpoint's values stand in
  instead (rescorer.training.resume), so a checkpoint trained before a recipe resumes as it was;
- the defaults left None, resolved from the optimizer, the batches and the model's width
  (`resolve_defaults`), which a checkpoint records filled in.

Every value measured with Adam is dropped for another optimizer (ADAM_ONLY, `for_optimizer`):
the rule is written once here for the three layers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Mapping, Optional, TypeVar

__all__ = ["Recipe", "SENTENCE_RECIPE", "LM_RECIPE", "ADAM_ONLY", "for_optimizer", "apply_recipe",
           "recipe_model_options", "recipe_default", "resolve_defaults", "token_batch_learning_rate",
           "DEFAULT_BATCH_TOKENS", "SUBWORD_SIZE", "TOKEN_BATCH_ADAM", "TOKEN_BATCH_ADAM_TUNED_WIDTH",
           "TOKEN_BATCH_SAMPLED_WORDS"]

Settings = TypeVar("Settings")  # a TrainSettings (rescorer.training.settings), which imports this module

# Values measured with Adam (AdamW's decoupled decay): another optimizer keeps its own defaults.
ADAM_ONLY = ("learning_rate", "warmup_updates", "weight_decay")
# The optimizers' own learning rates: the paper's Adadelta at 1.0, Adam at torch's 1e-3.
OPTIMIZER_LEARNING_RATE = {"adadelta": 1.0, "adam": 1e-3}


@dataclass(frozen=True)
class Recipe:
    """The defaults of one kind of training, where the command line gives no value."""

    flag: str  # the option that picks the recipe, as a help text names it
    training: Mapping[str, object]  # TrainSettings fields
    model: Mapping[str, object] = field(default_factory=dict)  # model options (ModelOptions' fields)


# Measured by issue 30's study (docs/sentence-models.md, benchmarks/studies/sentence_study.sh): the model
# trained with it reached 41.53 test BLEU against 5.27 with a phrase table's defaults (cho2014 on
# words, no regularization). fairseq's small-data Transformer; 80 words a side is how Moses'
# clean-corpus-n.perl is usually run; the study's final model was still improving after 22 epochs,
# so the epoch bound is far above 10. The subword size is not here: the field's own default
# (SUBWORD_SIZE) is the recipe's, fitted to a corpus too small for it.
SENTENCE_RECIPE = Recipe("--parallel", training={
    "max_pair_length": 80, "subwords": "bpe", "label_smoothing": 0.1, "weight_decay": 1e-4,
    "lr_schedule": "inverse-sqrt", "warmup_updates": 1000, "learning_rate": 1e-3, "batch_tokens": 4000,
    "average": 5, "patience": 8, "max_epochs": 60.0}, model={"arch": "transformer", "dropout": 0.3})

# The CSLM: n-grams per update (random, as the CSLM toolkit draws them), Adam's rate and its
# halving on each validation that is no new best, held-out sentences (about 29,000 words on the
# Bible: perplexity to about 1%), updates between validations (about 400,000 n-grams, half an
# epoch of train.fr) and patience. Chosen on the small preset and train.fr (benchmarks/RESULTS.md,
# "CSLM, part 2"): 1,024 n-grams at 5e-3, halved on plateaus, with dropout 0.2, reached held-out
# perplexity 38.8 in 12 epochs, below the bench's 4-gram KenLM; the first recipe (256 at 1e-2,
# constant, no dropout) was at 82.8 after 1.3 epochs where this one was at 58.8.
LM_RECIPE = Recipe("--lm", training={
    "batch_size": 1024, "learning_rate": 5e-3, "lr_decay": 0.5, "valid_pairs": 1000, "valid_every": 400,
    "patience": 6}, model={"dropout": 0.2})

DEFAULT_BATCH_TOKENS = 3000  # benchmarks/studies/time_to_quality.py: the shortest time to a good model
# With token batches, Adam's defaults are those the same benchmark chose; with the paper's random
# pairs every default stays what it was (Adadelta at 1.0, Adam at 1e-3, no warm-up, full softmax).
# The rate is 3e-3 up to TOKEN_BATCH_ADAM_TUNED_WIDTH (issue 44, docs/proxy-study.md, "A steadier
# start"): at 6e-3 one seed in three of `small` on the bible table started badly and stopped at
# held-out perplexity 23.64 against the others' 7.7; at 3e-3 the three seeds stop at 6.09 to 6.75.
TOKEN_BATCH_ADAM = {"learning_rate": 3e-3, "warmup_updates": 100}
# The width (rescorer.models.model_width) above which that rate is scaled down, times TUNED_WIDTH /
# width (benchmarks/studies/preset_stability.py, issue 33: at 6e-3 the paper's cho2014, 1000 wide,
# diverged after the warm-up, held-out perplexity 5e5 at update 100 against a unigram model's 193).
# 3e-3 x 512 is issue 33's 6e-3 x 256, so every model 512 wide or wider keeps the rate it had.
TOKEN_BATCH_ADAM_TUNED_WIDTH = 512
TOKEN_BATCH_SAMPLED_WORDS = 2048
# Pieces per side unless --subword-size says: at most this many, fewer where the corpus allows no
# more (a size given is learned exactly, or refused).
SUBWORD_SIZE = 8000


def for_optimizer(values: Mapping[str, object], optimizer: Optional[str]) -> dict:
    """`values` without the Adam-only ones when the optimizer is not Adam."""
    return {name: value for name, value in values.items() if optimizer == "adam" or name not in ADAM_ONLY}


def apply_recipe(recipe: Recipe, settings: Settings, explicit: frozenset) -> Settings:
    """`settings` with the recipe's value in every field not given on the command line
    (`explicit`), except where a given option excludes it: random pairs (--batch-size) against
    token batches, another optimizer against Adam's values, a sampled softmax against label
    smoothing (defined on the whole one), no warm-up against a decay that starts at its end."""
    values = {name: value for name, value in recipe.training.items() if name not in explicit}
    if {"batch_size", "batch_tokens"} & explicit:  # one way to batch was chosen
        values.pop("batch_size", None)
        values.pop("batch_tokens", None)
    values = for_optimizer(values, settings.optimizer)
    if settings.sampled_softmax:
        values.pop("label_smoothing", None)
    if not values.get("warmup_updates", settings.warmup_updates):  # (None: the optimizer's, 0)
        values.pop("lr_schedule", None)
    return dataclasses.replace(settings, **values)


def recipe_model_options(recipe: Recipe, options, explicit: frozenset):
    """The model options (rescorer.models.settings.ModelOptions) with the recipe's value for each
    one not given on the command line."""
    return dataclasses.replace(options, **{name: value for name, value in recipe.model.items() if name not in explicit})


def recipe_default(recipe: Recipe, name: str) -> str:
    """How a help text says the recipe's value of `name`: '0.1 with --parallel'."""
    value = {**recipe.model, **recipe.training}[name]
    return f"{value:g} with {recipe.flag}" if isinstance(value, float) else f"{value} with {recipe.flag}"


def token_batch_learning_rate(model_width: Optional[int] = None) -> float:
    """Adam's default peak rate with token batches for a model `model_width` wide (None: as wide
    as `small`): 3e-3, scaled down by width above TOKEN_BATCH_ADAM_TUNED_WIDTH."""
    rate = TOKEN_BATCH_ADAM["learning_rate"]
    if model_width is None or model_width <= TOKEN_BATCH_ADAM_TUNED_WIDTH:
        return rate
    return rate * TOKEN_BATCH_ADAM_TUNED_WIDTH / model_width


def resolve_defaults(settings: dict, model_width: Optional[int] = None) -> dict:
    """The settings (a TrainSettings' fields) with those left None filled in, as training uses
    them: by the optimizer, the batches and the model's width (see TOKEN_BATCH_ADAM; None:
    `small`'s). A checkpoint records the filled-in values."""
    values = dict(settings)
    if values.get("subword_size") is None:
        values["subword_size"] = SUBWORD_SIZE
    if values.get("batch_tokens") is None and values.get("batch_size") is None:
        values["batch_tokens"] = DEFAULT_BATCH_TOKENS
    optimizer = values.get("optimizer")
    token_batches = values.get("batch_tokens") is not None
    token_adam = for_optimizer({**TOKEN_BATCH_ADAM, "learning_rate": token_batch_learning_rate(model_width)},
                               optimizer) if token_batches else {}
    if values.get("learning_rate") is None:
        values["learning_rate"] = token_adam.get("learning_rate", OPTIMIZER_LEARNING_RATE.get(optimizer))
    if values.get("warmup_updates") is None:
        values["warmup_updates"] = token_adam.get("warmup_updates", 0)
    if values.get("sampled_softmax") is None:  # label smoothing needs the whole softmax
        values["sampled_softmax"] = (TOKEN_BATCH_SAMPLED_WORDS if token_batches
                                     and not values.get("label_smoothing") else 0)
    return values
