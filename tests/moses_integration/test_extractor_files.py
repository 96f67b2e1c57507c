"""Extractor files read and merged as mert merges them; malformed ones refused in one line
naming the file and the line."""

import gzip

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.nbest.extractor_files import read_extractor_files, unique_order
from tests.fake_moses import FIXTURES, needs_fixtures

TUNING = FIXTURES / "tuning"


def runs(*numbers):
    return ([TUNING / f"run{n}.features.dat.gz" for n in numbers],
            [TUNING / f"run{n}.scores.dat.gz" for n in numbers])


@needs_fixtures
def test_one_real_iteration():
    arrays = read_extractor_files(*runs(1))
    assert arrays.features.shape == (49881, 14) and arrays.stats.shape == (49881, 9)
    assert arrays.names[:2] == ["LexicalReordering0_0", "LexicalReordering0_1"]
    assert arrays.names[-1] == "TranslationModel0_3"
    assert arrays.sentence_ids.tolist() == list(range(842))
    assert arrays.starts[:3].tolist() == [0, 86, 186]  # sentence 0 has 86 distinct hypotheses
    assert arrays.features[0].tolist() == [-2.48802, 0, 0, -2.05008, 0, 0, 0, -52.4848, -12, 6,
                                           -3.4883, -7.63506, -4.89651, -11.0934]
    assert arrays.stats[0].tolist() == [7, 12, 3, 11, 0, 10, 0, 9, 9]
    assert (arrays.row_sentences[85], arrays.row_sentences[86]) == (0, 1)


@needs_fixtures
def test_two_iterations_merge_per_sentence_without_duplicates():
    one, two = read_extractor_files(*runs(1)), read_extractor_files(*runs(2))
    both = read_extractor_files(*runs(1, 2))
    for s in (0, 1, 400, 841):
        rows = [np.hstack([a.features[a.starts[s]:a.starts[s + 1]], a.stats[a.starts[s]:a.starts[s + 1]]])
                for a in (one, two)]
        distinct = {row.tobytes() for row in np.vstack(rows)}
        merged = np.hstack([both.features, both.stats])[both.starts[s]:both.starts[s + 1]]
        assert len(merged) == len(distinct) == len({row.tobytes() for row in merged})
        np.testing.assert_array_equal(merged[:len(rows[0])], rows[0])  # run 1's come first, kept


def test_duplicates_are_swapped_out_as_mert_does():
    # a b a c b d: the second a swaps with d (looked at next), the second b is then last
    assert unique_order([b"a", b"b", b"a", b"c", b"b", b"d"]) == [0, 1, 5, 3]
    assert unique_order([b"a", b"a", b"a"]) == [0]
    assert unique_order([]) == []


FEATURES = """FEATURES_TXT_BEGIN_0 0 2 2 F_0 G_0
-1 2
-3 4
FEATURES_TXT_END_0
FEATURES_TXT_BEGIN_0 1 1 2 F_0 G_0
0.5 1e-3
FEATURES_TXT_END_0
"""
SCORES = """SCORES_TXT_BEGIN_0 0 2 9 BLEU
1 2 0 1 0 0 0 0 2
2 2 1 1 0 0 0 0 2
SCORES_TXT_END_0
SCORES_TXT_BEGIN_0 1 1 9 BLEU
3 3 2 2 1 1 0 0 3
SCORES_TXT_END_0
"""


def write(tmp_path, features=FEATURES, scores=SCORES, compress=False):
    paths = tmp_path / "f.dat", tmp_path / "s.dat"
    for path, text in zip(paths, (features, scores)):
        path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    return [paths[0]], [paths[1]]


@pytest.mark.parametrize("compress", [False, True])
def test_a_small_file_plain_or_gzipped(tmp_path, compress):
    arrays = read_extractor_files(*write(tmp_path, compress=compress))
    assert arrays.names == ["F_0", "G_0"]
    assert arrays.features.tolist() == [[-1, 2], [-3, 4], [0.5, 0.001]]
    assert arrays.stats[:, 0].tolist() == [1, 2, 3] and arrays.starts.tolist() == [0, 2, 3]


