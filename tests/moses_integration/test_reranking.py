"""n-best reranking with sentence models: the stand-in extractor is the real program's algorithm
(checked byte for byte against the fixture's files), the n-best features are named as the
extractor names them, and `rescore moses rerank` tunes, reranks, reports and resumes."""

import gzip
import json

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.nbest.rnn_features import SentenceModel, add_sentence_features
from moses_integration.nbest.candidates import feature_values, first_best, read_nbest, rerank
from moses_integration.nbest.reranking import start_weights
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures
from tests.fake_moses.systems import small_system
from tests.helpers import first_lines, rescore

pytestmark = needs_fixtures

TUNING = FIXTURES / "tuning"
# The fixture's first mert run (run1.mert.log): its best point, in the extractor's feature order.
RUN1_WEIGHTS = [0.0576405, -0.142224, 0.0576405, 0.0576405, -0.0375376, 0.0576405, 0.0653657,
                0.0960674, -0.204547, 0.0411385, 0.0652269, 0.038427, 0.0404772, 0.038427]


def test_the_stand_in_extractor_writes_the_real_programs_files(tmp_path):
    """run1.features.dat and run1.scores.dat were written by Moses' extractor from
    run1.best100.out.gz and the dev reference: 98 duplicate hypotheses removed, 9 BLEU statistics."""
    moses = install_fake_moses(tmp_path / "moses")
    reference = tmp_path / "dev.fr"
    reference.write_bytes(gzip.open(FIXTURES / "corpus/dev.fr.gz").read())
    import subprocess

    subprocess.run([moses / "bin/extractor", "--sctype", "BLEU", "--scconfig", "case:true", "--scfile",
                    tmp_path / "s.dat", "--ffile", tmp_path / "f.dat", "-r", reference, "-n",
                    TUNING / "run1.best100.out.gz"], check=True)
    assert (tmp_path / "f.dat").read_bytes() == gzip.open(TUNING / "run1.features.dat.gz").read()
    assert (tmp_path / "s.dat").read_bytes() == gzip.open(TUNING / "run1.scores.dat.gz").read()


def test_features_are_named_as_the_extractor_names_them():
    assert feature_values("LM0= -52.5 TranslationModel0= -1 -2.5 sparse_x= 3 RNNfwd= -7") == [
        ("LM0_0", -52.5), ("TranslationModel0_0", -1.0), ("TranslationModel0_1", -2.5), ("RNNfwd_0", -7.0)]


def nbest_file(tmp_path, lines):
    path = tmp_path / "list.nbest"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_rerank_takes_the_highest_weighted_sum_first_of_equals(tmp_path):
    path = nbest_file(tmp_path, [
        "0 ||| a b ||| LM0= -10 RNNfwd= -4 ||| -1", "0 ||| a c ||| LM0= -11 RNNfwd= -2 ||| -2",
        "0 ||| a d ||| LM0= -9 RNNfwd= -6 ||| -3", "2 ||| x ||| LM0= -1 RNNfwd= -1 ||| 0",
        "2 ||| y ||| LM0= -2 RNNfwd= 0 ||| -1"])
    sentences = read_nbest(path, 3)
    assert first_best(sentences) == ["a b", "", "x"]
    # 0.5 * LM + 1 * RNN: a b -9, a c -7.5, a d -10.5; x -1.5, y -1 -> "a c", "y"
    assert rerank(sentences, {"LM0_0": 0.5, "RNNfwd_0": 1.0}) == ["a c", "", "y"]
    # equal sums keep the decoder's order: x -2, y -2
    assert rerank(sentences, {"LM0_0": 1.0, "RNNfwd_0": 1.0})[2] == "x"


