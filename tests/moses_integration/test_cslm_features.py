"""The CSLM as an n-best feature: CSLM= log p of the hypothesis (sentence begin and end
included), from `moses rescore-nbest --lm` and `moses rerank --lm`."""

import gzip

import pytest
import torch

from moses_integration.nbest.rnn_features import iter_feature_values
from moses_integration.nbest.sentence_models import lm_feature_names
from rescorer.models.lm_files import LmBundle, lm_vocabulary, save_lm
from rescorer.models.ngram_lm import NgramLM, NgramLmConfig
from rescorer.scoring.lm_scoring import word_log_probs
from tests.fake_moses import FIXTURES, calls, install_fake_moses
from tests.fake_moses.systems import small_system
from tests.helpers import first_lines, rescore

SENTENCES = 3


@pytest.fixture()
def nbest(tmp_path):
    """The fixture's dev 100-best lines of the first sentences, and their source."""
    with gzip.open(FIXTURES / "tuning/run1.best100.out.gz", "rb") as handle:
        lines = [line for line in handle if int(line.split(b" ||| ")[0]) < SENTENCES]
    (tmp_path / "dev.nbest").write_bytes(b"".join(lines))
    return tmp_path / "dev.nbest", first_lines(FIXTURES / "corpus/dev.en.gz", SENTENCES, tmp_path / "dev.en")


@pytest.fixture()
def lm(tmp_path, nbest):
    """A CSLM whose vocabulary holds the list's words but two, weights large enough that words differ."""
    words = sorted({w for line in nbest[0].read_text().splitlines() for w in line.split(" ||| ")[1].split()})
    torch.manual_seed(1)
    vocab = lm_vocabulary(words[2:])
    model = NgramLM(NgramLmConfig(len(vocab), order=4, embedding_size=6, hidden_sizes=(10, 8)))
    for parameter in model.parameters():
        torch.nn.init.normal_(parameter, std=0.3)
    bundle = LmBundle(model.eval(), vocab)
    save_lm(bundle, tmp_path / "cslm.pt")
    return bundle, tmp_path / "cslm.pt"


def test_the_cslm_feature_is_the_sum_of_the_models_per_word_log_p(tmp_path, nbest, lm):
    bundle, path = lm
    out = tmp_path / "out.nbest"
    run = rescore("moses", "rescore-nbest", nbest[0], "--input", nbest[1], "--lm", path, "--per-word", "-o", out)
    assert run.returncode == 0, run.stderr
    hypotheses = [line.split(" ||| ")[1].strip() for line in nbest[0].read_text().splitlines()]
    expected = [float(words.sum()) for words in word_log_probs(bundle, hypotheses)]
    assert list(iter_feature_values(out, "CSLM")) == pytest.approx(expected, rel=1e-5, abs=1e-4)
    per_word = list(iter_feature_values(out, "CSLMPerWord"))
    assert per_word == pytest.approx([e / len(h.split()) for e, h in zip(expected, hypotheses)], rel=1e-5, abs=1e-4)
    # every other byte of each line is kept: the features gain the two, the rest is as it was
    for before, after in zip(nbest[0].read_text().splitlines(), out.read_text().splitlines()):
        fields, new = before.split(" ||| "), after.split(" ||| ")
        assert new[:2] == fields[:2] and new[3:] == fields[3:]
        assert new[2].startswith(fields[2].rstrip()) and " CSLM= " in new[2] and " CSLMPerWord= " in new[2]


def test_a_sentence_model_and_the_cslm_in_one_pass(tmp_path, nbest, lm, tiny_model_path):
    out = tmp_path / "out.nbest"
    run = rescore("moses", "rescore-nbest", nbest[0], "--input", nbest[1], "--model", tiny_model_path,
                  "--lm", lm[1], "--lm", lm[1], "-o", out)
    assert run.returncode == 0, run.stderr
    assert "; added RNN0=, CSLM=, CSLM2= of whole hypotheses; " in run.stderr.strip().splitlines()[-1]
    first = out.read_text().splitlines()[0].split(" ||| ")[2]
    assert first.index(" RNN0= ") < first.index(" CSLM= ") < first.index(" CSLM2= ")
    assert list(iter_feature_values(out, "CSLM")) == list(iter_feature_values(out, "CSLM2"))
    assert lm_feature_names(3) == ["CSLM", "CSLM2", "CSLM3"]


