"""The honest held-out pairs: those that no training pair contains on both sides at once."""

import numpy as np
import pytest

from rescorer.training import honest_heldout as honest
from rescorer.data.pair_cache import build_pair_cache
from rescorer.data.vocabulary import Vocabulary

SPECIALS = ["[PAD]", "[UNK]", "[EOS]"]

PAIRS = [
    ("a b c", "x y z"),  # 0 train
    ("d e", "u v"),      # 1 train
    ("b c", "y z"),      # 2 held out: both sides are spans of pair 0: a sub-pair
    ("b c", "u v"),      # 3 held out: source in pair 0, target in pair 1, never together: honest
    ("a c", "x z"),      # 4 held out: not contiguous in pair 0: honest
    ("d", "v"),          # 5 held out: a sub-pair of pair 1
    ("e f", "w"),        # 6 held out: honest
    ("e", "w"),          # 7 held out: only inside held-out pair 6, which is no training pair: honest
    ("c b", "z y"),      # 8 held out: the words of pair 0 in another order: honest
    ("a b c", "x y z w"),  # 9 held out: longer than any training pair on one side: honest
]


def cache_of(pairs, tmp_path):
    words = sorted({w for pair in pairs for side in pair for w in side.split()})
    vocab = Vocabulary(SPECIALS + words)
    return build_pair_cache(pairs, vocab, vocab, tmp_path / "cache", {"t": 1})


def test_a_sub_pair_needs_both_sides_inside_one_training_pair(tmp_path):
    cache = cache_of(PAIRS, tmp_path)
    heldout = np.arange(2, len(PAIRS))
    mask = honest.sub_pair_mask(cache, heldout, np.array([0, 1]))
    assert heldout[~mask].tolist() == [3, 4, 6, 7, 8, 9]
    assert heldout[mask].tolist() == [2, 5]


def brute_force(pairs, heldout, train):
    def is_span(needle, haystack):
        return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))
    return np.array([any(is_span(pairs[h][0].split(), pairs[p][0].split())
                         and is_span(pairs[h][1].split(), pairs[p][1].split()) for p in train)
                     for h in heldout])


def test_blocks_of_pairs_find_what_a_brute_force_search_finds(tmp_path, monkeypatch):
    """Random pairs over a 3-word vocabulary, so that many held-out pairs are sub-pairs; spans
    hashed a few pairs at a time, so that pairs straddle the blocks' edges."""
    rng = np.random.default_rng(5)
    pairs = [(" ".join(rng.choice(list("abc"), rng.integers(1, 6))),
              " ".join(rng.choice(list("xyz"), rng.integers(1, 6)))) for _ in range(300)]
    cache = cache_of(pairs, tmp_path)
    heldout, train = np.arange(0, 300, 7), np.setdiff1d(np.arange(300), np.arange(0, 300, 7))
    monkeypatch.setattr(honest, "_BLOCK_PAIRS", 5)
    mask = honest.sub_pair_mask(cache, heldout, train)
    want = brute_force(pairs, heldout, train)
    assert 0 < want.sum() < len(heldout)  # both kinds occur, or the test says nothing
    assert mask.tolist() == want.tolist()


def test_both_perplexities_come_from_one_set_of_log_probs(tmp_path):
    """The held-out figure is the trainer's evaluate_perplexity, bit for bit, and the honest one
    is evaluate_perplexity on the held-out pairs that brute force finds in no training pair."""
    import torch

    from rescorer.models import ModelSettings, build_model
    from rescorer.training.trainer import PairSplit, evaluate_perplexity, pair_log_probs

    rng = np.random.default_rng(6)
    pairs = [(" ".join(rng.choice(list("abc"), rng.integers(1, 5))),
              " ".join(rng.choice(list("xyz"), rng.integers(1, 5)))) for _ in range(200)]
    cache = cache_of(pairs, tmp_path)
    split = PairSplit(cache.num_pairs, seed=1, valid_pairs=20)
    want = split.valid[~brute_force(pairs, split.valid, split.train_indices())]
    assert 0 < len(want) < len(split.valid)
    torch.manual_seed(0)
    model = build_model(ModelSettings.make("cho2014", "tiny").config(len(SPECIALS) + 6, len(SPECIALS) + 6))
    cpu = torch.device("cpu")
    found = honest.find_honest_heldout(cache, split)
    assert (found.honest.tolist(), found.num_honest) == (want.tolist(), len(want))
    heldout, honest_ppl = found.perplexities(pair_log_probs(model, cache, split.valid, cpu, "fp32"))
    assert heldout == evaluate_perplexity(model, cache, split.valid, cpu, "fp32")
    assert honest_ppl == pytest.approx(evaluate_perplexity(model, cache, want, cpu, "fp32"), rel=1e-12)