def test_an_nbest_line_with_other_features_is_named(tmp_path):
    path = nbest_file(tmp_path, ["0 ||| a ||| LM0= -1 RNNfwd= -2 ||| 0", "0 ||| b ||| LM0= -1 ||| 0"])
    with pytest.raises(NbestFormatError, match=r"list.nbest:2: features LM0_0 differ from the first line's"):
        read_nbest(path, 1)
    with pytest.raises(NbestFormatError, match=r"list.nbest:1: sentence id 0 but the set has only 0 lines"):
        read_nbest(path, 0)


def test_start_weights_are_the_tuned_systems_and_new_features_start_at_the_given_weight():
    ini = MosesIni.read(TUNING / "moses.ini")
    start = start_weights(ini, ["LM0_0", "TranslationModel0_2", "RNNfwd_0", "RNNfwdPerWord_0"], 0.25)
    assert start == {"LM0_0": ini.weights("LM0")[0], "TranslationModel0_2": ini.weights("TranslationModel0")[2],
                     "RNNfwd_0": 0.25, "RNNfwdPerWord_0": 0.25}


def test_sentence_features_per_word_of_the_side_the_model_predicts(tmp_path):
    source = tmp_path / "src"
    source.write_text("one two three\n")
    path = nbest_file(tmp_path, ["0 ||| un deux ||| LM0= -1 ||| -0.5"])
    forward = SentenceModel("RNNfwd", lambda pairs: np.array([-6.0] * len(pairs)))
    inverse = SentenceModel("RNNinv", lambda pairs: np.array([-9.0] * len(pairs)), predicts_source=True)
    add_sentence_features(path, tmp_path / "out", source, [forward, inverse])
    assert (tmp_path / "out").read_text() == \
        "0 ||| un deux ||| LM0= -1 RNNfwd= -6 RNNfwdPerWord= -3 RNNinv= -9 RNNinvPerWord= -3 ||| -0.5\n"
    with pytest.raises(ValueError, match="extractor reads a name with '_' as a sparse feature"):
        SentenceModel("RNN_fwd", forward.scorer)


@pytest.fixture()
def dev_slice(tmp_path):
    """The first 20 dev sentences, source and both references (dev serves as test too, so that the
    stand-in decoder's lists, the fixture's dev lists, fit the test references)."""
    return [first_lines(FIXTURES / f"corpus/{name}.gz", 20, tmp_path / name)
            for name in ("dev.en", "dev.fr", "dev.ref-darby.fr")]


def run_rerank(tmp_path, moses, model, dev_slice, *extra, test_slice=None):
    """`rescore moses rerank` on a small real system (the real ini over a slice of the real tables);
    the dev set serves as test set unless another is given."""
    src, ref, darby = dev_slice
    test_src, test_ref, test_darby = test_slice or dev_slice
    ini = tmp_path / "pt.moses.ini"
    if not ini.is_file():
        small_system(tmp_path)[0].rename(ini)
    return rescore("moses", "rerank", "--ini", ini, "--model", model, "--dev", src, ref,
                   "--dev-ref", darby, "--test", test_src, test_ref, "--test-ref", test_darby, "--nbest-size", "100",
                   "--out-dir", tmp_path / "rerank", "--moses-dir", moses, "--seeds", "2", *extra)


