"""Evaluation: decoding through the stand-in decoder, BLEU equal to the README's multi-bleu,
with one reference or with the second (Darby) as well."""

import pytest

from moses_integration.errors import PreflightError
from moses_integration.evaluation.scores import bleu_of_files, compare, decode, evaluate_file, score, sentence_bleu
from moses_integration.ini.moses_install import find_moses
from moses_integration.line_files import read_lines
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures

pytestmark = needs_fixtures

HYP = FIXTURES / "eval/test.hyp.fr.gz"
REF = FIXTURES / "corpus/test.fr.gz"
DARBY = FIXTURES / "corpus/test.ref-darby.fr.gz"


def test_bleu_matches_multi_bleu_of_the_readme():
    result = evaluate_file(HYP, [REF])
    assert round(result.bleu, 2) == 38.27  # README: multi-bleu.perl 38.27
    assert result.num_lines == 802 and result.references == 1
    assert "tok:none" in result.bleu_signature and "nrefs:1" in result.bleu_signature


def test_two_references_score_as_the_fixture_readme_says():
    result = evaluate_file(HYP, [REF, DARBY])
    assert round(result.bleu, 2) == 46.56  # README: Segond + Darby 46.56
    assert result.references == 2 and "nrefs:2" in result.bleu_signature
    assert result.chrf > evaluate_file(HYP, [REF]).chrf  # chrF takes the best reference per line too


def test_the_second_reference_must_match_the_hypotheses():
    with pytest.raises(PreflightError, match="802 hypotheses but 842 references"):
        evaluate_file(HYP, [REF, FIXTURES / "corpus/dev.ref-darby.fr.gz"])


def test_decode_feeds_the_source_and_keeps_the_output(tmp_path):
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    hyp = decode(moses, FIXTURES / "tuning/moses.ini", FIXTURES / "corpus/test.en.gz",
                 tmp_path / "out/test.hyp", threads=3, base_dir=FIXTURES,
                 decoder_flags=("-search-algorithm", "1"))
    assert read_lines(hyp) == read_lines(HYP)
    [call] = calls(moses.root, "moses")
    assert call["argv"] == ["-f", str(FIXTURES / "tuning/moses.ini"), "-threads", "3",
                            "-search-algorithm", "1"]
    assert call["cwd"] == str(FIXTURES)


def test_compare_puts_the_baseline_first():
    hyps, refs = read_lines(HYP), read_lines(REF)
    better = hyps[:400] + refs[400:]
    p = compare([("Baseline", hyps), ("better", better)], [refs], num_samples=50)
    assert list(p) == ["Baseline", "better"]
    assert p["Baseline"] == {"bleu": None, "chrf": None}
    assert p["better"]["bleu"] < 0.05 and p["better"]["chrf"] < 0.05


def test_a_system_equal_to_the_baseline_has_p_1():
    """sacrebleu's tests give 1 / (trials + 1) to an output equal to the baseline's: no difference
    is no evidence of one."""
    hyps, refs = read_lines(HYP), read_lines(REF)
    for test_type in ("ar", "bs"):
        p = compare([("Baseline", hyps), ("same", list(hyps))], [refs], test_type, num_samples=50)
        assert p["same"] == {"bleu": 1.0, "chrf": 1.0}


def test_length_mismatch_is_one_line():
    with pytest.raises(PreflightError, match="hyp.txt: 2 hypotheses but 1 reference;"):
        score(["a", "b"], [["a"]], "hyp.txt")


def test_bleu_of_several_files_equals_one_by_one():
    files = [FIXTURES / "tuning/run1.out.gz", FIXTURES / "tuning/run2.out.gz"]
    dev = [FIXTURES / "corpus/dev.fr.gz", FIXTURES / "corpus/dev.ref-darby.fr.gz"]
    assert bleu_of_files(files, dev) == [evaluate_file(f, dev).bleu for f in files]
    assert bleu_of_files(files, dev[:1]) < bleu_of_files(files, dev)  # a second reference matches more
    with pytest.raises(PreflightError, match="test.hyp.fr.gz: 802 hypotheses but 842 references"):
        bleu_of_files([HYP], dev)


def test_sentence_bleu_keeps_tokens_and_scores_short_sentences():
    """Tokenized text is not split again (13a would split "roi." and score 100), a 3-word
    sentence without 4-grams scores by its lower orders (without effective order: 0), and the
    best reference counts."""
    assert sentence_bleu("le grand roi.", ["le grand roi ."]) < 50
    assert sentence_bleu("le grand roi", ["un petit roi", "le grand roi"]) == pytest.approx(100)
    assert 0 < sentence_bleu("le grand homme", ["le grand roi"]) < 100
