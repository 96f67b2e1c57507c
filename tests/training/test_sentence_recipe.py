"""The sentence recipe (rescorer.training.recipes.SENTENCE_RECIPE) as `rescore train --parallel`'s
defaults: what a run records when told nothing, each option given winning over it, a phrase
table's training untouched, and the default subword size fitted to a corpus too small for it."""

import pytest

from rescorer.data.subwords import SubwordModel
from rescorer.models.model_files import read_model_file
from rescorer.records import SettingError
from rescorer.training.pair_job import training_source
from rescorer.training.resume import recorded_training
from rescorer.training.recipes import SENTENCE_RECIPE, SUBWORD_SIZE
from rescorer.training.settings import TrainSettings

SENTENCE_MODEL_RECIPE, SENTENCE_TRAINING_RECIPE = SENTENCE_RECIPE.model, SENTENCE_RECIPE.training
from tests.helpers import EXAMPLE_TABLE, SHARED, first_lines, rescore

CORPUS = SHARED / "data" / "bible-en-fr" / "corpus"
TINY = ["--preset", "tiny", "--valid-pairs", "20", "--valid-every", "10", "--seed", "3", "--max-updates", "1"]


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """The corpus's first 120 verses: too little text for SUBWORD_SIZE pieces a side."""
    directory = tmp_path_factory.mktemp("corpus")
    return (first_lines(CORPUS / "train.en.gz", 120, directory / "train.en"),
            first_lines(CORPUS / "train.fr.gz", 120, directory / "train.fr"))


def _trained(tmp_path, *args) -> tuple[dict, dict, dict, str]:
    """(recorded training fields, model config, the model file, what the run said)."""
    model = tmp_path / "m.pt"
    run = rescore("train", *args, "-o", model, *TINY)
    assert run.returncode == 0, run.stderr
    payload = read_model_file(model)
    return recorded_training(payload["training"])[0], payload["config"], payload, run.stderr


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")


@needs_corpus
def test_a_parallel_run_told_nothing_trains_with_the_recipe(tmp_path, sides):
    fields, config, payload, said = _trained(tmp_path, "--parallel", *sides)
    assert {name: fields[name] for name in SENTENCE_TRAINING_RECIPE} == SENTENCE_TRAINING_RECIPE
    assert (fields["subwords"], fields["label_smoothing"], fields["batch_tokens"]) == ("bpe", 0.1, 4000)
    assert (config["arch"], config["dropout"]) == ("transformer", 0.3) == tuple(SENTENCE_MODEL_RECIPE.values())
    assert fields["optimizer"] == "adam" and fields["sampled_softmax"] == 0  # label smoothing: the whole softmax
    signature = said.splitlines()[0]
    for item in ("arch:transformer", "dropout:0.3", "subwords:bpe", "label-smoothing:0.1", "weight-decay:0.0001",
                 "lr-schedule:inverse-sqrt", "warmup-updates:1000", "learning-rate:0.001", "batch-tokens:4000",
                 "average:5", "patience:8", "max-pair-length:80"):
        assert f"|{item}|" in signature, item
    # the default size on a corpus too small for it: all the pieces each side allows
    pieces = [_pieces(payload, side) for side in ("source", "target")]
    assert all(256 < count < SUBWORD_SIZE for count in pieces)
    assert (f"{pieces[0]} source, {pieces[1]} target pieces (fewer than the default {SUBWORD_SIZE}: all that the "
            f"corpus allows)") in said
    assert fields["subword_size"] == SUBWORD_SIZE


def _pieces(payload, side) -> int:
    return len(SubwordModel.from_stored(payload["subwords"][side]).pieces)


@needs_corpus
def test_a_subword_size_given_is_learned_exactly_or_refused(tmp_path, sides):
    run = rescore("train", "--parallel", *sides, "-o", tmp_path / "m.pt", *TINY, "--subword-size", "8000")
    assert run.returncode == 1 and "too little text for --subword-size 8000: it allows at most" in run.stderr


