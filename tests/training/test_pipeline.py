"""Training on real phrase pairs: it learns, it repeats exactly, it resumes exactly."""

import math

import numpy as np
import pytest
import torch

from rescorer.data.pair_cache import build_pair_cache
from rescorer.data.vocabulary import Vocabulary
from rescorer.errors import RescorerError
from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.model_files import read_model_file
from rescorer.training.pipeline import train_on_table
from rescorer.training.recipes import SUBWORD_SIZE
from rescorer.training.trainer import (PairSplit, TrainSettings, evaluate_perplexity, heldout_mask,
                                       unigram_perplexity)
from tests.helpers import gz_lines, rescore
from tests.training.trainers import tiny_trainer as make_trainer

CPU = torch.device("cpu")
PAPER_RECIPE = dict(batch_size=64, batch_tokens=None, optimizer="adadelta")  # Cho et al.'s training




@pytest.mark.parametrize("arch, updates", [("cho2014", 150), ("rnnsearch", 150), ("luong", 200)])
def test_short_training_lowers_validation_perplexity_below_unigram(example_cache, tmp_path, arch, updates):
    trainer = make_trainer(example_cache, tmp_path, arch, optimizer="adam", learning_rate=1e-2,
                           max_updates=updates, valid_every=updates // 2, batch_size=64, batch_tokens=None)
    vocab_size = len(trainer.bundle.tgt_vocab)
    before = evaluate_perplexity(trainer.model, trainer.cache, trainer.split.valid, CPU, "fp32")
    assert before == pytest.approx(vocab_size, rel=0.05)  # N(0, 0.01) weights: near uniform
    unigram = unigram_perplexity(trainer.cache, trainer.split, vocab_size)
    state = trainer.train()
    assert state.updates == updates
    assert state.best_valid_ppl < unigram < before / 5


def test_adadelta_as_in_the_paper_also_learns(example_cache, tmp_path):
    trainer = make_trainer(example_cache, tmp_path, max_updates=150, valid_every=150, optimizer="adadelta",
                           batch_size=64, batch_tokens=None)
    before = evaluate_perplexity(trainer.model, trainer.cache, trainer.split.valid, CPU, "fp32")
    state = trainer.train()
    assert state.best_valid_ppl < 0.5 * before
    assert isinstance(trainer.optimizer, torch.optim.Adadelta)
    assert trainer.optimizer.defaults["eps"] == 1e-6 and trainer.optimizer.defaults["rho"] == 0.95


@pytest.mark.parametrize("recipe", [{}, PAPER_RECIPE], ids=["default", "paper"])
def test_training_with_a_seed_repeats_exactly(example_cache, tmp_path, recipe):
    first = make_trainer(example_cache, tmp_path, max_updates=15, **recipe)
    second = make_trainer(example_cache, tmp_path, max_updates=15, **recipe)
    first.train(), second.train()
    for (name, a), b in zip(first.model.state_dict().items(), second.model.state_dict().values()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("recipe", [{}, PAPER_RECIPE], ids=["default", "paper"])
def test_resumed_training_equals_uninterrupted(example_table, tmp_path, recipe):
    """Token batches, Adam's warm-up and the sampled words of update u depend on (seed, u) alone:
    a run stopped at update 10 (inside the warm-up) and resumed ends with the same weights."""
    settings = dict(valid_pairs=200, valid_every=10, checkpoint_every=10, seed=2, **recipe)
    straight = tmp_path / "straight.pt"
    train_on_table(example_table, straight, preset="tiny",
                   settings=TrainSettings(max_updates=20, **settings))
    resumed = tmp_path / "resumed.pt"
    train_on_table(example_table, resumed, preset="tiny",
                   settings=TrainSettings(max_updates=10, **settings))
    train_on_table(example_table, resumed, preset="tiny",
                   settings=TrainSettings(max_updates=20, resume=True, **settings))
    a = read_model_file(checkpoint_path_for(straight))
    b = read_model_file(checkpoint_path_for(resumed))
    assert a["training"]["state"]["updates"] == b["training"]["state"]["updates"] == 20
    assert sorted(a["weights"]) == sorted(b["weights"])
    for name in a["weights"]:
        assert torch.equal(a["weights"][name], b["weights"][name]), name


def test_held_out_pairs_never_enter_training_batches():
    split = PairSplit(num_pairs=5000, seed=9, valid_pairs=250)
    assert 150 < len(split.valid) < 350
    drawn = np.concatenate([split.train_batch(update, 64) for update in range(200)])
    assert not np.isin(drawn, split.valid).any()
    assert len(np.unique(drawn)) > 3000  # uniform over the rest, not a fixed subset
    np.testing.assert_array_equal(split.train_batch(7, 64), split.train_batch(7, 64))


@pytest.mark.parametrize("num_pairs", [2, 3, 5])
def test_a_table_of_a_few_pairs_still_holds_one_out(num_pairs):
    """The hashed slice of 2-5 pairs is mostly empty: one pair, drawn by the seed, is held out
    instead, and never drawn for training (without it the untrained initial weights were kept)."""
    for seed in range(1, 30):
        split = PairSplit(num_pairs=num_pairs, seed=seed, valid_pairs=2000)
        assert 1 <= len(split.valid) < num_pairs, seed
        drawn = np.concatenate([split.train_batch(update, 8) for update in range(20)])
        assert not np.isin(drawn, split.valid).any()
        assert not np.isin(split.train_indices(), split.valid).any()
        np.testing.assert_array_equal(split.valid, PairSplit(num_pairs, seed, 2000).valid)


def test_one_pair_cannot_be_split():
    with pytest.raises(RescorerError, match="1 pair to train on: too few to hold one out"):
        PairSplit(num_pairs=1, seed=1, valid_pairs=2000)


def _table_of(lines, path):
    import gzip

    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return path


def test_training_on_three_pairs_validates_and_keeps_a_trained_model(example_table, tmp_path):
    """Case 6 of issue 32: no pair was held out, so the model written was the untrained one
    ("valid perplexity inf (update 0)", unigram nan and a numpy warning)."""
    import gzip

    table = _table_of(gzip.decompress(example_table.read_bytes()).split(b"\n")[:3], tmp_path / "t3.gz")
    run = rescore("train", table, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-updates", "3")
    assert run.returncode == 0, run.stderr
    summary = next(line for line in run.stderr.splitlines() if line.startswith("trained on"))
    assert summary.startswith("trained on 2 pairs (1 held out): 3 updates")
    assert "(update 3;" in summary and "inf" not in summary and "nan" not in summary  # "; honest ..."
    assert "Warning" not in run.stderr
    state = read_model_file(tmp_path / "m.pt")["training"]["state"]
    assert state["best_update"] == 3 and math.isfinite(state["best_valid_ppl"])


def test_training_on_one_pair_is_refused_and_writes_nothing(example_table, tmp_path):
    import gzip

    table = _table_of(gzip.decompress(example_table.read_bytes()).split(b"\n")[:1], tmp_path / "t1.gz")
    run = rescore("train", table, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-updates", "3")
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (f"Error: {table}: 1 pair to train on: training holds one pair "
                                           f"out for validation and needs another to train on")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t1.gz"]


def test_a_bound_that_leaves_every_pair_out_says_so_and_keeps_no_cache(example_table, tmp_path):
    """Case 19 of issue 32: "no pairs to train on", without saying why, and an empty MODEL.cache."""
    table = _table_of(gz_lines(example_table, 40), tmp_path / "t.gz")
    run = rescore("train", table, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-pair-length", "1")
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (f"Error: {table}: no pairs to train on: all 40 pairs have a side "
                                           f"longer than --max-pair-length 1 words (0: no bound)")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t.gz"]


def test_a_diverged_training_says_its_pair_cache_is_kept(example_cache, tmp_path):
    trainer = make_trainer(example_cache, tmp_path, learning_rate=1e30, max_updates=50)
    with pytest.raises(RescorerError, match=r"training diverged at update \d+: .*no checkpoint was written; "
                                            r"the pair cache .*pairs is kept, so a new run skips encoding"):
        trainer.train()


def test_heldout_mask_depends_on_seed():
    indices = np.arange(10_000)
    assert (heldout_mask(indices, 1, 0.1) != heldout_mask(indices, 2, 0.1)).any()
    assert heldout_mask(indices, 1, 0.1).mean() == pytest.approx(0.1, abs=0.02)


def test_unigram_perplexity_by_hand(tmp_path):
    vocab = Vocabulary(["[PAD]", "[UNK]", "[EOS]", "a", "b"])
    pairs = [("x", "a a"), ("x", "b")] * 50
    cache = build_pair_cache(pairs, vocab, vocab, tmp_path / "c", {"t": 1})
    split = PairSplit(cache.num_pairs, seed=1, valid_pairs=10)
    valid = set(split.valid.tolist())
    train_tgt = [pairs[i][1].split() for i in range(100) if i not in valid]
    valid_tgt = [pairs[i][1].split() for i in sorted(valid)]
    counts = {w: 1 + sum(s.count(w) for s in train_tgt) for w in ["[PAD]", "[UNK]", "a", "b"]}
    counts["[EOS]"] = 1 + len(train_tgt)
    total = sum(counts.values())
    tokens = [w for s in valid_tgt for w in s + ["[EOS]"]]
    want = math.exp(-sum(math.log(counts[w] / total) for w in tokens) / len(tokens))
    assert unigram_perplexity(cache, split, len(vocab)) == pytest.approx(want, rel=1e-9)


def test_pairs_longer_than_the_bound_are_left_out_of_training_and_counted(tmp_path):
    """One 10,000-word target made every update of its batch take minutes: it is left out of the
    pair cache (counted), the other pairs are kept in order, and a cache built with another
    bound is not reused."""
    specials = ["[PAD]", "[UNK]", "[EOS]"]
    src_vocab, tgt_vocab = Vocabulary(specials + ["a", "b"]), Vocabulary(specials + ["x", "y"])
    pairs = [("a", "x"), ("a b", " ".join(["y"] * 10_000)), ("b", "x y")]
    cache = build_pair_cache(iter(pairs), src_vocab, tgt_vocab, tmp_path / "c", {"t": 1}, max_length=50)
    assert (cache.num_pairs, cache.too_long) == (2, 1)
    assert cache.lengths("tgt").tolist() == [1, 2]
    unbounded = build_pair_cache(iter(pairs), src_vocab, tgt_vocab, tmp_path / "u", {"t": 1})
    assert (unbounded.num_pairs, unbounded.too_long) == (3, 0)


def test_training_reports_the_pairs_the_bound_left_out(example_table, tmp_path):
    import gzip

    lines = gzip.decompress(example_table.read_bytes()).split(b"\n")[:300]
    lines.append(b"x ||| " + b" ".join([b"w"] * 10_000) + b" ||| 1 1 1 1 ||| ||| 1 1 1")
    table = tmp_path / "long.gz"
    table.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    report = train_on_table(table, tmp_path / "m.pt", preset="tiny",
                            settings=TrainSettings(max_updates=3, valid_pairs=20, valid_every=3))
    assert report.too_long == 1 and report.num_pairs == 300  # the table's 300 other pairs


def test_defaults_follow_the_batches():
    """Token batches bring the benchmarked recipe (Adam 3e-3, 100 warm-up updates, 2048 sampled
    words); the paper's random pairs keep every earlier default, and the checkpoint records them
    (the subword size too, SUBWORD_SIZE when not given: a model of words ignores it)."""
    assert TrainSettings().resolved() == TrainSettings(
        batch_tokens=3000, optimizer="adam", learning_rate=3e-3, warmup_updates=100, sampled_softmax=2048,
        subword_size=SUBWORD_SIZE)
    paper = TrainSettings(**PAPER_RECIPE).resolved()
    assert (paper.learning_rate, paper.warmup_updates, paper.sampled_softmax) == (1.0, 0, 0)
    adam_pairs = TrainSettings(batch_size=64, batch_tokens=None).resolved()
    assert (adam_pairs.learning_rate, adam_pairs.warmup_updates, adam_pairs.sampled_softmax) == (1e-3, 0, 0)


def test_warm_up_raises_the_learning_rate_linearly(example_cache, tmp_path):
    trainer = make_trainer(example_cache, tmp_path, max_updates=4, warmup_updates=4, learning_rate=0.01)
    seen = []
    for _ in range(6):
        trainer.step()
        seen.append(trainer.optimizer.param_groups[0]["lr"])
    assert seen == pytest.approx([0.0025, 0.005, 0.0075, 0.01, 0.01, 0.01])
