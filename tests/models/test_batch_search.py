"""Batched beam search gives every source what beam search gives it alone, whatever else is in
the batch (padding, sources that finish early), under the same rule (done once K have finished);
beam 1 is greedy; the length penalty reorders finished hypotheses only."""

import math

import pytest
import torch
from torch import nn

from rescorer.models.batch_search import batch_beam_search, length_penalty
from rescorer.models import DecoderState
from rescorer.models.search import beam_search_many, greedy_decode
from tests.models.test_search import ARCHITECTURES, IDS, peaked_model

SOURCES = [[3, 5, 4, 6], [7], [4, 4, 9, 10, 3, 8, 5], [6, 3]]
MAX_LENGTHS = [6, 3, 8, 5]


@pytest.mark.parametrize("arch, settings", ARCHITECTURES, ids=IDS)
@pytest.mark.parametrize("beam", [1, 3])
def test_each_source_gets_what_it_gets_alone(arch, settings, beam):
    model = peaked_model(arch, settings)
    batched = batch_beam_search(model, SOURCES, beam, MAX_LENGTHS, nbest=beam)
    for src, max_length, found in zip(SOURCES, MAX_LENGTHS, batched):
        alone = beam_search_many(model, [src], beam, [max_length])[0][:beam]
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
            # best first: ended by the model's choice before ended at the bound, then by score
            keys = [(t.hypothesis.forced_end, -t.score) for t in found]
            assert keys == sorted(keys)
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


class KnownScores(nn.Module):
    """A decoder whose next-word probabilities depend only on the previous word (ids: 2 [EOS],
    3 a, 4 b): p(a)=.6, p(b)=.4 first; after a: [EOS] .5, a .05, b .45; after b: [EOS] .6,
    a .05, b .35."""

    TABLE = {None: {3: .6, 4: .4}, 3: {2: .5, 3: .05, 4: .45}, 4: {2: .6, 3: .05, 4: .35}}

    def __init__(self):
        super().__init__()
        self.anchor = nn.Parameter(torch.zeros(1))  # the search reads the device from a parameter

    def start(self, src, lengths):
        return DecoderState(0, {"row": torch.arange(src.size(0))})

    def step(self, state, prev):
        rows = []
        for word in prev.tolist():
            probs = self.TABLE[None if state.position == 0 else word]
            rows.append([math.log(probs[i]) if i in probs else float("-inf") for i in range(5)])
        return torch.tensor(rows), state.advanced(), None


def test_length_normalization_picks_the_expected_hypothesis_and_never_a_cut_loop():
    """Exhaustive at beam 10 and at most 3 words: finished by choice are a (.30), ab (.162),
    b (.24), bb (.084), ...; every 3-word output was cut at the bound, best abb (.0567)."""
    model = KnownScores()

    def best(alpha):
        [[top, *_]] = batch_beam_search(model, [[3]], 10, [3], alpha=alpha, nbest=10)
        return top

    assert best(0.0).hypothesis.tokens == (3,) and best(0.0).score == pytest.approx(math.log(.3))
    # alpha 4: ab scores log(.162) / (8/6)^4 = -0.576, above a's log(.3) / (7/6)^4 = -0.650 ...
    top = best(4.0)
    assert top.hypothesis.tokens == (3, 4) and not top.hypothesis.forced_end
    assert top.score == pytest.approx(math.log(.6 * .45 * .6) / (8 / 6) ** 4)
    # ... and the cut abb's log(.0567) / (9/6)^4 = -0.567 would beat both, were it not cut
    [found] = batch_beam_search(model, [[3]], 10, [3], alpha=4.0, nbest=10)
    cut = [t for t in found if t.hypothesis.forced_end]
    assert cut[0].hypothesis.tokens == (3, 4, 4) and cut[0].score > top.score
    assert all(t.hypothesis.forced_end for t in found[found.index(cut[0]):])


def test_min_length_keeps_eos_out_until_then():
    """With at least 2 words, a (.30) is gone: ab (.162) is best, and nothing ends sooner."""
    model = KnownScores()
    [found] = batch_beam_search(model, [[3]], 10, [3], nbest=10, min_length=2)
    assert found[0].hypothesis.tokens == (3, 4)
    assert found[0].hypothesis.log_p == pytest.approx(math.log(.6 * .45 * .6))
    assert min(len(t.hypothesis.tokens) for t in found) == 2
    assert any(len(t.hypothesis.tokens) == 2 for t in found)


@pytest.mark.parametrize("min_length", [3, 5])
def test_the_max_length_wins_over_a_longer_min_length(min_length):
    """min 3 with max 3 forces exactly 3 words; min 5 with max 3 too, rather than no output."""
    model = KnownScores()
    [found] = batch_beam_search(model, [[3], [4]], 4, [3, 3], nbest=4, min_length=min_length)[:1]
    assert len(found) == 4
    assert all(len(t.hypothesis.tokens) == 3 and t.hypothesis.forced_end for t in found)


def test_min_length_applies_to_every_source_of_a_batch():
    model = peaked_model("cho2014", {})
    batched = batch_beam_search(model, SOURCES, 3, MAX_LENGTHS, nbest=3, min_length=4)
    for max_length, found in zip(MAX_LENGTHS, batched):  # one source's max is 3
        assert len(found) == 3
        assert all(min(4, max_length) <= len(t.hypothesis.tokens) <= max_length for t in found)
    plain = batch_beam_search(model, SOURCES, 3, MAX_LENGTHS, nbest=3)
    assert any(len(t.hypothesis.tokens) < 4 for found in plain for t in found)  # so the bound did something


def test_a_min_length_below_one_is_refused():
    with pytest.raises(ValueError):
        batch_beam_search(peaked_model("cho2014", {}), [[3]], 2, [3], min_length=0)
