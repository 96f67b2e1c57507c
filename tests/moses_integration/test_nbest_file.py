"""Reading a whole n-best list with its segmentation (the proxy bench's input): the stored real
lists read whole, and every field of a bad line is refused in one line naming file and line."""

import gzip
import itertools

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.line_files import read_lines
from moses_integration.nbest.nbest_file import read_nbest_list
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

DEV_LIST = FIXTURES / "nbest/dev.nbest200.gz"
DEV_SRC = FIXTURES / "corpus/dev.en.gz"


@pytest.fixture(scope="module")
def sources():
    return read_lines(DEV_SRC)[:3]


@pytest.fixture(scope="module")
def real_lines():
    """The real lines of dev verses 0-2, as Moses wrote them."""
    with gzip.open(DEV_LIST, "rb") as handle:
        return list(itertools.takewhile(lambda line: int(line.split(b" ||| ")[0]) < 3, handle))


def write(tmp_path, lines):
    path = tmp_path / "list.nbest"
    path.write_bytes(b"".join(lines))
    return path


def test_real_lines_read_with_their_features_and_phrase_pairs(tmp_path, sources, real_lines):
    nbest = read_nbest_list(write(tmp_path, real_lines), sources)
    assert nbest.num_sentences == 3
    assert nbest.starts[-1] == len(real_lines)
    assert nbest.feature_names[:2] == ["LexicalReordering0_0", "LexicalReordering0_1"]
    assert nbest.feature_names[-4:] == [f"TranslationModel0_{i}" for i in range(4)]
    # the first line: LM0= -52.4848, and six phrase pairs in target order
    assert nbest.features[0, nbest.feature_names.index("LM0_0")] == -52.4848
    assert nbest.hypotheses[0] == "abraham prit une autre femme , et son nom était ketura ."
    assert nbest.segmentations[0][:2] == [((0, 2), (0, 2)), ((2, 5), (2, 6))]
    picked = nbest.rows([2, 0])
    assert picked.sources == [sources[2], sources[0]]
    assert picked.hypotheses[0] == nbest.hypotheses[nbest.starts[2]]
    assert list(picked.line_numbers[:1]) == [nbest.starts[2] + 1]
    shorter = nbest.first(2)
    sizes = np.diff(nbest.starts)
    assert list(np.diff(shorter.starts)) == [min(2, n) for n in sizes] and shorter.sources == nbest.sources
    assert shorter.hypotheses[2:4] == nbest.hypotheses[nbest.starts[1]:nbest.starts[1] + 2]
    assert (shorter.features[2] == nbest.features[nbest.starts[1]]).all()


def replaced(line: bytes, field: int, value: bytes) -> bytes:
    fields = line.rstrip(b"\n").split(b" ||| ")
    fields[field] = value
    return b" ||| ".join(fields) + b"\n"


BAD = [
    ("no segmentation", lambda l: b" ||| ".join(l.split(b" ||| ")[:4]) + b"\n",
     "expected 'id ||| hypothesis ||| features ||| total ||| segmentation', found 4 field(s)"),
    ("alignment but no segmentation", lambda l: replaced(l, 4, b"0-0 1-1"),
     "no phrase segmentation; write the list with Moses' -include-segmentation-in-n-best"),
    ("span outside the source", lambda l: replaced(l, 4, b"0-1=0-1 2-4=2-5 5-6=6-7 7=8 8=9 9-40=10-11"),
     "segment 9-40=10-11: source span past the source's 11 word(s)"),
    ("feature value not a number", lambda l: l.replace(b"LM0= -52.4848", b"LM0= -5x2"),
     "bad features field (could not convert string to float: '-5x2')"),
    ("total not a number", lambda l: replaced(l, 3, b"nan?"), "total 'nan?' is not a number"),
    ("alignment outside the pair", lambda l: replaced(l, 5, b"0-0 11-1"),
     "alignment point 11-1 outside the sentence pair (11 source, 12 target word(s))"),
    ("something after the alignment", lambda l: l.rstrip(b"\n") + b" ||| extra\n",
     "expected a word alignment 's-t ...' after the segmentation, found '0-0 1-1 2-2 2-3 3-4 4-5 5-6 6-7 7-8 "),
    ("id beyond the source", lambda l: b"7" + l[1:], "sentence id 7 but the source has only 3 sentence(s)"),
]


@pytest.mark.parametrize("change, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_a_bad_field_is_refused_naming_file_and_line(tmp_path, sources, real_lines, change, message):
    lines = list(real_lines)
    lines[0] = change(lines[0])
    path = write(tmp_path, lines)
    with pytest.raises(NbestFormatError) as info:
        read_nbest_list(path, sources)
    assert str(info.value).startswith(f"{path}:1: {message}")


def test_sentences_out_of_order_or_missing_are_refused(tmp_path, sources, real_lines):
    later = [line for line in real_lines if line.startswith(b"1 ")][0]
    path = write(tmp_path, real_lines + [later])
    with pytest.raises(NbestFormatError, match=rf"^{path}:{len(real_lines) + 1}: sentence id 1 after 2; "):
        read_nbest_list(path, sources)
    path = write(tmp_path, [line for line in real_lines if not line.startswith(b"1 ")])
    with pytest.raises(NbestFormatError, match=r"no hypotheses for 1 of the 3 sentences of the source \(ids 1\)"):
        read_nbest_list(path, sources)
    path = write(tmp_path, real_lines[:1] + [b"\n"] + real_lines[1:])
    with pytest.raises(NbestFormatError, match=rf"^{path}:2: empty line"):
        read_nbest_list(path, sources)


def test_a_line_with_other_features_is_refused(tmp_path, sources, real_lines):
    lines = list(real_lines)
    lines[3] = lines[3].replace(b"Distortion0= 0 ", b"")
    path = write(tmp_path, lines)
    with pytest.raises(NbestFormatError, match=rf"^{path}:4: features .* differ from the first line's"):
        read_nbest_list(path, sources)
