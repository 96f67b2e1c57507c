"""The honest held-out pairs: those that no training pair contains on both sides at once."""

import numpy as np
import pytest

from rescorer.analysis import honest_heldout as honest
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


def test_heldout_perplexities_of_a_model(tmp_path):
    """Both figures are the trainer's perplexity: on the split's held-out pairs, and on those of
    them that brute force finds in no training pair."""
    import torch

    from rescorer.models import ModelSettings, build_model
    from rescorer.training.trainer import PairSplit, evaluate_perplexity

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
    figures = honest.heldout_perplexities(model, cache, split, cpu)
    assert (figures.num_heldout, figures.num_honest) == (len(split.valid), len(want))
    assert honest.honest_heldout(cache, split).tolist() == want.tolist()
    assert figures.heldout == pytest.approx(evaluate_perplexity(model, cache, split.valid, cpu, "fp32"))
    assert figures.honest == pytest.approx(evaluate_perplexity(model, cache, want, cpu, "fp32"))