def test_no_honest_pair_gives_no_honest_perplexity(tmp_path):
    cache = cache_of(PAIRS, tmp_path)
    found = honest.HonestHeldout(cache, np.array([2, 5]), np.array([], dtype=np.int64))
    heldout, honest_ppl = found.perplexities(np.array([-1.0, -2.0]))
    tokens = cache.lengths("tgt")[[2, 5]].sum() + 2
    assert (heldout, honest_ppl, found.num_honest) == (pytest.approx(np.exp(3.0 / tokens)), None, 0)


# -- training on a phrase table reports it -----------------------------------------------------
SEED = 3
HELD_OUT = [4, 12, 17, 25, 38]  # PairSplit(40 pairs, seed 3)'s hashed slice
TRAINING_PAIRS = {0: ("a b c", "x y z"), 1: ("d e", "u v")}
MIXED = {4: ("b c", "y z"),     # both sides spans of training pair 0: a sub-pair
         12: ("b c", "u v"),    # source in pair 0, target in pair 1: honest
         17: ("a c", "x z"),    # not contiguous in pair 0: honest
         25: ("d", "v"),        # a sub-pair of pair 1
         38: ("c d", "z u")}    # spans across two training pairs: honest
ALL_SUB_PAIRS = {4: ("b c", "y z"), 12: ("a b", "x y"), 17: ("c", "z"), 25: ("d", "v"), 38: ("e", "u v")}
RECIPE = dict(seed=SEED, batch_size=8, batch_tokens=None, valid_every=3, checkpoint_every=3)


def hand_built_table(path, heldout):
    """40 table lines: two training pairs that the held-out ones are cut from, fillers of
    words of their own, and the held-out pairs where the split holds pairs out."""
    import gzip

    pairs = [TRAINING_PAIRS.get(i) or heldout.get(i) or (f"f{i} g{i}", f"p{i} q{i}") for i in range(40)]
    path.write_bytes(gzip.compress("".join(f"{s} ||| {t} ||| 1 1 1 1 ||| ||| 1 1 1\n" for s, t in pairs).encode()))
    return path, pairs


def honest_ppl_by_scoring(model_path, pairs, indices):
    """exp(mean negative log-likelihood per target token, [EOS] included) of these pairs, as the
    scorer scores them with the model file's weights."""
    from rescorer.models.model_files import load_model
    from rescorer.scoring.batch_scoring import score_pairs

    chosen = [pairs[i] for i in indices]
    logp = score_pairs(load_model(model_path), chosen, device="cpu", precision="fp32")
    return float(np.exp(-logp.sum() / sum(len(t.split()) + 1 for _, t in chosen)))


def honest_unigram_by_hand(model_path, heldout) -> float:
    """The add-one unigram model of the training pairs' targets (every id of the target vocabulary
    counted once more, [EOS] once per pair) on the honest pairs of MIXED, 12, 17 and 38."""
    import math
    from collections import Counter

    from rescorer.models.model_files import load_model

    vocab = load_model(model_path).tgt_vocab
    _, pairs = hand_built_table(model_path.with_name("again.gz"), heldout)

    def tokens(indices):
        return [w if vocab.is_known(w) else "[UNK]" for i in indices for w in pairs[i][1].split()] + \
            ["[EOS]"] * len(indices)

    counts = Counter(tokens([i for i in range(len(pairs)) if i not in HELD_OUT]))
    total = sum(counts.values()) + len(vocab)
    tokens = tokens([12, 17, 38])
    return math.exp(-sum(math.log((counts[w] + 1) / total) for w in tokens) / len(tokens))


def test_the_honest_pairs_come_with_the_unigram_models_perplexity_on_them(tmp_path):
    """The summary's unigram figure is on all held-out pairs; the honest pairs get their own, so
    that the honest perplexity has a floor to be read against (issue 45's class: a perplexity
    with no reference point)."""
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.trainer import TrainSettings

    table, _ = hand_built_table(tmp_path / "t.gz", MIXED)
    report = train_on_table(table, tmp_path / "m.pt", preset="tiny", settings=TrainSettings(max_updates=3, **RECIPE))
    assert report.honest_unigram_ppl == pytest.approx(honest_unigram_by_hand(tmp_path / "m.pt", MIXED), rel=1e-12)
    assert report.honest_unigram_ppl != pytest.approx(report.unigram_ppl, rel=1e-3)  # not the other figure
    table, _ = hand_built_table(tmp_path / "sub.gz", ALL_SUB_PAIRS)
    assert train_on_table(table, tmp_path / "sub.pt", preset="tiny",
                          settings=TrainSettings(max_updates=3, **RECIPE)).honest_unigram_ppl is None


