"""Beam search, greedy decoding and sampling on every architecture's step interface.

Models are random but peaked (weights N(0, 0.3)) and run in float64, so every log p a search
reports can be compared with the teacher-forced score of the same target to 1e-9.
"""

import itertools
import math

import pytest
import torch

from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models import ModelSettings, build_model
from rescorer.models.base import DecoderState
from rescorer.models.search import beam_search, beam_search_many, greedy_decode, sample

ARCHITECTURES = [("cho2014", {}), ("cho2014", {"cell": "lstm", "bidirectional": True}),
                 ("rnnsearch", {}), ("luong", {}), ("luong", {"attention": "local-p"}), ("transformer", {})]
IDS = ["cho2014", "cho2014-lstm-bi", "rnnsearch", "luong", "luong-local-p", "transformer"]
SOURCE = [3, 5, 4, 6]


def peaked_model(arch, settings, vocab_size=12):
    torch.manual_seed(7)
    model = build_model(ModelSettings.make(arch, "tiny", **settings).config(vocab_size, vocab_size))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.3)
    return model.double().eval()


def teacher_forced(model, src, tokens):
    """log p(tokens, [EOS] | src) by the batched forward pass."""
    with torch.no_grad():
        return float(model(torch.tensor([src]), torch.tensor([len(src)]),
                           torch.tensor([list(tokens)]), torch.tensor([len(tokens)])))


def reference_greedy(model, src, max_length):
    """Greedy decoding written out plainly: argmax of the allowed words, step by step."""
    state = model.start(torch.tensor([src]), torch.tensor([len(src)]))
    prev, tokens = torch.tensor([PAD_ID]), []
    with torch.no_grad():
        for length in range(max_length + 1):
            log_probs, state, _ = model.step(state, prev)
            allowed = log_probs[0].clone()
            allowed[PAD_ID] = -math.inf
            if length == 0:
                allowed[EOS_ID] = -math.inf
            word = EOS_ID if length == max_length else int(allowed.argmax())
            if word == EOS_ID:
                return tuple(tokens)
            tokens.append(word)
            prev = torch.tensor([word])


@pytest.mark.parametrize("arch, settings", ARCHITECTURES, ids=IDS)
def test_beam_returns_k_distinct_targets_by_descending_true_log_p(arch, settings):
    model = peaked_model(arch, settings)
    found = beam_search(model, SOURCE, beam_size=6, max_length=5)
    assert len(found) == 6
    assert len({h.tokens for h in found}) == 6
    assert all(h.tokens and EOS_ID not in h.tokens and PAD_ID not in h.tokens for h in found)
    assert [h.log_p for h in found] == sorted((h.log_p for h in found), reverse=True)
    for hypothesis in found:
        assert hypothesis.log_p == pytest.approx(teacher_forced(model, SOURCE, hypothesis.tokens), abs=1e-9)


@pytest.mark.parametrize("arch, settings", ARCHITECTURES, ids=IDS)
def test_beam_of_one_is_greedy_decoding(arch, settings):
    model = peaked_model(arch, settings)
    for src in (SOURCE, [7], [4, 4, 9, 3, 10, 11]):
        expected = reference_greedy(model, src, 6)
        assert greedy_decode(model, src, 6).tokens == expected
        (best,) = beam_search(model, src, beam_size=1, max_length=6)
        assert best.tokens == expected


@pytest.mark.parametrize("arch, settings", ARCHITECTURES[::2], ids=IDS[::2])
def test_a_beam_as_wide_as_all_targets_finds_the_exact_best_ones(arch, settings):
    """With 5 proposable words ([UNK] and 4 others) and at most 2 words, there are 30 targets:
    a beam of 30 is exhaustive, so it must return all of them, ranked by their true log p."""
    model = peaked_model(arch, settings, vocab_size=7)
    words = range(1, 7)  # [UNK] and ids 3-6: all but [PAD] and [EOS]
    words = [w for w in words if w != EOS_ID]
    targets = [(w,) for w in words] + list(itertools.product(words, repeat=2))
    exact = sorted(((teacher_forced(model, SOURCE, t), t) for t in targets), reverse=True)
    found = beam_search(model, SOURCE, beam_size=len(targets), max_length=2)
    assert [h.tokens for h in found] == [t for _, t in exact]
    assert [h.forced_end for h in found] == [len(h.tokens) == 2 for h in found]


@pytest.mark.parametrize("arch, settings", ARCHITECTURES, ids=IDS)
def test_sampling_is_reproducible_and_scores_what_it_draws(arch, settings):
    model = peaked_model(arch, settings)
    draw = lambda seed: sample(model, SOURCE, 12, 5, 1.0, torch.Generator().manual_seed(seed))  # noqa: E731
    first, again, other = draw(3), draw(3), draw(4)
    assert first == again
    assert [h.tokens for h in first] != [h.tokens for h in other]
    assert len(first) == 12
    for hypothesis in first:
        assert hypothesis.tokens and PAD_ID not in hypothesis.tokens
        assert hypothesis.log_p == pytest.approx(teacher_forced(model, SOURCE, hypothesis.tokens), abs=1e-9)


