"""benchmarks/studies/proxy/proxy_bench.py: its column indices and reference files are checked before
any work, in one line."""

import pytest

from benchmarks.studies.proxy.proxy_bench import column_reader, parse_system, read_side
from tests.fake_moses import FIXTURES, needs_fixtures


@pytest.mark.parametrize("spec", ["1", "11", "-1", "-11", "-3/word"])
def test_indices_inside_the_scores_are_taken(spec):
    value_of = column_reader(spec, 11, {("a", "b"): tuple(float(i + 1) / 20 for i in range(11))})
    assert value_of(("c", "d")) is None and value_of(("a", "b")) < 0


@pytest.mark.parametrize("spec", ["0", "12", "-12", "3/char"])
def test_indices_outside_the_scores_are_refused(spec):
    with pytest.raises(SystemExit, match=rf"--column index '{spec}': expected 1\.\.11 or -1\.\.-11"):
        column_reader(spec, 11, {})


def test_systems_add_and_drop_by_name():
    system = parse_system("+x=fwd,-LM0,inv")
    assert (system.name, system.added, system.dropped) == ("+x", ("fwd", "inv"), ("LM0",))


@needs_fixtures
def test_a_reference_of_another_length_is_named(tmp_path):
    short = tmp_path / "short.fr"
    short.write_text("one line\n")
    files = (FIXTURES / "nbest/dev.nbest200.gz", FIXTURES / "corpus/dev.en.gz", [short])
    with pytest.raises(SystemExit, match=rf"{short}: 1 line, but the source .*dev.en.gz has 842"):
        read_side(files)


class LengthScorer:
    """A stand-in sentence model: log p = -(characters of the pair), each pair counted."""

    scored: list = []

    def __init__(self, device, precision):
        assert (device, precision) == ("cpu", "fp32")

    def direction(self, model):
        return "inverse" if "inv" in model.name else "forward"

    def score_pairs(self, model, pairs):
        LengthScorer.scored += pairs
        return [-float(len(source) + len(hypothesis)) for source, hypothesis in pairs]


def test_a_sentence_model_adds_its_log_p_and_its_log_p_per_word_of_the_side_it_predicts(monkeypatch):
    import numpy as np
    from types import SimpleNamespace

    from benchmarks.studies.proxy.proxy_bench import sentence_features

    monkeypatch.setattr("rescorer.scoring.rnn_scorer.InProcessScorer", LengthScorer)
    nbest = SimpleNamespace(sources=["a b c"], hypotheses=["x y", "x y", "z"],
                            sentence_of_rows=lambda: np.array([0, 0, 0]))
    data = SimpleNamespace(nbest=nbest, added={})
    LengthScorer.scored = []
    sentence_features([("fwd", "fwd.pt"), ("bwd", "inv.pt")], {"dev": data})
    assert list(data.added["fwd"]) == [-8.0, -8.0, -6.0] and list(data.added["bwd"]) == [-8.0, -8.0, -6.0]
    assert list(data.added["fwdpw"]) == [-4.0, -4.0, -6.0]  # per hypothesis word
    assert list(data.added["bwdpw"]) == [-8.0 / 3, -8.0 / 3, -2.0]  # per source word
    assert len(LengthScorer.scored) == 4  # each distinct pair once per model


def test_a_sentence_models_scores_are_read_back_from_the_cache(monkeypatch, tmp_path):
    import numpy as np
    from types import SimpleNamespace

    from benchmarks.studies.proxy.proxy_bench import sentence_features

    monkeypatch.setattr("rescorer.scoring.rnn_scorer.InProcessScorer", LengthScorer)
    model = tmp_path / "fwd.pt"
    model.write_bytes(b"a model")
    nbest = SimpleNamespace(sources=["a b c"], hypotheses=["x y", "z"], sentence_of_rows=lambda: np.array([0, 0]))
    LengthScorer.scored = []
    first, again = SimpleNamespace(nbest=nbest, added={}), SimpleNamespace(nbest=nbest, added={})
    sentence_features([("fwd", str(model))], {"dev": first}, tmp_path / "cache")
    sentence_features([("fwd", str(model))], {"dev": again}, tmp_path / "cache")
    assert len(LengthScorer.scored) == 2 and list(again.added["fwd"]) == list(first.added["fwd"]) == [-8.0, -6.0]
    model.write_bytes(b"another model")  # another model's scores are its own
    sentence_features([("fwd", str(model))], {"dev": SimpleNamespace(nbest=nbest, added={})}, tmp_path / "cache")
    assert len(LengthScorer.scored) == 4