@pytest.mark.parametrize("args, message", [
    ((), "give the model whose log p becomes a feature: --model, --lm or both"),
    (("--lm", "LM", "--mode", "phrase"), "--lm scores whole hypotheses"),
    (("--model", "MODEL", "--per-word"), "--per-word applies with --lm"),
    # Moses' extractor would read RNN_0= as a sparse feature and mert would never weigh it
    (("--model", "MODEL", "--feature-name", "RNN_0"), "--feature-name: feature name 'RNN_0': Moses' extractor"),
])
def test_usage_without_a_feature_to_add_is_refused(tmp_path, nbest, lm, tiny_model_path, args, message):
    args = [str(lm[1]) if a == "LM" else str(tiny_model_path) if a == "MODEL" else a for a in args]
    run = rescore("moses", "rescore-nbest", nbest[0], "--input", nbest[1], "-o", tmp_path / "out", *args)
    assert run.returncode == 2 and message in run.stderr
    assert not (tmp_path / "out").exists()


def test_a_phrase_model_given_as_the_lm_is_one_line(tmp_path, nbest, tiny_model_path):
    run = rescore("moses", "rescore-nbest", nbest[0], "--input", nbest[1], "--lm", tiny_model_path,
                  "-o", tmp_path / "out")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1].startswith(f"Error: {tiny_model_path}: a phrase model")
    assert not (tmp_path / "out").exists()


def test_rerank_with_the_cslm_alone_tunes_its_weight(tmp_path, lm):
    """The paper's +CSLM row as n-best reranking: Baseline's lists with the CSLM as the only new feature."""
    moses = install_fake_moses(tmp_path / "moses")
    src, ref, darby = [first_lines(FIXTURES / f"corpus/{name}.gz", 20, tmp_path / name)
                       for name in ("dev.en", "dev.fr", "dev.ref-darby.fr")]
    ini = small_system(tmp_path)[0]
    run = rescore("moses", "rerank", "--ini", ini, "--lm", lm[1], "--dev", src, ref, "--dev-ref", darby,
                  "--test", src, ref, "--test-ref", darby, "--nbest-size", "100", "--out-dir", tmp_path / "rerank",
                  "--moses-dir", moses, "--seeds", "1")
    assert run.returncode == 0, run.stderr
    assert "CSLM " in run.stdout and "CSLMPerWord " in run.stdout  # the tuned weights column names them
    scored = tmp_path / "rerank" / "test.nbest.gz"
    assert len(list(iter_feature_values(scored, "CSLM"))) == len(gzip.open(scored).read().splitlines())
    assert len(calls(moses, "mert")) == 1
    neither = rescore("moses", "rerank", "--ini", ini, "--dev", src, ref, "--test", src, ref,
                      "--out-dir", tmp_path / "r2", "--moses-dir", moses)
    assert neither.returncode == 2 and "--model (a sentence model), --lm" in neither.stderr


def test_a_list_in_another_language_than_the_cslms_is_refused_in_one_line(tmp_path, nbest, lm):
    """The French list's words make a French CSLM; the same list with English hypotheses (the
    dev source, Moses' fields kept) is refused, naming the list and its lines, nothing written."""
    sources = nbest[1].read_text().splitlines()
    english = tmp_path / "english.nbest"
    lines = []
    for line in nbest[0].read_text().splitlines(keepends=True):
        fields = line.split(" ||| ")
        lines.append(" ||| ".join([fields[0], " " + sources[int(fields[0])] + " ", *fields[2:]]))
    english.write_text("".join(lines))
    out = tmp_path / "out.nbest"
    run = rescore("moses", "rescore-nbest", english, "--input", nbest[1], "--lm", lm[1], "-o", out)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"Error: {english}: lines 1-{len(lines)}: only ")
    assert f"of the hypotheses' words are in the vocabulary of {lm[1]}" in last
    assert not out.exists()
    # the French list, whose words but two the CSLM knows, passes the same check
    assert rescore("moses", "rescore-nbest", nbest[0], "--input", nbest[1], "--lm", lm[1], "-o", out).returncode == 0