def test_training_on_a_table_reports_the_honest_pairs_perplexity(tmp_path):
    from rescorer.io.file_names import checkpoint_path_for
    from rescorer.models.model_files import read_model_file
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.trainer import PairSplit, TrainSettings

    assert PairSplit(40, SEED, 2000).valid.tolist() == HELD_OUT
    table, pairs = hand_built_table(tmp_path / "t.gz", MIXED)
    model = tmp_path / "m.pt"
    report = train_on_table(table, model, preset="tiny", settings=TrainSettings(max_updates=6, **RECIPE))
    assert (report.valid_pairs, report.honest_pairs) == (5, 3)
    assert read_model_file(checkpoint_path_for(model))[honest.CHECKPOINT_KEY] == [12, 17, 38]
    training = read_model_file(model)["training"]
    assert (training["valid_pairs"], training["honest_pairs"]) == (5, 3)
    state = training["state"]
    assert state["honest_ppl_at_best"] == pytest.approx(honest_ppl_by_scoring(model, pairs, [12, 17, 38]), rel=1e-5)
    assert state["best_valid_ppl"] == pytest.approx(honest_ppl_by_scoring(model, pairs, HELD_OUT), rel=1e-5)
    assert abs(state["honest_ppl_at_best"] - state["best_valid_ppl"]) > 1e-3  # two figures, not one twice


def test_a_resumed_run_keeps_the_checkpoints_honest_pairs_and_figures(tmp_path, monkeypatch):
    """Resumed, the honest pairs are the checkpoint's (not searched for again), and every figure
    equals an uninterrupted run's."""
    from rescorer.io.file_names import checkpoint_path_for
    from rescorer.models.model_files import read_model_file
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.trainer import TrainSettings

    table, _ = hand_built_table(tmp_path / "t.gz", MIXED)
    straight, resumed = tmp_path / "straight.pt", tmp_path / "resumed.pt"
    train_on_table(table, straight, preset="tiny", settings=TrainSettings(max_updates=9, **RECIPE))
    train_on_table(table, resumed, preset="tiny", settings=TrainSettings(max_updates=3, **RECIPE))

    def searched(*args):
        raise AssertionError("a resumed run searched for the honest pairs again")

    monkeypatch.setattr(honest, "honest_heldout", searched)
    report = train_on_table(table, resumed, preset="tiny", settings=TrainSettings(max_updates=9, resume=True, **RECIPE))
    assert report.honest_pairs == 3
    a, b = (read_model_file(checkpoint_path_for(path)) for path in (straight, resumed))
    assert a[honest.CHECKPOINT_KEY] == b[honest.CHECKPOINT_KEY] == [12, 17, 38]
    for key in ("updates", "best_update", "best_valid_ppl", "honest_ppl", "honest_ppl_at_best"):
        assert a["training"]["state"][key] == b["training"]["state"][key], key
    assert a["training"]["state"]["honest_ppl"] is not None


def test_the_summaries_give_the_honest_figure_or_say_there_is_none(tmp_path):
    """`rescore TABLE` (train, then score) prints it beside the held-out perplexity; `rescore
    train` on a table whose held-out pairs are all pieces of training pairs says n/a."""
    from rescorer.models.model_files import read_model_file
    from tests.helpers import rescore

    options = ["--preset", "tiny", "--max-updates", "3", "--seed", str(SEED), "--batch-size", "8"]
    table, _ = hand_built_table(tmp_path / "mixed.gz", MIXED)
    run = rescore(table, "-o", tmp_path / "out.gz", *options)
    assert run.returncode == 0, run.stderr
    state = read_model_file(tmp_path / "out.model.pt")["training"]["state"]
    summary = next(line for line in run.stderr.splitlines() if line.startswith("trained on"))
    assert (f"valid perplexity {state['best_valid_ppl']:.2f} (update 3; honest {state['honest_ppl_at_best']:.2f} "
            f"against unigram {honest_unigram_by_hand(tmp_path / 'out.model.pt', MIXED):.2f} on the 3 held-out pairs "
            f"no training pair contains), unigram ") in summary

    table, _ = hand_built_table(tmp_path / "sub.gz", ALL_SUB_PAIRS)
    run = rescore("train", table, "-o", tmp_path / "sub.pt", *options)
    assert run.returncode == 0, run.stderr
    summary = next(line for line in run.stderr.splitlines() if line.startswith("trained on"))
    assert "(update 3; honest n/a: every held-out pair is a piece of a training pair), unigram " in summary
    training = read_model_file(tmp_path / "sub.pt")["training"]
    assert training["honest_pairs"] == 0 and training["state"]["honest_ppl_at_best"] is None