def test_run_json_keeps_no_machines_folders():
    from benchmarks.studies.proxy.proxy_bench import _without_folders

    assert [_without_folders(a) for a in ["sfwd=/home/x/sent.pt", "/data/scored.gz", "fwdpw=8", "-LM0=-LM0",
                                          "+a=fwd,inv"]] == ["sfwd=sent.pt", "scored.gz", "fwdpw=8", "-LM0=-LM0",
                                                             "+a=fwd,inv"]


class LengthLm:
    """A stand-in CSLM: log p = -(words of the hypothesis), its source unseen."""

    def __init__(self, device, precision):
        assert (device, precision) == ("cpu", "fp32")

    def score_sentences(self, model, sentences):
        return [-float(len(sentence.split())) for sentence in sentences]


def test_a_language_model_adds_its_log_p_of_the_hypothesis_and_per_hypothesis_word(monkeypatch):
    import numpy as np
    from types import SimpleNamespace

    from benchmarks.studies.proxy.proxy_bench import sentence_features

    monkeypatch.setattr("rescorer.scoring.lm_scoring.InProcessLmScorer", LengthLm)
    nbest = SimpleNamespace(sources=["a b c"], hypotheses=["x y", "z"], sentence_of_rows=lambda: np.array([0, 0]))
    data = SimpleNamespace(nbest=nbest, added={})
    sentence_features([], {"test": data}, lms=[("cslm", "cslm.pt")])
    assert list(data.added["cslm"]) == [-2.0, -1.0] and list(data.added["cslmpw"]) == [-1.0, -1.0]


def test_a_mixture_adds_the_ensemble_of_its_models_and_its_per_word_form(monkeypatch):
    import math

    import numpy as np
    from types import SimpleNamespace

    from benchmarks.studies.proxy.proxy_bench import sentence_features

    monkeypatch.setattr("rescorer.scoring.rnn_scorer.InProcessScorer", LengthScorer)
    monkeypatch.setattr("rescorer.scoring.lm_scoring.InProcessLmScorer", LengthLm)
    nbest = SimpleNamespace(sources=["a b c"], hypotheses=["x y", "z"], sentence_of_rows=lambda: np.array([0, 0]))
    data = SimpleNamespace(nbest=nbest, added={})
    # fwd: -8, -6 (characters); cslm: -2, -1 (words); both predict the hypothesis
    sentence_features([("fwd", "fwd.pt")], {"dev": data}, lms=[("cslm", "cslm.pt")],
                      mixtures=[("ens", ["fwd", "cslm"])])
    expected = [math.log((math.exp(-8) + math.exp(-2)) / 2), math.log((math.exp(-6) + math.exp(-1)) / 2)]
    assert np.allclose(data.added["ens"], expected)
    assert np.allclose(data.added["enspw"], [expected[0] / 2, expected[1] / 1])  # per hypothesis word


def test_a_mixture_of_models_that_predict_other_sides_is_refused(monkeypatch):
    import numpy as np
    from types import SimpleNamespace

    from benchmarks.studies.proxy.proxy_bench import sentence_features

    monkeypatch.setattr("rescorer.scoring.rnn_scorer.InProcessScorer", LengthScorer)
    nbest = SimpleNamespace(sources=["a b c"], hypotheses=["x y"], sentence_of_rows=lambda: np.array([0]))
    for members in (["fwd", "bwd"], ["fwd", "nope"]):
        with pytest.raises(SystemExit, match="--mixture ens: expected the names of sentence models"):
            sentence_features([("fwd", "fwd.pt"), ("bwd", "inv.pt")], {"dev": SimpleNamespace(nbest=nbest, added={})},
                              mixtures=[("ens", members)])
