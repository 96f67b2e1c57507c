"""n-best reranking with sentence models: the stand-in extractor is the real program's algorithm
(checked byte for byte against the fixture's files), the n-best features are named as the
extractor names them, and `rescore moses rerank` tunes, reranks, reports and resumes."""

import gzip
import json
import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.nbest.rnn_features import NbestModel, add_sentence_features
from moses_integration.nbest.candidates import feature_values, first_best, read_nbest, rerank
from moses_integration.nbest.reranking import start_weights
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake
from tests.fake_moses.systems import small_system
from tests.helpers import FIXTURE_FILES, RESCORE, first_lines, rescore

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


SOURCES = ["a b c", "d e", "f"]  # what the lists below translate


def test_rerank_takes_the_highest_weighted_sum_first_of_equals(tmp_path):
    path = nbest_file(tmp_path, [
        "0 ||| a b ||| LM0= -10 RNNfwd= -4 ||| -1", "0 ||| a c ||| LM0= -11 RNNfwd= -2 ||| -2",
        "0 ||| a d ||| LM0= -9 RNNfwd= -6 ||| -3", "1 ||| ||| LM0= -5 RNNfwd= -5 ||| -5",
        "2 ||| x ||| LM0= -1 RNNfwd= -1 ||| 0", "2 ||| y ||| LM0= -2 RNNfwd= 0 ||| -1"])
    sentences = read_nbest(path, SOURCES)
    assert first_best(sentences) == ["a b", "", "x"]  # sentence 1: an empty hypothesis, as Moses writes one
    # 0.5 * LM + 1 * RNN: a b -9, a c -7.5, a d -10.5; x -1.5, y -1 -> "a c", "y"
    assert rerank(sentences, {"LM0_0": 0.5, "RNNfwd_0": 1.0}) == ["a c", "", "y"]
    # equal sums keep the decoder's order: x -2, y -2
    assert rerank(sentences, {"LM0_0": 1.0, "RNNfwd_0": 1.0})[2] == "x"


def test_an_nbest_line_with_other_features_is_named(tmp_path):
    path = nbest_file(tmp_path, ["0 ||| a ||| LM0= -1 RNNfwd= -2 ||| 0", "0 ||| b ||| LM0= -1 ||| 0"])
    with pytest.raises(NbestFormatError, match=r"list.nbest:2: features LM0_0 differ from the first line's"):
        read_nbest(path, SOURCES[:1])
    with pytest.raises(NbestFormatError, match=r"list.nbest:1: sentence id 0 but the set has only 0 sentence\(s\)"):
        read_nbest(path, [], "the set")


def test_start_weights_are_the_tuned_systems_and_new_features_start_at_the_given_weight():
    ini = MosesIni.read(TUNING / "moses.ini")
    start = start_weights(ini, ["LM0_0", "TranslationModel0_2", "RNNfwd_0", "RNNfwdPerWord_0"], 0.25)
    assert start == {"LM0_0": ini.weights("LM0")[0], "TranslationModel0_2": ini.weights("TranslationModel0")[2],
                     "RNNfwd_0": 0.25, "RNNfwdPerWord_0": 0.25}


def test_sentence_features_per_word_of_the_side_the_model_predicts(tmp_path):
    source = tmp_path / "src"
    source.write_text("one two three\n")
    path = nbest_file(tmp_path, ["0 ||| un deux ||| LM0= -1 ||| -0.5"])
    forward = NbestModel("RNNfwd", lambda pairs: np.array([-6.0] * len(pairs)))
    inverse = NbestModel("RNNinv", lambda pairs: np.array([-9.0] * len(pairs)), predicts_source=True)
    add_sentence_features(path, tmp_path / "out", source, [forward, inverse])
    assert (tmp_path / "out").read_text() == \
        "0 ||| un deux ||| LM0= -1 RNNfwd= -6 RNNfwdPerWord= -3 RNNinv= -9 RNNinvPerWord= -3 ||| -0.5\n"
    with pytest.raises(ValueError, match="extractor reads a name with '_' as a sparse feature"):
        NbestModel("RNN_fwd", forward.scorer)


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
    signature = next(line for line in run.stderr.splitlines() if "|job:moses rerank|" in line)
    assert re.search(r"\|device:(cpu|cuda)\|precision:auto\|threads:\d+\|torch:", signature), signature  # the scores'
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


