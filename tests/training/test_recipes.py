"""The recipes (rescorer.training.recipes): one function applies each kind's, the Adam-only rule
holds in all three layers, and every option's help states the values the recipes give it."""

import pytest
from click.testing import CliRunner

from rescorer.cli.main import main
from rescorer.models.settings import ModelOptions
from rescorer.records import settings_of
from rescorer.training.lm_job import lm_train_settings
from rescorer.training.recipes import (ADAM_ONLY, LM_RECIPE, SENTENCE_RECIPE, apply_recipe, recipe_model_options,
                                       resolve_defaults)
from rescorer.training.settings import TrainSettings

RECIPES = {"sentence": SENTENCE_RECIPE, "lm": LM_RECIPE}


@pytest.mark.parametrize("name", RECIPES)
def test_a_run_told_nothing_gets_the_whole_recipe(name):
    recipe = RECIPES[name]
    settings = apply_recipe(recipe, TrainSettings(), frozenset())
    assert {field: getattr(settings, field) for field in recipe.training} == dict(recipe.training)
    assert recipe_model_options(recipe, ModelOptions(), frozenset()).dropout == recipe.model["dropout"]


@pytest.mark.parametrize("name", RECIPES)
def test_an_option_given_wins_over_every_recipe(name):
    recipe = RECIPES[name]
    given = {field: None for field in recipe.training if field in ("learning_rate", "patience")}
    settings = apply_recipe(recipe, TrainSettings(patience=2, learning_rate=0.5), frozenset(given))
    assert (settings.patience, settings.learning_rate) == (2, 0.5)
    assert recipe_model_options(recipe, ModelOptions(dropout=0.1), frozenset({"dropout"})).dropout == 0.1


@pytest.mark.parametrize("name", RECIPES)
def test_another_optimizer_keeps_its_own_defaults_in_every_recipe(name):
    """The Adam-only rule, written once, for the sentence and LM recipes and the resolved
    defaults alike: Adadelta trains at its own 1.0 with no warm-up."""
    settings = apply_recipe(RECIPES[name], TrainSettings(optimizer="adadelta"), frozenset({"optimizer"}))
    assert all(getattr(settings, field) == getattr(TrainSettings(), field) for field in ADAM_ONLY)
    resolved = settings.resolved()
    assert (resolved.learning_rate, resolved.warmup_updates) == (1.0, 0)


@pytest.mark.parametrize("optimizer, batches, rate, warmup", [
    ("adam", {}, 3e-3, 100),  # token batches: the measured Adam defaults
    ("adadelta", {}, 1.0, 0),  # the Adam-only rule in the resolved defaults
    ("adam", {"batch_size": 64, "batch_tokens": None}, 1e-3, 0),
    ("adadelta", {"batch_size": 64, "batch_tokens": None}, 1.0, 0),
])
def test_the_resolved_learning_rate_follows_the_optimizer_and_the_batches(optimizer, batches, rate, warmup):
    values = resolve_defaults({**vars(TrainSettings(optimizer=optimizer, **batches))})
    assert (values["learning_rate"], values["warmup_updates"]) == (rate, warmup)


def test_the_lm_recipe_is_what_an_lm_run_trains_with():
    settings = lm_train_settings(TrainSettings(), frozenset())
    assert apply_recipe(LM_RECIPE, TrainSettings(), frozenset()) == settings
    assert (settings.batch_size, settings.learning_rate, settings.lr_decay) == (1024, 5e-3, 0.5)


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _helps() -> dict:
    """Each `rescore train` option's help, as --help prints it, by parameter name."""
    command = main.commands["train"]
    context = command.make_context("train", ["--help"], resilient_parsing=True)
    return {param.name: " ".join(param.get_help_record(context)[1].split()) for param in command.params
            if param.get_help_record(context)}


def test_every_option_states_the_recipes_values():
    """A recipe's value changed is a help text changed: none is written out by hand."""
    helps = _helps()
    fields = {field.name for field, _ in settings_of(TrainSettings)}
    for recipe in RECIPES.values():
        for name, value in {**recipe.training, **recipe.model}.items():
            assert name in fields or name in ("arch", "dropout")
            assert _shown(value) in helps[name], (recipe.flag, name, helps[name])
            assert recipe.flag in helps[name], (recipe.flag, name, helps[name])


def test_the_command_line_shows_the_lm_dropout():
    said = CliRunner().invoke(main, ["train", "--help"]).output
    assert "0.3 with --parallel; 0.2 with --lm]" in " ".join(said.split())