def test_rerank_tunes_reranks_reports_and_resumes(tmp_path, tiny_model_path, dev_slice):
    moses = install_fake_moses(tmp_path / "moses")
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "rerank"
    lines = gzip.open(out / "test.nbest.gz", "rt").read().splitlines()
    assert " RNNfwd= " in lines[0] and " RNNfwdPerWord= " in lines[0]
    weights = json.loads((out / "seed1" / "weights.json").read_text())["weights"]
    assert list(weights.values())[:14] == RUN1_WEIGHTS  # the stand-in mert's, from the fixture
    assert (weights["RNNfwd_0"], weights["RNNfwdPerWord_0"]) == (0.0, 0.0)  # their starting weight
    reranked = (out / "seed1" / "test.reranked").read_text().splitlines()
    one_best = (out / "test.1best").read_text().splitlines()
    assert len(reranked) == len(one_best) == 20
    # Hand-checked: sentence 6's 4th hypothesis scores -5.5856 under run1's weights, its 1-best -5.7856.
    assert one_best[6] == "ce sont là les jours des années de la vie d' abraham ; qu' il vécut cent soixante-quinze ans ."
    assert reranked[6] == "ce sont là les jours des années de la vie de abraham ; qu' il vécut cent soixante-quinze ans ."
    table = (out / "results.md").read_text()
    assert "| 1-best |" in table and "| +rerank (mert) | 1,2 |" in table and "against 2 reference(s)" in table
    assert "RNNfwd 0.0000 ± 0.0000; RNNfwdPerWord 0.0000 ± 0.0000" in table
    assert run.stdout == table
    mert_runs = calls(moses, "mert")
    assert len(mert_runs) == 2 and [c["argv"][c["argv"].index("-r") + 1] for c in mert_runs] == ["1", "2"]
    extractor = calls(moses, "extractor")[0]["argv"]
    assert extractor[extractor.index("-r") + 1] == f"{out / 'dev.ref0'},{out / 'dev.ref1'}"
    again = run_rerank(tmp_path, moses, tiny_model_path, dev_slice)
    assert again.returncode == 0, again.stderr
    assert len(calls(moses, "mert")) == 2 and len(calls(moses, "extractor")) == 1
    decoded = calls(moses, "moses")
    assert len(decoded) == 2  # dev and test decoded once, each with its own filtered tables
    assert [c["argv"][1] for c in decoded] == [str(out / "dev.moses.ini"), str(out / "test.moses.ini")]
    assert len(calls(moses, "filter-model-given-input.pl")) == 2
    assert "dev-filtered/filtered/phrase-table.0-0.1.1.gz" in (out / "dev.moses.ini").read_text()
    assert again.stdout == table


def test_rerank_with_kbmira_and_a_starting_weight(tmp_path, tiny_model_path, dev_slice):
    moses = install_fake_moses(tmp_path / "moses")
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--optimizer", "kbmira", "--seeds", "1",
                     "--initial-weight", "0.5", "--no-per-word")
    assert run.returncode == 0, run.stderr
    out = tmp_path / "rerank"
    weights = json.loads((out / "seed1" / "weights.json").read_text())["weights"]
    total = sum(abs(w) for w in RUN1_WEIGHTS) + 0.5
    assert list(weights) == [*list(weights)[:14], "RNNfwd_0"]
    assert weights["RNNfwd_0"] == pytest.approx(0.5 / total)  # scaled to sum |w| = 1, as mert-moses.pl does
    assert (out / "seed1" / "init.dense").read_text().splitlines()[-1] == "RNNfwd= 0.500000"
    assert "| +rerank (kbmira) | 1 |" in (out / "results.md").read_text()


def test_rerank_refuses_references_that_do_not_match(tmp_path, tiny_model_path, dev_slice):
    moses = install_fake_moses(tmp_path / "moses")
    short = first_lines(FIXTURES / "corpus/dev.fr.gz", 19, tmp_path / "short.fr")
    run = run_rerank(tmp_path, moses, tiny_model_path, (dev_slice[0], short, dev_slice[2]))
    assert run.returncode == 1 and f"Error: {short}: 19 lines, but the dev source" in run.stderr
    assert not calls(moses, "moses")


def test_a_rerun_with_other_models_is_refused(tmp_path, tiny_model_path, dev_slice):
    moses = install_fake_moses(tmp_path / "moses")
    assert run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1").returncode == 0
    other = tmp_path / "other.pt"
    other.write_bytes(tiny_model_path.read_bytes())
    run = run_rerank(tmp_path, moses, other, dev_slice, "--seeds", "1")
    assert run.returncode == 1 and "holds a reranking with other models" in run.stderr
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1", "--optimizer", "kbmira")
    assert run.returncode == 1 and "holds a reranking with other optimizer" in run.stderr