def given_list(tmp_path, name, reorder=lambda hypotheses: hypotheses, damage=None):
    """The fixture's dev 100-best list (mert-moses.pl's first run) for the 20 sentences of
    dev_slice, each sentence's hypotheses reordered by `reorder`; `damage` (line number, text)
    replaces one line."""
    sentences: dict = {}
    for line in gzip.open(TUNING / "run1.best100.out.gz", "rt").read().splitlines():
        if int(line.split(" ||| ")[0]) < 20:
            sentences.setdefault(line.split(" ||| ")[0], []).append(line)
    lines = [line for hypotheses in sentences.values() for line in reorder(hypotheses)]
    if damage is not None:
        lines[damage[0] - 1] = damage[1]
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_a_rerun_with_another_test_list_or_starting_weight_redoes_what_they_change(tmp_path, tiny_model_path,
                                                                                   dev_slice):
    """Issue 32 case 1: the steps record what they were made from; another --test-nbest rescores and
    reranks the test list (dev's steps are kept), another --initial-weight tunes again."""
    moses = install_fake_moses(tmp_path / "moses")
    first, other = given_list(tmp_path, "a.nbest"), given_list(tmp_path, "b.nbest", lambda h: h[::-1])
    out = tmp_path / "rerank"
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1", "--dev-nbest", first,
                     "--test-nbest", first)
    assert run.returncode == 0, run.stderr
    one_best = (out / "test.1best").read_text().splitlines()
    assert one_best[0] == "abraham prit une autre femme , et son nom était ketura ."
    again = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1", "--dev-nbest", first,
                       "--test-nbest", other)
    assert again.returncode == 0, again.stderr
    assert "scoring the test n-best list" in again.stderr and "again: its n-best list changed" in again.stderr
    assert "scoring the dev n-best list" not in again.stderr and len(calls(moses, "mert")) == 1
    last = [line.split(" ||| ")[1].strip() for line in other.read_text().splitlines()]
    assert (out / "test.1best").read_text().splitlines()[0] == last[0] != one_best[0]
    assert gzip.open(out / "test.nbest.gz", "rt").readline().split(" ||| ")[1].strip() == last[0]
    third = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1", "--dev-nbest", first,
                       "--test-nbest", other, "--initial-weight", "0.5")
    assert third.returncode == 0, third.stderr
    assert "tuning the reranking weights (mert) again: its setting initial_weight" in third.stderr
    assert len(calls(moses, "mert")) == 2
    assert (out / "seed1" / "init.opt").read_text().splitlines()[0].endswith(" 0.5 0.5")  # mert's start
    weights = json.loads((out / "seed1" / "weights.json").read_text())["weights"]
    assert (weights["RNNfwd_0"], weights["RNNfwdPerWord_0"]) == (0.5, 0.5)  # the stand-in keeps the start


def test_a_model_retrained_in_place_is_another_model(tmp_path, tiny_model_path, dev_slice):
    """Issue 32 case 2: a model is its content, not its path: a copy elsewhere reuses the scored
    lists; new bytes at the same path score them again."""
    moses = install_fake_moses(tmp_path / "moses")
    model = tmp_path / "m.pt"
    model.write_bytes(tiny_model_path.read_bytes())
    assert run_rerank(tmp_path, moses, model, dev_slice, "--seeds", "1").returncode == 0
    out = tmp_path / "rerank"
    before = gzip.open(out / "test.nbest.gz", "rt").readline()
    copy = tmp_path / "copy.pt"
    copy.write_bytes(model.read_bytes())
    run = run_rerank(tmp_path, moses, copy, dev_slice, "--seeds", "1")
    assert run.returncode == 0, run.stderr
    assert "scoring the" not in run.stderr and len(calls(moses, "mert")) == 1
    model.write_bytes((FIXTURE_FILES / "v1-model.pt").read_bytes())  # "retrained" at the same path
    run = run_rerank(tmp_path, moses, model, dev_slice, "--seeds", "1")
    assert run.returncode == 0, run.stderr
    assert "scoring the test n-best list" in run.stderr and "again: its models changed" in run.stderr
    assert gzip.open(out / "test.nbest.gz", "rt").readline() != before
    assert len(calls(moses, "mert")) == 2 and len(calls(moses, "moses")) == 2  # retuned; never decoded again