# (which file, old text, new text, the message after "<path>:")
BAD = [
    ("f", "FEATURES_TXT_BEGIN_0 0 2 2", "FEATURES_BIN_BEGIN_0 0 2 2",
     "1: expected 'FEATURES_TXT_BEGIN_0 <sentence> <count> <dims> ...' (feature, text format), "
     "found 'FEATURES_BIN_BEGIN_0 0 2 2'"),
    ("f", "-3 4\n", "-3\n", "3: expected 2 feature values, found 1"),
    ("f", "-3 4\n", "-3 x4\n", "3: feature value 'x4' is not a finite number"),
    ("f", "-3 4\n", "-3 -inf\n", "3: feature value '-inf' is not a finite number"),
    ("f", "0 2 2 F_0 G_0\n-1 2\n-3 4\n", "0 3 2 F_0 G_0\n-1 2\n-3 4\n",
     "4: block ends after 2 rows, but its header says 3"),
    ("f", "0.5 1e-3\nFEATURES_TXT_END_0\n", "0.5 1e-3\n", "6: file ends inside the block begun at "),
    ("f", "-3 4\nFEATURES_TXT_END_0", "-3 4\n-3 4\nFEATURES_TXT_END_0",
     "4: expected 'FEATURES_TXT_END_0' after 2 rows"),
    ("f", "1 1 2 F_0 G_0", "1 1 2 F_0 H_0", "5: feature names F_0 H_0 differ from the first block's F_0 G_0"),
    ("f", "0 2 2 F_0 G_0", "0 2 2 F_0", "1: 1 feature names for 2 values"),
    ("s", "1 2 0 1 0 0 0 0 2", "1 2 0 1 0 0 0 2", "2: expected 9 score values, found 8"),
    ("s", "2 2 1 1 0 0 0 0 2", "2 2 1 1 0 0 0 0 2.5", "3: score value '2.5' is not a finite number"),
    ("s", "1 1 9 BLEU\n3 3 2 2 1 1 0 0 3\n", "2 1 9 BLEU\n3 3 2 2 1 1 0 0 3\n",
     "5: sentence 2 with 1 hypotheses, but "),
    ("s", "SCORES_TXT_BEGIN_0 1 1 9 BLEU\n3 3 2 2 1 1 0 0 3\nSCORES_TXT_END_0\n", "",
     "5: block 2 (sentence 1), but "),  # named in the file that goes on: the feature file
    ("s", "0 2 9 BLEU\n1 2 0 1 0 0 0 0 2\n2 2 1 1 0 0 0 0 2", "0 2 8 BLEU\n1 2 0 1 0 0 0 0\n2 2 1 1 0 0 0 0",
     "1: expected 9 BLEU statistics a hypothesis, found 8"),
    ("f", FEATURES, "\n", "1: no 'FEATURES_TXT_BEGIN_0' block"),
]


@pytest.mark.parametrize("which, old, new, message", BAD)
def test_malformed_files_are_refused_in_one_line(tmp_path, which, old, new, message):
    features = FEATURES.replace(old, new) if which == "f" else FEATURES
    scores = SCORES.replace(old, new) if which == "s" else SCORES
    assert (features, scores) != (FEATURES, SCORES)
    feature_paths, score_paths = write(tmp_path, features, scores)
    with pytest.raises(NbestFormatError) as error:
        read_extractor_files(feature_paths, score_paths)
    text = str(error.value)
    assert "\n" not in text
    named = "f" if message.startswith("5: block 2") else which
    path = str(feature_paths[0] if named == "f" else score_paths[0])
    assert text.startswith(path) and message in text, text


def test_a_sentence_without_hypotheses_is_refused(tmp_path):
    features = FEATURES.replace("1 1 2 F_0 G_0\n0.5 1e-3\n", "1 0 2 F_0 G_0\n")
    scores = SCORES.replace("1 1 9 BLEU\n3 3 2 2 1 1 0 0 3\n", "1 0 9 BLEU\n")
    feature_paths, score_paths = write(tmp_path, features, scores)
    with pytest.raises(NbestFormatError, match=f"^{feature_paths[0]}:5: sentence 1 has no hypothesis in any file$"):
        read_extractor_files(feature_paths, score_paths)
