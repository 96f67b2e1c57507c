"""Which pairs each update trains on: token-budget batches visit every training pair once per
epoch, in same-length batches within the budget, and batch u depends on (seed, u) alone."""

import numpy as np
import pytest

from rescorer.training.batch_schedule import RandomPairs, TokenBudget
from rescorer.training.trainer import PairSplit


def lengths(num_pairs, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 8, num_pairs), rng.integers(1, 8, num_pairs)


@pytest.fixture
def schedule():
    src, tgt = lengths(5000)
    return TokenBudget(PairSplit(5000, seed=3, valid_pairs=250), src, tgt, budget=300)


def test_every_training_pair_once_per_epoch_and_no_held_out_pair(schedule):
    for epoch in range(2):
        updates = range(epoch * schedule.updates_per_epoch, (epoch + 1) * schedule.updates_per_epoch)
        visited = np.concatenate([schedule.batch(u) for u in updates])
        assert len(visited) == len(np.unique(visited)) == schedule.split.num_train
        assert not np.isin(visited, schedule.split.valid).any()


def test_batches_hold_same_length_pairs_within_the_budget(schedule):
    src, tgt = lengths(5000)
    costs = []
    for batch in schedule.epoch_batches(0):
        costs.append(len(batch) * int((src[batch] + tgt[batch] + 1).max()))
        assert costs[-1] <= 300
        assert len(np.unique(tgt[batch])) <= 2  # sorted by target length: a batch spans at most a boundary
    assert np.mean(costs) > 0.9 * 300  # full batches, but where the lengths change


def test_batch_u_depends_on_seed_and_u_alone(schedule):
    src, tgt = lengths(5000)
    again = TokenBudget(PairSplit(5000, seed=3, valid_pairs=250), src, tgt, budget=300)
    for update in (0, 5, schedule.updates_per_epoch + 7, 3 * schedule.updates_per_epoch + 1):
        np.testing.assert_array_equal(schedule.batch(update), again.batch(update))
    other_seed = TokenBudget(PairSplit(5000, seed=4, valid_pairs=250), src, tgt, budget=300)
    assert not np.array_equal(schedule.batch(0), other_seed.batch(0))


def test_epochs_differ_in_order_and_in_which_pairs_share_a_batch(schedule):
    first, second = schedule.epoch_batches(0), schedule.epoch_batches(1)
    assert len(first) == len(second) == schedule.updates_per_epoch
    assert not all(np.array_equal(a, b) for a, b in zip(first, second))
    as_sets = lambda batches: {frozenset(batch.tolist()) for batch in batches}  # noqa: E731
    assert as_sets(first) != as_sets(second)


def test_a_pair_over_the_budget_is_a_batch_alone():
    src, tgt = np.array([1, 1, 40, 1]), np.array([1, 1, 40, 1])
    schedule = TokenBudget(PairSplit(4, seed=1, valid_pairs=0), src, tgt, budget=20)
    batches = schedule.epoch_batches(0)
    assert sorted(len(b) for b in batches) == [1, 3] and [2] in [b.tolist() for b in batches]
    assert schedule.smallest_batch == 1


def test_random_pairs_draws_the_papers_batches():
    split = PairSplit(5000, seed=9, valid_pairs=250)
    schedule = RandomPairs(split, 64)
    np.testing.assert_array_equal(schedule.batch(7), split.train_batch(7, 64))
    assert schedule.updates_per_epoch == split.num_train / 64