def test_a_damaged_scored_list_is_made_again(tmp_path, tiny_model_path, dev_slice):
    """A scored copy that is not the one the step wrote (damaged, truncated) is redone, not read."""
    moses = install_fake_moses(tmp_path / "moses")
    assert run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1").returncode == 0
    out = tmp_path / "rerank"
    good, table = (out / "test.nbest.gz").read_bytes(), (out / "results.md").read_text()
    (out / "test.nbest.gz").write_bytes(good[:len(good) // 2])
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1")
    assert run.returncode == 0, run.stderr
    assert "test.nbest.gz is not the file the test list scored with the models wrote" in run.stderr
    assert (out / "test.nbest.gz").read_bytes() == good and run.stdout == table


def test_a_bad_feature_names_the_users_list_and_line(tmp_path, tiny_model_path, dev_slice):
    """Issue 32 case 21: the given list is read before the models score it, so an error names it."""
    moses = install_fake_moses(tmp_path / "moses")
    good = given_list(tmp_path, "a.nbest")
    line = good.read_text().splitlines()[6].replace("LM0= -", "LM0= x")
    bad = given_list(tmp_path, "bad.nbest", damage=(7, line))
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1", "--dev-nbest", good,
                     "--test-nbest", bad)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1].startswith(f"Error: {bad}:7: bad features field"), run.stderr
    assert not (tmp_path / "rerank" / "test.nbest.gz").exists()


