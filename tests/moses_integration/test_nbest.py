"""n-best rescoring on the real 100-best list of iteration 11: one feature added, all else kept."""

import gzip

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.nbest.candidates import read_nbest
from moses_integration.nbest.rnn_features import (NbestModel, add_sentence_features, iter_feature_values,
                                                  parse_segmentation, rescore_nbest)
from moses_integration.line_files import count_lines, read_lines
from rescorer.errors import RescorerError
from tests.fake_moses import FIXTURES, needs_fixtures
from tests.helpers import first_lines

pytestmark = needs_fixtures

NBEST = FIXTURES / "tuning/run11.best100.out.gz"
DEV_SRC = FIXTURES / "corpus/dev.en.gz"


def rnn0(scorer, **checks):
    """`scorer` as the RNN0 feature, the name rescore-nbest adds by default."""
    return NbestModel("RNN0", scorer, **checks)


class FakeScorer:
    """log p = -(number of target words) - 0.5 * (source words); records the pairs it saw."""

    def __init__(self):
        self.pairs = []

    def __call__(self, pairs):
        self.pairs.extend(pairs)
        return np.array([-len(t.split()) - 0.5 * len(s.split()) for s, t in pairs], dtype=float)


def nbest_lines(tmp_path, lines):
    path = tmp_path / "list.nbest"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("out_name", ["rescored.gz", "rescored.txt"])
def test_real_nbest_keeps_every_byte_and_adds_the_feature(out_name, tmp_path):
    scorer = FakeScorer()
    out = tmp_path / out_name
    scored = rescore_nbest(NBEST, out, DEV_SRC, rnn0(scorer), chunk_lines=3000)
    original = gzip.open(NBEST, "rb").read().splitlines(keepends=True)
    rescored = (gzip.open(out, "rb") if out_name.endswith(".gz") else open(out, "rb")).read() \
        .splitlines(keepends=True)
    assert scored.lines == len(original) == len(rescored) == 50679  # "distinct" 100-best: fewer for short verses
    assert scored.sentences == 842 and not scored.per_phrase
    sources = read_lines(DEV_SRC)
    expected = []
    for line in original:
        fields = line.split(b" ||| ")
        hyp = fields[1].decode()
        value = -len(hyp.split()) - 0.5 * len(sources[int(fields[0])].split())
        fields[2] += f" RNN0= {value:.6g}".encode()
        expected.append(b" ||| ".join(fields))
    assert rescored == expected
    assert scorer.pairs[0] == (sources[0], "abraham prit une autre femme , et son nom était ketura .")


def test_segmented_nbest_scores_each_phrase_pair(tmp_path):
    """Field 5 as Moses writes it with -include-segmentation-in-n-best (Manager::OutputNBest)."""
    line = first_lines(NBEST, 1, tmp_path / "one").read_bytes().rstrip(b"\n")
    # "abraham prit une autre femme , et son nom était ketura ." for "abraham took another wife ..."
    nbest = tmp_path / "seg.nbest"
    nbest.write_bytes(line + b" ||| 0-1=0-1 2=2-4 3-4=5-6 5-10=7-11\n")
    scorer = FakeScorer()
    rescore_nbest(nbest, tmp_path / "out", DEV_SRC, rnn0(scorer))
    src = read_lines(DEV_SRC)[0].split()
    assert scorer.pairs == [(" ".join(src[0:2]), "abraham prit"),
                            (src[2], "une autre femme"), (" ".join(src[3:5]), ", et"),
                            (" ".join(src[5:11]), "son nom était ketura .")]
    assert list(iter_feature_values(tmp_path / "out", "RNN0")) == [-(2 + 1 + 3 + 0.5 + 2 + 1 + 5 + 3)]
    assert (tmp_path / "out").read_bytes().endswith(b" ||| 0-1=0-1 2=2-4 3-4=5-6 5-10=7-11\n")


def test_parse_segmentation():
    assert parse_segmentation(b"0-1=0-1 2=2 3-5=3") == [((0, 2), (0, 2)), ((2, 3), (2, 3)),
                                                         ((3, 6), (3, 4))]


def test_infinite_sentence_scores_are_floored_per_target_token(tmp_path):
    nbest = first_lines(NBEST, 2, tmp_path / "two")  # 12 and 11 target words
    rescore_nbest(nbest, tmp_path / "out", DEV_SRC, rnn0(lambda pairs: np.full(len(pairs), -np.inf)))
    assert list(iter_feature_values(tmp_path / "out", "RNN0")) == [-1300.0, -1200.0]


def test_phrase_scores_are_floored_like_the_table_column(tmp_path):
    line = first_lines(NBEST, 1, tmp_path / "one").read_bytes().rstrip(b"\n")
    nbest = tmp_path / "seg.nbest"
    nbest.write_bytes(line + b" ||| 0-1=0-1 2-10=2-11\n")
    rescore_nbest(nbest, tmp_path / "out", DEV_SRC, rnn0(lambda pairs: np.array([-250.0, -3.0])))
    assert list(iter_feature_values(tmp_path / "out", "RNN0")) == [-103.0]


