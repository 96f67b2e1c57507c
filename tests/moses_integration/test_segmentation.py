"""Phrase segmentations of the stored real n-best lists: each is accepted, and every way a
segmentation can fail to fit its source and hypothesis is refused in one line."""

import gzip
import itertools

import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.nbest.segmentation import checked_segmentation, find_segmentation, phrase_pairs
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

DEV_LIST = FIXTURES / "nbest/dev.nbest200.gz"
DEV_SRC = FIXTURES / "corpus/dev.en.gz"


def test_the_first_real_lines_are_accepted_and_rebuild_their_hypothesis():
    sources = gzip.open(DEV_SRC, "rt", encoding="utf-8").read().split("\n")
    with gzip.open(DEV_LIST, "rb") as handle:
        for number, line in enumerate(itertools.islice(handle, 3000), start=1):
            fields = line.rstrip(b"\n").split(b" ||| ")
            source, hypothesis = sources[int(fields[0])], fields[1].decode()
            spans = checked_segmentation(find_segmentation(fields), len(source.split()),
                                         len(hypothesis.split()), f"dev:{number}")
            pairs = phrase_pairs(source, hypothesis, spans)
            assert " ".join(target for _, target in pairs) == " ".join(hypothesis.split())
            assert sorted(" ".join(source.split()[s0:s1]) for (s0, s1), _ in spans) \
                == sorted(src for src, _ in pairs)


BAD = [
    ("source past the end", b"0-1=0-1 2-5=2-3", "segment 2-5=2-3: source span past the source's 4 word(s)"),
    ("target past the end", b"0-1=0-1 2-3=2-4", "segment 2-3=2-4: target span past the hypothesis's 4 word(s)"),
    ("overlapping sources", b"0-2=0-1 2-3=2-3", "segment 2-3=2-3: source words 2-3 overlap an earlier segment"),
    ("a source word left out", b"0=0-1 2-3=2-3", "source word 1 is in no segment (the source has 4 word(s))"),
    ("target words left out", b"0-1=0-1 2-3=2", "the segments cover 3 of the hypothesis's 4 word(s)"),
    ("target out of order", b"2-3=2-3 0-1=0-1", "segment 2-3=2-3: target spans must follow each other "
                                                "from word 0 (expected one starting at 0)"),
    ("a span backwards", b"1-0=0-1 2-3=2-3", "segment 1-0=0-1: a span ends before it starts"),
    ("not a segmentation", b"0-1=0-1 x", "segmentation '0-1=0-1 x' is not 'i-j=k-l ...'"),
]


@pytest.mark.parametrize("field, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_segmentations_that_do_not_fit_are_refused(field, message):
    with pytest.raises(NbestFormatError) as info:
        checked_segmentation(field, 4, 4, "list.nbest:7")
    assert str(info.value) == f"list.nbest:7: {message}"


def test_the_segmentation_is_found_before_the_alignment():
    fields = b"0 ||| a b ||| LM0= -1 ||| -1 ||| 0=0 1=1 ||| 0-0 1-1".split(b" ||| ")
    assert find_segmentation(fields) == b"0=0 1=1"
    assert find_segmentation(fields[:4] + fields[5:]) is None
