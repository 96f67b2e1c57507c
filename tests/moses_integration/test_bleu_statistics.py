"""BLEU statistics are those Moses's extractor wrote for the real dev n-best lists, and corpus
BLEU agrees with sacrebleu (two references, no smoothing)."""

import numpy as np
import pytest
import sacrebleu

from moses_integration.line_files import read_lines
from moses_integration.nbest.bleu_statistics import bleu_of_totals, bleu_statistics, corpus_bleu
from moses_integration.nbest.candidates import read_nbest
from moses_integration.nbest.extractor_files import read_extractor_files, unique_order
from tests.fake_moses import FIXTURES, needs_fixtures

TUNING = FIXTURES / "tuning"


@needs_fixtures
@pytest.mark.parametrize("run", [1, 11])
def test_statistics_are_the_extractors_for_the_real_lists(run):
    """mert-moses.pl scored every dev line (all 842, not the bench's odd lines) against
    corpus/dev.fr alone; the extractor then dropped duplicates, reordering the rest."""
    refs = read_lines(FIXTURES / "corpus/dev.fr.gz")
    sentences = read_nbest(TUNING / f"run{run}.best100.out.gz", read_lines(FIXTURES / "corpus/dev.en.gz"))
    written = read_extractor_files([TUNING / f"run{run}.features.dat.gz"], [TUNING / f"run{run}.scores.dat.gz"])
    assert written.num_sentences == len(refs) == 842
    for s in range(0, 842, 7):
        hyps = [candidate.words for candidate in sentences[s]]
        stats = bleu_statistics(hyps, [[refs[s]]] * len(hyps))
        features = np.array([[value for _, value in c.features] for c in sentences[s]], dtype=np.float32)
        keep = unique_order([f.tobytes() + row.tobytes() for f, row in zip(features, stats)])
        lo, hi = written.starts[s], written.starts[s + 1]
        np.testing.assert_array_equal(stats[keep], written.stats[lo:hi], err_msg=f"sentence {s}")


@needs_fixtures
def test_corpus_bleu_is_sacrebleus_with_two_references():
    hyps = read_lines(FIXTURES / "nbest/dev.1best.gz")
    refs = [read_lines(FIXTURES / "corpus/dev.fr.gz"), read_lines(FIXTURES / "corpus/dev.ref-darby.fr.gz")]
    stats = bleu_statistics(hyps, [list(pair) for pair in zip(*refs)])
    expected = sacrebleu.corpus_bleu(hyps, refs, smooth_method="none", tokenize="none", force=True)
    assert corpus_bleu(stats) == pytest.approx(expected.score / 100, abs=1e-12)
    assert corpus_bleu(stats) == pytest.approx(0.4736, abs=1e-4)  # nbest/README.md: 47.36


# hypothesis, references, expected (m1 t1 m2 t2 m3 t3 m4 t4 ref_len)
CASES = [
    ("the cat the cat", ["the cat sat"], [2, 4, 1, 3, 0, 2, 0, 1, 3]),  # clipped at 1 each
    ("the the the", ["the cat", "the the cat"], [2, 3, 1, 2, 0, 1, 0, 0, 3]),  # max over refs
    ("a b c d", ["a b c", "a b c d e"], [4, 4, 3, 3, 2, 2, 1, 1, 3]),  # tie 3/5 -> shorter
    ("a b", ["a b c d e f", "x y z"], [2, 2, 1, 1, 0, 0, 0, 0, 3]),  # closest, hyp too short for 3, 4
    ("  a  b\tc ", ["a b\tc"], [2, 2, 1, 1, 0, 0, 0, 0, 2]),  # split on ' ' only, as Moses
    ("The cat", ["the cat"], [1, 2, 0, 1, 0, 0, 0, 0, 2]),  # case kept (case:true)
    ("", ["a b"], [0, 0, 0, 0, 0, 0, 0, 0, 2]),
]


@pytest.mark.parametrize("hypothesis, references, expected", CASES)
def test_statistics_by_hand(hypothesis, references, expected):
    assert bleu_statistics([hypothesis], [references]).tolist() == [expected]


def test_corpus_bleu_by_hand():
    stats = np.array([[3, 4, 2, 3, 1, 2, 1, 1, 5],  # 4 words against 5: brevity penalty
                      [2, 2, 1, 1, 1, 1, 1, 1, 1]])
    precisions = np.array([5 / 6, 3 / 4, 2 / 3, 2 / 2])
    expected = np.exp(np.log(precisions).mean() + (1 - 6 / 6))  # 6 ref words, 6 hyp words: no penalty
    assert corpus_bleu(stats) == pytest.approx(expected, rel=1e-12)
    short = np.array([3, 4, 2, 3, 1, 2, 1, 1, 5])
    assert corpus_bleu(short) == pytest.approx(np.exp(np.log([3 / 4, 2 / 3, 1 / 2, 1]).mean() + 1 - 5 / 4))
    assert corpus_bleu(np.array([3, 4, 2, 3, 0, 2, 0, 1, 4])) == 0.0  # no 3-gram match, no smoothing
    rows = bleu_of_totals(np.array([short, [3, 4, 2, 3, 0, 2, 0, 1, 4]]))
    assert rows.tolist() == [corpus_bleu(short), 0.0]
