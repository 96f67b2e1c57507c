"""Batched beam search gives every source what beam search gives it alone, whatever else is in
the batch (padding, sources that finish early); beam 1 is greedy; the length penalty reorders
finished hypotheses only."""

import math

import pytest

from rescorer.models.batch_search import batch_beam_search, length_penalty
from rescorer.models.search import beam_search, greedy_decode
from tests.models.test_search import ARCHITECTURES, IDS, peaked_model

SOURCES = [[3, 5, 4, 6], [7], [4, 4, 9, 10, 3, 8, 5], [6, 3]]
MAX_LENGTHS = [6, 3, 8, 5]


@pytest.mark.parametrize("arch, settings", ARCHITECTURES, ids=IDS)
@pytest.mark.parametrize("beam", [1, 3])
def test_each_source_gets_what_it_gets_alone(arch, settings, beam):
    model = peaked_model(arch, settings)
    batched = batch_beam_search(model, SOURCES, beam, MAX_LENGTHS, nbest=beam)
    for src, max_length, found in zip(SOURCES, MAX_LENGTHS, batched):
        alone = beam_search(model, src, beam, max_length)
        assert [t.hypothesis.tokens for t in found] == [h.tokens for h in alone]
        assert [t.hypothesis.log_p for t in found] == pytest.approx([h.log_p for h in alone], abs=1e-9)


def test_beam_one_is_greedy():
    model = peaked_model("rnnsearch", {})
    for src, max_length, (found,) in zip(SOURCES, MAX_LENGTHS, batch_beam_search(model, SOURCES, 1, MAX_LENGTHS)):
        greedy = greedy_decode(model, src, max_length)
        assert found.hypothesis.tokens == greedy.tokens
        assert found.hypothesis.log_p == pytest.approx(greedy.log_p, abs=1e-9)


def test_k_distinct_outputs_best_first_under_the_penalty():
    model = peaked_model("cho2014", {})
    for alpha in (0.0, 1.0):
        for found in batch_beam_search(model, SOURCES, 4, MAX_LENGTHS, alpha=alpha, nbest=4):
            tokens = [t.hypothesis.tokens for t in found]
            assert len(tokens) == 4 and len(set(tokens)) == 4
            scores = [t.score for t in found]
            assert scores == sorted(scores, reverse=True)
            for t in found:
                assert t.score == pytest.approx(t.hypothesis.log_p / length_penalty(len(t.hypothesis.tokens), alpha))


def test_a_length_penalty_prefers_longer_outputs():
    model = peaked_model("cho2014", {})
    plain = batch_beam_search(model, SOURCES, 5, MAX_LENGTHS, alpha=0.0)
    longer = batch_beam_search(model, SOURCES, 5, MAX_LENGTHS, alpha=5.0)
    lengths = [(len(a[0].hypothesis.tokens), len(b[0].hypothesis.tokens)) for a, b in zip(plain, longer)]
    assert all(short <= long for short, long in lengths)
    assert any(short < long for short, long in lengths)


def test_length_penalty_formula():
    assert length_penalty(3, 0.0) == 1.0
    assert length_penalty(1, 1.0) == pytest.approx(7 / 6)
    assert length_penalty(5, 0.6) == pytest.approx(math.pow(11 / 6, 0.6))


def test_bad_arguments_are_refused():
    model = peaked_model("cho2014", {})
    with pytest.raises(ValueError):
        batch_beam_search(model, [[]], 2, [3])
    with pytest.raises(ValueError):
        batch_beam_search(model, [[3]], 2, [3], nbest=3)