@needs_corpus
@pytest.mark.parametrize("given, model, training", [
    (["--arch", "cho2014", "--dropout", "0"], {"arch": "cho2014", "dropout": 0.0}, {"subwords": "bpe"}),
    (["--subwords", "none", "--batch-size", "8"], {"arch": "transformer", "dropout": 0.3},
     {"subwords": "none", "batch_size": 8, "batch_tokens": None, "label_smoothing": 0.1, "warmup_updates": 1000}),
])
def test_an_option_given_wins_over_the_recipe(tmp_path, sides, given, model, training):
    fields, config, payload, said = _trained(tmp_path, "--parallel", *sides, *given)
    assert {name: config[name] for name in model} == model
    assert {name: fields[name] for name in training} == training
    assert ("subwords" in payload) == (training["subwords"] != "none")
    assert fields["average"] == 5  # the recipe's, not given


def _settings(explicit: dict, **extra) -> TrainSettings:
    corpus = (str(EXAMPLE_TABLE), str(EXAMPLE_TABLE))  # training_source only checks they can be reread
    _, settings = training_source(None, corpus, TrainSettings(**explicit, **extra), frozenset(explicit))
    return settings


@pytest.mark.parametrize("explicit, expected", [
    ({}, {**SENTENCE_TRAINING_RECIPE, "subword_size": None}),
    # Adadelta keeps its own rate and no warm-up, so no decay from one; the decay measured was AdamW's
    ({"optimizer": "adadelta"}, {"learning_rate": None, "warmup_updates": None, "lr_schedule": "constant",
                                 "weight_decay": 0.0, "label_smoothing": 0.1}),
    ({"warmup_updates": 0}, {"warmup_updates": 0, "lr_schedule": "constant", "learning_rate": 1e-3}),
    ({"sampled_softmax": 64}, {"sampled_softmax": 64, "label_smoothing": 0.0, "batch_tokens": 4000}),
    ({"batch_size": 16}, {"batch_size": 16, "batch_tokens": None}),
    ({"batch_tokens": 500, "patience": 2}, {"batch_tokens": 500, "patience": 2, "average": 5}),
    ({"subwords": "none", "shortlist_size": 100}, {"subwords": "none", "shortlist_size": 100, "subword_size": None}),
    ({"max_pair_length": 30, "lr_schedule": "constant"}, {"max_pair_length": 30, "lr_schedule": "constant"}),
])
def test_the_recipe_steps_aside_for_what_is_given(explicit, expected):
    settings = _settings(explicit)
    assert {name: getattr(settings, name) for name in expected} == expected
    settings.resolved()  # and the result goes together


def test_a_resumed_run_takes_the_checkpoints_values_not_the_recipes():
    """Under --resume what is not given is the checkpoint's (rescorer.training.pair_job.resumed), so a
    checkpoint trained before the recipe (words, no smoothing) resumes as it was."""
    settings = _settings({}, resume=True)
    assert settings == TrainSettings(resume=True)


@pytest.mark.parametrize("explicit, said", [
    ({"shortlist_size": 100}, "--shortlist-size: with --subwords bpe the vocabularies are the subword models' "
                              "pieces; size them with --subword-size (drop --shortlist-size, or give --subwords "
                              "none for a model of words)"),
    ({"subwords": "none", "subword_size": 500}, "--subword-size: only with --subwords bpe or unigram"),
])
def test_settings_that_do_not_go_with_the_recipes_subwords(explicit, said):
    with pytest.raises(SettingError, match="^" + said.replace("(", r"\(").replace(")", r"\)")):
        _settings(explicit)


def test_a_phrase_tables_training_is_unchanged(tmp_path):
    table = first_lines(EXAMPLE_TABLE, 60, tmp_path / "t.gz")
    fields, config, payload, said = _trained(tmp_path, table)
    assert (config["arch"], config["dropout"], "subwords" in payload) == ("cho2014", 0.0, False)
    asked = TrainSettings(valid_pairs=20, valid_every=10, seed=3, max_updates=1)
    assert fields == {**asked.resolved().stored()["fields"], "shortlist_size": fields["shortlist_size"]}
    assert (fields["subwords"], fields["label_smoothing"], fields["weight_decay"], fields["lr_schedule"],
            fields["learning_rate"], fields["warmup_updates"], fields["batch_tokens"], fields["sampled_softmax"],
            fields["average"], fields["patience"], fields["max_pair_length"]) == (
        "none", 0.0, 0.0, "constant", 3e-3, 100, 3000, 2048, 0, 4, 50)
