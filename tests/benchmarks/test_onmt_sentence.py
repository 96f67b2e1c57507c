"""benchmarks/peers/onmt_sentence.py: the OpenNMT-py peer of the sentence benchmark is configured as
rescorer's Transformer (sizes, schedule, search) and batched like it (no OpenNMT-py needed)."""

from pathlib import Path

import numpy as np
import pytest

from benchmarks.peers.onmt_sentence import (Recipe, noam_rate, onmt_batch_count, onmt_batch_size,
                                            onmt_train_options, onmt_translate_args, write_onmt_vocab)
from rescorer.data.batching import length_sorted_batches
from rescorer.models.settings import ModelSettings
from rescorer.training.settings import schedule_share


def small_options(recipe=Recipe(), **changes):
    config = ModelSettings.make(arch="transformer", preset="small", dropout=recipe.dropout).config(1002, 1003)
    files = dict(src_text=Path("s.sp"), tgt_text=Path("t.sp"), src_vocab=Path("s.vocab"), tgt_vocab=Path("t.vocab"),
                 src_vocab_size=1003, tgt_vocab_size=1004, batch_size=1500, bucket_size=2000, steps=25,
                 save_model=Path("onmt"))
    return onmt_train_options(config, recipe, **{**files, **changes})


def test_options_have_the_small_transformers_sizes_and_recipe():
    options = small_options()
    assert (options["enc_layers"], options["dec_layers"], options["heads"]) == (3, 3, 4)
    assert (options["hidden_size"], options["word_vec_size"], options["transformer_ff"]) == (256, 256, 1024)
    assert options["share_decoder_embeddings"] is True and options["add_qkvbias"] is True
    assert options["dropout"] == [0.3] and options["attention_dropout"] == [0.3]
    assert options["label_smoothing"] == 0.1 and options["max_grad_norm"] == 1.0
    assert (options["batch_type"], options["batch_size"], options["normalization"]) == ("tokens", 1500, "sents")
    assert options["num_workers"] == 0 and options["train_steps"] == 25 and options["model_dtype"] == "fp32"


def test_options_refuse_a_model_that_is_not_a_transformer():
    config = ModelSettings.make(arch="cho2014", preset="tiny").config(100, 100)
    with pytest.raises(ValueError, match="cho2014"):
        onmt_train_options(config, Recipe(), src_text=Path("s"), tgt_text=Path("t"), src_vocab=Path("a"),
                           tgt_vocab=Path("b"), src_vocab_size=1, tgt_vocab_size=1, batch_size=1, bucket_size=1,
                           steps=1, save_model=Path("m"))


def test_noam_schedule_is_rescorers_inverse_sqrt_schedule():
    recipe, d = Recipe(learning_rate=1e-3, warmup_updates=1000), 256
    rate = noam_rate(recipe, d)
    for step in (1, 10, 999, 1000, 1001, 4000, 123456):
        noam = rate * d ** -0.5 * min(step ** -0.5, step * recipe.warmup_updates ** -1.5)
        assert noam == pytest.approx(recipe.learning_rate * schedule_share(step, 1000, "inverse-sqrt"))


def test_batch_count_follows_onmts_batch_iter():
    # sorted longest sides 3, 3, 3, 5: [3, 3] fills 6 exactly; [3] then 5 overflows, so [3], then [5]
    assert onmt_batch_count(np.array([2, 2, 2, 5]), np.array([1, 1, 1, 3]), 6) == 3
    assert onmt_batch_count(np.array([10]), np.array([1]), 4) == 1  # over the budget: a batch alone
    assert onmt_batch_count(np.array([1, 1, 1, 1]), np.array([1, 1, 1, 1]), 1000) == 1


def test_batch_size_gives_as_many_batches_as_rescorers_budget():
    rng = np.random.default_rng(3)
    src, tgt = rng.integers(1, 60, 3000), rng.integers(1, 70, 3000)
    rescorer_batches = sum(1 for _ in length_sorted_batches(src, tgt, 4000))
    size = onmt_batch_size(src, tgt, rescorer_batches)
    assert onmt_batch_count(src, tgt, size) <= rescorer_batches < onmt_batch_count(src, tgt, size - 1)
    assert onmt_batch_count(src, tgt, size) >= 0.97 * rescorer_batches


def test_translate_args_ask_for_the_benchmarks_search():
    args = onmt_translate_args(Path("m.pt"), Path("in.sp"), Path("out"), Recipe(), 1.5)
    options = dict(zip(args[::2], args[1::2]))
    assert options["-beam_size"] == "5" and options["-length_penalty"] == "wu" and options["-alpha"] == "0.6"
    assert options["-batch_size"] == "32" and options["-batch_type"] == "sents"
    assert options["-max_length_ratio"] == "1.5" and options["-min_length"] == "1"
    with pytest.raises(ValueError, match="slack"):
        onmt_translate_args(Path("m.pt"), Path("in.sp"), Path("out"), Recipe(length_slack=10), 1.5)


def test_forced_steps_bound_the_length_from_both_sides_and_drop_the_ratio():
    args = onmt_translate_args(Path("m.pt"), Path("in.sp"), Path("out"), Recipe(), 1.5, forced_steps=31)
    options = dict(zip(args[::2], args[1::2]))
    assert options["-min_length"] == options["-max_length"] == "31" and options["-max_length_ratio"] == "0"
    assert len(options) == len(args) // 2  # each option once


def test_vocab_lines_are_pieces_with_counts_and_refuse_white_space(tmp_path):
    path = tmp_path / "v"
    write_onmt_vocab(["\u2581the", "<0x41>", "s"], path)
    assert path.read_text(encoding="utf-8").splitlines() == ["\u2581the 3", "<0x41> 2", "s 1"]
    with pytest.raises(ValueError, match="white space"):
        write_onmt_vocab(["a\u00a0b"], path)
