"""The proxy bench on a slice of the stored real lists, with answers known beforehand: a
feature that is each hypothesis's own sentence BLEU must win, and leaving out the language
model must lose."""

import numpy as np
import pytest

from moses_integration.evaluation.scores import sentence_bleu
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.line_files import read_lines
from moses_integration.nbest.nbest_file import read_nbest_list
from moses_integration.nbest.reranking import start_weights
from moses_integration.proxy.bench import (BenchTuning, ProxySystem, bench_set, decoder_first_best, run_bench,
                                           system_features)
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

SENTENCES = 60


def side(name, rows):
    nbest = read_nbest_list(FIXTURES / f"nbest/{name}.nbest200.gz", read_lines(FIXTURES / f"corpus/{name}.en.gz"))
    refs = [read_lines(FIXTURES / f"corpus/{name}.fr.gz"), read_lines(FIXTURES / f"corpus/{name}.ref-darby.fr.gz")]
    return bench_set(nbest.rows(rows), [[stream[i] for i in rows] for stream in refs])


@pytest.fixture(scope="module")
def bench():
    dev, test = side("dev", list(range(0, 2 * SENTENCES, 2))), side("test", list(range(SENTENCES)))
    for data in (dev, test):
        sentence_of = data.nbest.sentence_of_rows()
        data.added["oracle"] = np.array([sentence_bleu(h, [stream[s] for stream in data.references])
                                         for h, s in zip(data.nbest.hypotheses, sentence_of)])
    start = start_weights(MosesIni.read(FIXTURES / "tuning/moses.ini"), dev.nbest.feature_names, 0.0)
    return dev, test, start


@pytest.mark.parametrize("optimizer", ["mert", "pro"])
def test_a_feature_equal_to_sentence_bleu_wins_and_no_lm_loses(bench, optimizer):
    dev, test, start = bench
    systems = [ProxySystem("Baseline"), ProxySystem("+oracle", added=("oracle",)),
               ProxySystem("-LM0", dropped=("LM0",))]
    result = run_bench(systems, dev, test, BenchTuning(start, restarts=3, optimizer=optimizer), seeds=[1, 2],
                       progress=lambda line: None)
    rows = result.summary.set_index("system")
    first_best = decoder_first_best(test).bleu
    assert rows.loc["+oracle", "test_bleu_mean"] > rows.loc["Baseline", "test_bleu_mean"] + 5
    assert rows.loc["+oracle", "delta_test_bleu"] > 5 and rows.loc["+oracle", "p_bleu_holm"] < 0.01
    assert rows.loc["-LM0", "delta_test_bleu"] < -1
    # tuned from the lists' own weights, Baseline stays near the decoder's 1-best
    assert abs(rows.loc["Baseline", "test_bleu_mean"] - first_best) < 2
    weights = result.replicates.set_index("system").loc["+oracle", "weights"].iloc[0]
    oracle_weight = float(weights.split("oracle_0=")[1].split()[0])
    assert oracle_weight == max(abs(float(item.split("=")[1])) for item in weights.split())
    assert len(result.outputs["+oracle"]) == 2 and len(result.outputs["+oracle"][0]) == SENTENCES


def test_systems_drop_and_add_features_by_name(bench):
    dev, _, _ = bench
    names, matrix = system_features(ProxySystem("x", added=("oracle",), dropped=("LM0", "TranslationModel0_2")), dev)
    assert "LM0_0" not in names and "TranslationModel0_2" not in names and "TranslationModel0_3" in names
    assert names[-1] == "oracle_0" and matrix.shape == (len(dev.nbest.hypotheses), 13)
    with pytest.raises(ValueError, match="x: the lists have no feature LM9 to drop"):
        system_features(ProxySystem("x", dropped=("LM9",)), dev)
    with pytest.raises(ValueError, match="x: no added feature rnn"):
        system_features(ProxySystem("x", added=("rnn",)), dev)


@pytest.mark.parametrize("optimizer, header, caption", [
    ("mert", "Dev BLEU (MERT)", "by MERT in numpy (3 random restarts, near the start, spread 0.3,"),
    ("pro", "Dev BLEU (PRO)", "by PRO in numpy (Hopkins and May's sampler: 5000 pairs a verse"),
])
def test_the_table_says_which_optimizer_tuned_it(bench, optimizer, header, caption):
    from moses_integration.proxy.report import markdown_table

    dev, test, start = bench
    tuning = BenchTuning(start, restarts=3, spread=0.3, optimizer=optimizer)
    result = run_bench([ProxySystem("Baseline")], dev, test, tuning, seeds=[1], progress=lambda line: None)
    text = markdown_table(result.summary, decoder_first_best(test), 2, SENTENCES, SENTENCES, tuning, 100)
    assert text.splitlines()[0].split(" | ")[2] == header
    assert caption in text and "the stored 100-best lists" in text
