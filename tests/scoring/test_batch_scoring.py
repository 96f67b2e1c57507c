"""Batched scoring: order restored, independent of batch and chunk sizes, equal to one-by-one."""

import numpy as np
import pytest
import torch

from rescorer.data.batching import length_sorted_batches
from rescorer.data.padding import pad_sequences
from rescorer.io.table_reader import PhraseTableReader
from rescorer.scoring.batch_scoring import score_encoded, score_pairs


@pytest.fixture(scope="module")
def real_pairs(example_table):
    with PhraseTableReader(example_table) as reader:
        return [(entry.src, entry.tgt) for entry in reader][:1500]


def test_batches_cover_every_pair_once_within_budget():
    rng = np.random.default_rng(0)
    src_lengths, tgt_lengths = rng.integers(1, 8, 1000), rng.integers(1, 8, 1000)
    batches = list(length_sorted_batches(src_lengths, tgt_lengths, token_budget=200))
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    for batch in batches:
        assert len(batch) * int((src_lengths + tgt_lengths + 1)[batch].max()) <= 200
    # Sorted by target length, so padding stays small.
    firsts = [int(tgt_lengths[b].min()) for b in batches]
    assert firsts == sorted(firsts)


def test_pair_over_budget_is_its_own_batch():
    batches = list(length_sorted_batches(np.array([50, 1]), np.array([50, 1]), token_budget=10))
    assert sorted(len(b) for b in batches) == [1, 1]


def test_pad_sequences():
    ids, lengths = pad_sequences([[5, 6, 7], [8]])
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert lengths.tolist() == [3, 1]


@pytest.mark.parametrize("budget", [40, 700, 100_000])
def test_scores_do_not_depend_on_batch_size(tiny_bundle, real_pairs, budget):
    reference = score_pairs(tiny_bundle, real_pairs, device="cpu", token_budget=3000)
    scores = score_pairs(tiny_bundle, real_pairs, device="cpu", token_budget=budget)
    np.testing.assert_allclose(scores, reference, atol=1e-4, rtol=0)


def test_scores_do_not_depend_on_chunking(tiny_bundle, real_pairs):
    whole = score_pairs(tiny_bundle, real_pairs, device="cpu")
    chunked = np.concatenate([score_pairs(tiny_bundle, real_pairs[i:i + 333], device="cpu")
                              for i in range(0, len(real_pairs), 333)])
    np.testing.assert_allclose(chunked, whole, atol=1e-4, rtol=0)


def test_batched_scores_equal_one_pair_at_a_time(tiny_bundle, real_pairs):
    pairs = real_pairs[:40]
    batched = score_pairs(tiny_bundle, pairs, device="cpu")
    model = tiny_bundle.model
    single = []
    for src, tgt in pairs:
        src_ids = torch.tensor([tiny_bundle.src_vocab.encode(src.split())])
        tgt_ids = torch.tensor([tiny_bundle.tgt_vocab.encode(tgt.split())])
        with torch.no_grad():
            single.append(model(src_ids, torch.tensor([src_ids.size(1)]),
                                tgt_ids, torch.tensor([tgt_ids.size(1)])).item())
    np.testing.assert_allclose(batched, single, atol=1e-4, rtol=0)
    assert (batched < 0).all()


def test_empty_input_gives_empty_scores(tiny_bundle):
    assert score_encoded(tiny_bundle.model, [], []).shape == (0,)


def test_bf16_autocast_stays_close_to_fp32(tiny_bundle, real_pairs):
    fp32 = score_pairs(tiny_bundle, real_pairs[:200], device="cpu", precision="fp32")
    bf16 = score_pairs(tiny_bundle, real_pairs[:200], device="cpu", precision="bf16")
    assert np.abs(bf16 - fp32).mean() < 0.2


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_scores_match_cpu(tiny_bundle, real_pairs):
    cpu = score_pairs(tiny_bundle, real_pairs[:300], device="cpu", precision="fp32")
    cuda = score_pairs(tiny_bundle, real_pairs[:300], device="cuda", precision="fp32")
    np.testing.assert_allclose(cuda, cpu, atol=1e-3, rtol=0)