def test_an_interrupt_says_what_is_kept_and_a_rerun_continues(tmp_path, tiny_model_path, dev_slice):
    """Issue 32 case 20: SIGTERM while mert tunes: the decoded and scored lists stay, and the
    last line says so and how to go on; the rerun decodes and scores nothing again."""
    moses = install_fake_moses(tmp_path / "moses", hang_in="mert")
    src, ref, darby = dev_slice
    small_system(tmp_path)[0].rename(tmp_path / "pt.moses.ini")
    process = subprocess.Popen(
        [RESCORE, "moses", "rerank", "--ini", tmp_path / "pt.moses.ini", "--model", tiny_model_path, "--dev", src,
         ref, "--dev-ref", darby, "--test", src, ref, "--test-ref", darby, "--nbest-size", "100", "--out-dir",
         tmp_path / "rerank", "--moses-dir", moses, "--seeds", "1"],
        stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not calls(moses, "mert") and time.time() < deadline and process.poll() is None:
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    out = tmp_path / "rerank"
    assert stderr.strip().splitlines()[-1] == (
        f"rescore: interrupted (SIGTERM); no results were written; the finished steps are kept in {out} "
        "(dev.decoder.nbest, dev.nbest.gz, test.decoder.nbest, test.nbest.gz, dev.features.dat, "
        "dev.scores.dat): rerun the same command to continue from them")
    set_fake(moses, hang_in=None)
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--seeds", "1")
    assert run.returncode == 0, run.stderr
    assert not any(f"{doing} the" in run.stderr for doing in ("decoding", "scoring", "extracting"))
    assert len(calls(moses, "moses")) == 2 and len(calls(moses, "extractor")) == 1


def user_list(path, sentences, edit=lambda sentence, line: line):
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
    cut = user_list(tmp_path / "cut.nbest", set(range(20)) - {5, 12})
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
    given = user_list(tmp_path / "test.nbest", set(range(20)), latin1)
    run = run_rerank(tmp_path, moses, tiny_model_path, dev_slice, "--test-nbest", given, "--seeds", "1",
                     test_slice=(source, *dev_slice[1:]))
    assert run.returncode == 0, run.stderr
    out = tmp_path / "rerank"
    assert (out / "test.1best").read_bytes().split(b"\n")[0].startswith(b"abr\xe0ham prit une autre femme")
    assert b"abr\xe0ham" in (out / "seed1" / "test.reranked").read_bytes().split(b"\n")[0]
    scored = gzip.open(out / "test.nbest.gz", "rb").read()
    assert scored.count(b"abr\xe0ham") == given.read_bytes().count(b"abr\xe0ham") > 0


def test_rerank_without_moses_tunes_the_given_lists_in_numpy(tmp_path, tiny_model_path, dev_slice):
    """No Moses anywhere: the lists given, `--tuner auto` extracts and tunes in Python."""
    src, ref, darby = dev_slice
    lists = {}
    for name in ("dev", "test"):  # the stored real list of the first 20 dev verses serves as both
        with gzip.open(FIXTURES / "nbest/dev.nbest200.gz", "rb") as handle:
            lines = [line for line in handle if int(line.split(b" ||| ")[0]) < 20]
        lists[name] = tmp_path / f"{name}.nbest"
        lists[name].write_bytes(b"".join(lines))
    env = {key: value for key, value in os.environ.items() if key != "MOSES_HOME"}
    run = rescore("moses", "rerank", "--ini", TUNING / "moses.ini", "--model", tiny_model_path, "--dev", src, ref,
                  "--dev-ref", darby, "--test", src, ref, "--test-ref", darby, "--dev-nbest", lists["dev"],
                  "--test-nbest", lists["test"], "--out-dir", tmp_path / "rerank", "--seeds", "2", env=env)
    assert run.returncode == 0, run.stderr
    assert "tuner:numpy" in run.stderr
    out = tmp_path / "rerank"
    assert (out / "dev.features.dat").read_text().startswith("FEATURES_TXT_BEGIN_0 0 ")
    weights = json.loads((out / "seed1" / "weights.json").read_text())
    assert set(weights["weights"]) >= {"LM0_0", "RNNfwd_0", "RNNfwdPerWord_0"}
    assert abs(sum(abs(w) for w in weights["weights"].values()) - 1) < 1e-9
    assert 0 < weights["dev_bleu_nbest"] < 100
    assert "MERT in numpy" in (out / "results.md").read_text()
    refused = rescore("moses", "rerank", "--ini", TUNING / "moses.ini", "--model", tiny_model_path, "--dev", src,
                      ref, "--test", src, ref, "--dev-nbest", lists["dev"], "--test-nbest", lists["test"],
                      "--out-dir", tmp_path / "mira", "--optimizer", "batch-mira", "--tuner", "numpy", env=env)
    assert refused.returncode == 2 and "--tuner numpy runs MERT or PRO" in refused.stderr
    pro = rescore("moses", "rerank", "--ini", TUNING / "moses.ini", "--model", tiny_model_path, "--dev", src, ref,
                  "--dev-ref", darby, "--test", src, ref, "--test-ref", darby, "--dev-nbest", lists["dev"],
                  "--test-nbest", lists["test"], "--out-dir", tmp_path / "pro", "--seeds", "1", "--optimizer", "pro",
                  env=env)
    assert pro.returncode == 0, pro.stderr
    assert "tuner:numpy" in pro.stderr and "optimizer:pro" in pro.stderr
    tuned = json.loads((tmp_path / "pro" / "seed1" / "weights.json").read_text())
    assert tuned["optimizer"] == "pro" and tuned["weights"] != weights["weights"]
    assert abs(sum(abs(w) for w in tuned["weights"].values()) - 1) < 1e-9
    assert "by pro (this package's PRO in numpy)" in (tmp_path / "pro" / "results.md").read_text()
    with_moses = rescore("moses", "rerank", "--ini", TUNING / "moses.ini", "--model", tiny_model_path, "--dev", src,
                         ref, "--test", src, ref, "--dev-nbest", lists["dev"], "--test-nbest", lists["test"],
                         "--out-dir", tmp_path / "pro-moses", "--optimizer", "pro", "--tuner", "moses", env=env)
    assert with_moses.returncode == 2 and "--optimizer pro runs in numpy" in with_moses.stderr