BAD = [
    ("too few fields", b"0 ||| hyp ||| LM0= -1\n", "{n}:1: expected 'id ||| hypothesis ||| features ||| total', found 3 field(s)"),
    ("id not a number", b"x ||| hyp ||| LM0= -1 ||| -1\n", "{n}:1: sentence id 'x' is not a number"),
    ("id beyond the source", b"842 ||| hyp ||| LM0= -1 ||| -1\n", "{n}:1: sentence id 842 but {s} has only 842 sentence(s)"),
    ("feature already there", b"0 ||| hyp ||| LM0= -1 RNN0= -3 ||| -1\n", "{n}:1: the features already contain RNN0="),
]


@pytest.mark.parametrize("line, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_nbest_lines(line, message, tmp_path):
    nbest = tmp_path / "bad.nbest"
    nbest.write_bytes(line)
    with pytest.raises(NbestFormatError) as info:
        rescore_nbest(nbest, tmp_path / "out", DEV_SRC, rnn0(FakeScorer()))
    assert str(info.value) == message.format(n=nbest, s=DEV_SRC)


def test_phrase_mode_without_segmentation_is_an_error(tmp_path):
    nbest = first_lines(NBEST, 1, tmp_path / "one")
    with pytest.raises(NbestFormatError, match=r"one:1: expected 'id \|\|\| hypothesis \|\|\| features \|\|\| total "
                                               r"\|\|\| segmentation', found 4 field\(s\); write the list with "
                                               r"Moses' -include-segmentation-in-n-best"):
        rescore_nbest(nbest, tmp_path / "out", DEV_SRC, rnn0(FakeScorer()), mode="phrase")


def test_output_is_atomic_and_replaced_only_with_force(tmp_path):
    nbest = first_lines(NBEST, 3, tmp_path / "three")
    out = tmp_path / "out.gz"
    with pytest.raises(NbestFormatError):  # a failed run leaves nothing at or beside the output
        rescore_nbest(nbest, out, DEV_SRC, rnn0(FakeScorer()), mode="phrase")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["three"]
    out.write_bytes(b"old\n")
    with pytest.raises(RescorerError, match="out.gz: the output exists; pass --force"):
        rescore_nbest(nbest, out, DEV_SRC, rnn0(FakeScorer()))
    assert out.read_bytes() == b"old\n"
    assert rescore_nbest(nbest, out, DEV_SRC, rnn0(FakeScorer()), force=True).lines == 3
    assert len(gzip.open(out, "rb").read().splitlines()) == 3
    with pytest.raises(RescorerError, match="the output is the input"):
        rescore_nbest(nbest, nbest, DEV_SRC, rnn0(FakeScorer()), force=True)


def test_lines_end_at_newline_only_as_moses_reads_them(tmp_path):
    """Issue 32, case 5: a lone CR inside a line stays in it (Moses splits on \\n only), so the
    lines read and the lines counted agree; a CRLF line ending is still an ending."""
    path = tmp_path / "src"
    path.write_bytes(b"one two\rthree\nfour five\r\nsix")
    assert read_lines(path) == ["one two\rthree", "four five", "six"]
    assert count_lines(path) == 3


def test_a_lone_cr_in_a_source_line_leaves_later_sentences_aligned(tmp_path):
    """Issue 32, case 5: the hypotheses of sentence 1 are scored against source line 1, not
    against the piece after the CR of line 0."""
    nbest = nbest_lines(tmp_path, [b"0 ||| un deux trois ||| LM0= -1 ||| -1", b"1 ||| quatre cinq ||| LM0= -2 ||| -2"])
    source = tmp_path / "src"
    source.write_bytes(b"one two\rthree\nfour five\n")
    scorer = FakeScorer()
    rescore_nbest(nbest, tmp_path / "out", source, rnn0(scorer))
    assert scorer.pairs == [("one two\rthree", "un deux trois"), ("four five", "quatre cinq")]
    sentences = NbestModel("RNNfwd", FakeScorer())
    add_sentence_features(nbest, tmp_path / "out2", source, [sentences], per_word=False)
    assert sentences.scorer.pairs == scorer.pairs


def test_bytes_that_are_not_utf8_are_kept(tmp_path):
    """Issue 32, case 15: a byte that is not UTF-8 in a hypothesis or in the source is read as the
    table path reads it (surrogateescape) and written back as it was."""
    lines = [b"0 ||| caf\xe9 au lait ||| LM0= -1 ||| -1", b"1 ||| deux ||| LM0= -2 ||| -2"]
    nbest = nbest_lines(tmp_path, lines)
    source = tmp_path / "src"
    source.write_bytes(b"coffee \xff milk\ntwo\n")
    scorer = FakeScorer()
    rescore_nbest(nbest, tmp_path / "out", source, rnn0(scorer))
    assert (tmp_path / "out").read_bytes() == b"".join(
        line.replace(b" ||| -", b" RNN0= %s ||| -" % value) + b"\n" for line, value in zip(lines, [b"-4.5", b"-1.5"]))
    assert scorer.pairs[0] == ("coffee \udcff milk", "caf\udce9 au lait")
    add_sentence_features(nbest, tmp_path / "out2", source, [NbestModel("RNNfwd", FakeScorer())], per_word=False)
    assert (tmp_path / "out2").read_bytes().splitlines()[0] == b"0 ||| caf\xe9 au lait ||| LM0= -1 RNNfwd= -4.5 ||| -1"
    assert read_nbest(nbest, read_lines(source))[0][0].words.encode("utf-8", "surrogateescape") == b"caf\xe9 au lait"