def test_samples_follow_the_model_and_a_low_temperature_is_greedy():
    model = peaked_model("cho2014", {})
    drawn = sample(model, SOURCE, 4000, 1, 1.0, torch.Generator().manual_seed(1))
    state = model.start(torch.tensor([SOURCE]), torch.tensor([len(SOURCE)]))
    with torch.no_grad():
        log_probs, _, _ = model.step(state, torch.tensor([PAD_ID]))
    allowed = log_probs[0].clone()
    allowed[[PAD_ID, EOS_ID]] = -math.inf
    expected = torch.softmax(allowed, dim=0)  # the first word's distribution, [EOS] excluded
    for word in range(3, 12):
        share = sum(h.tokens == (word,) for h in drawn) / len(drawn)
        assert share == pytest.approx(float(expected[word]), abs=0.025)
    cold = sample(model, SOURCE, 20, 6, 1e-4, torch.Generator().manual_seed(1))
    assert {h.tokens for h in cold} == {reference_greedy(model, SOURCE, 6)}


@pytest.mark.parametrize("call", [lambda m: beam_search(m, [], 2, 3), lambda m: beam_search(m, [3], 0, 3),
                                  lambda m: sample(m, [3], 2, 3, 0.0), lambda m: greedy_decode(m, [], 3)],
                         ids=["empty source", "beam 0", "temperature 0", "greedy on empty source"])
def test_bad_search_settings_are_refused(call):
    with pytest.raises(ValueError):
        call(peaked_model("cho2014", {}))


@pytest.mark.parametrize("arch", ["rnnsearch", "transformer"])
def test_searches_run_without_dropout_and_leave_the_mode_as_it_was(arch):
    model = peaked_model(arch, {"dropout": 0.5})
    from rescorer.models.batch_search import batch_beam_search

    expected = (beam_search(model, SOURCE, 3, 5), greedy_decode(model, SOURCE, 5),
                sample(model, SOURCE, 4, 5, 1.0, torch.Generator().manual_seed(2)),
                batch_beam_search(model, [SOURCE, [7, 3]], 3, [5, 4]))
    model.train()  # a trainer decoding its dev set mid-training
    for _ in range(2):
        assert beam_search(model, SOURCE, 3, 5) == expected[0]
        assert greedy_decode(model, SOURCE, 5) == expected[1]
        assert sample(model, SOURCE, 4, 5, 1.0, torch.Generator().manual_seed(2)) == expected[2]
        assert batch_beam_search(model, [SOURCE, [7, 3]], 3, [5, 4]) == expected[3]
        assert model.training


class ScriptedModel(torch.nn.Module):
    """A decoder whose next-word probabilities are written out by prefix (ids 3-6 are words;
    a prefix the script lacks ends), to set up a search exactly."""

    def __init__(self, script, vocab_size=8):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # the search reads the device from it
        self.script, self.vocab_size = script, vocab_size

    def start(self, src, lengths):
        return DecoderState(0, {"prefix": torch.full((src.size(0), 8), -1, dtype=torch.long)})

    def step(self, state, prev):
        prefix = state["prefix"].clone()
        if state.position > 0:
            prefix[:, state.position - 1] = prev
        rows = []
        for row in prefix.tolist():
            probs = torch.full((self.vocab_size,), 1e-9, dtype=torch.float64)
            for word, p in self.script.get(tuple(w for w in row if w >= 0), {EOS_ID: 1.0}).items():
                probs[word] = p
            rows.append(probs / probs.sum())
        return torch.stack(rows).log(), state.advanced(prefix=prefix), None


def test_beam_search_goes_on_while_a_live_target_beats_the_kth_finished():
    """K = 2: [B] ends at step 2 and [B C] at step 3, both in the step's top K, while [A C D]
    (p 0.517) is still live. Stopping at K finished (the rule for a length penalty) would
    return [B] and [B C]; ranked by raw log p, [A C D] is the best."""
    A, B, C, D = 3, 4, 5, 6
    model = ScriptedModel({(): {A: 0.55, B: 0.45}, (A,): {C: 0.99, EOS_ID: 0.01},
                           (B,): {EOS_ID: 0.8, C: 0.2}, (A, C): {D: 0.95, EOS_ID: 0.05},
                           (B, C): {EOS_ID: 0.9, D: 0.1}, (A, C, D): {EOS_ID: 1.0}})
    found = beam_search(model, [3], beam_size=2, max_length=5)
    assert [h.tokens for h in found] == [(A, C, D), (B,)]
    assert [h.log_p for h in found] == pytest.approx([math.log(0.55 * 0.99 * 0.95), math.log(0.45 * 0.8)], rel=1e-6)
    first_rule = beam_search_many(model, [[3]], 2, [5])[0]
    assert [h.tokens for h in first_rule] == [(B,), (B, C)]