def given_list(path, sentences, edit=lambda sentence, line: line):
    """A user's n-best list of the dev slice: the fixture's dev 100-best lines (those the stand-in
    decoder writes) of the given sentences, each line through `edit`."""
    with gzip.open(TUNING / "run1.best100.out.gz", "rb") as handle:
        lines = [line for line in handle if int(line.split(b" ||| ")[0]) in sentences]
    path.write_bytes(b"".join(edit(int(line.split(b" ||| ")[0]), line) for line in lines))
    return path


def test_a_given_list_without_every_sentence_is_refused_before_any_work(tmp_path, tiny_model_path, dev_slice):
    """Issue 32, case 4: the sentences a list lacks were scored as empty translations (test BLEU
    0.00 for an empty list). Moses gives every sentence a line, so a list without one is refused."""
    moses = install_fake_moses(tmp_path / "moses")
    cut = given_list(tmp_path / "cut.nbest", set(range(20)) - {5, 12})
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--test-nbest", cut)
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (
        f"Error: {cut}: no hypotheses for 2 of the 20 sentences of the test source {dev_slice[0]} (ids 5, 12); "
        f"Moses writes at least one line per sentence: expected the n-best list of this source")
    empty = tmp_path / "empty.nbest"
    empty.write_bytes(b"")
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--dev-nbest", empty)
    assert run.returncode == 1 and run.stderr.splitlines()[-1].startswith(
        f"Error: {empty}: no hypotheses for 20 of the 20 sentences of the dev source {dev_slice[0]} "
        f"(ids 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...)")
    assert not calls(moses) and not (tmp_path / "rerank").exists()


@pytest.mark.parametrize("empty", ["dev", "test"])
def test_an_empty_set_is_refused_before_any_work(tmp_path, tiny_model_path, dev_slice, empty):
    """Issue 32, case 17: an empty test set failed with IndexError after decoding and tuning, an
    empty dev set with the extractor's empty feature file."""
    moses = install_fake_moses(tmp_path / "moses")
    nothing = []
    for name in ("empty.en", "empty.fr", "empty.darby.fr"):
        (tmp_path / name).write_bytes(b"")
        nothing.append(tmp_path / name)
    sets = (nothing, dev_slice) if empty == "dev" else (dev_slice, nothing)
    run = run_rerank(tmp_path, moses, tiny_model_path, sets[0], test_slice=sets[1])
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (f"Error: {nothing[0]}: the {empty} source is empty; reranking needs dev "
                                           f"sentences to tune on and test sentences to rerank")
    assert not calls(moses) and not (tmp_path / "rerank").exists()


def test_bytes_that_are_not_utf8_are_kept_through_the_reranking(tmp_path, tiny_model_path, dev_slice):
    """Issue 32, case 15: a byte that is not UTF-8 in the test source or in a hypothesis of the
    given test list failed with UnicodeDecodeError; it is kept, as the table path keeps it."""
    moses = install_fake_moses(tmp_path / "moses")
    source = tmp_path / "test.en"
    lines = dev_slice[0].read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b" ", b" \xff ", 1)
    source.write_bytes(b"\n".join(lines))

    def latin1(sentence, line):  # every hypothesis of sentence 0 gets a Latin-1 byte
        return line.replace(b"abraham", b"abr\xe0ham", 1) if sentence == 0 else line
    given = given_list(tmp_path / "test.nbest", set(range(20)), latin1)
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--test-nbest", given, "--seeds", "1",
                     test_slice=(source, *dev_slice[1:]))
    assert run.returncode == 0, run.stderr
    out = tmp_path / "rerank"
    assert (out / "test.1best").read_bytes().split(b"\n")[0].startswith(b"abr\xe0ham prit une autre femme")
    assert b"abr\xe0ham" in (out / "seed1" / "test.reranked").read_bytes().split(b"\n")[0]
    scored = gzip.open(out / "test.nbest.gz", "rb").read()
    assert scored.count(b"abr\xe0ham") == given.read_bytes().count(b"abr\xe0ham") > 0
