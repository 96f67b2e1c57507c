"""Issue 45: every n-best reader of the project checks every field of every line with one checker
(nbest_lines.py) before it scores or writes anything. Each class of bad input is made from real
Moses lines (the stored 200-best lists, with segmentation and word alignment) and must be refused
by every reader with the same one line naming the file and the line; what real Moses writes
(an empty hypothesis for an empty source line, CRLF endings, the same fields on every line) is
taken."""

import gzip
import itertools
import re

import numpy as np
import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.line_files import read_lines
from moses_integration.nbest.candidates import read_nbest
from moses_integration.nbest.language_check import TextChecks
from moses_integration.nbest.nbest_file import read_nbest_list
from moses_integration.nbest.nbest_lines import check_nbest
from moses_integration.nbest.rnn_features import NbestModel, add_sentence_features, rescore_nbest
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

DEV_LIST = FIXTURES / "nbest/dev.nbest200.gz"
DEV_SRC = FIXTURES / "corpus/dev.en.gz"
PER_SENTENCE = 4  # the first hypotheses of each of the first 3 dev verses


def rnn0(scorer, **checks):
    """`scorer` as the RNN0 feature, the name rescore-nbest adds by default."""
    return NbestModel("RNN0", scorer, **checks)


@pytest.fixture(scope="module")
def real_lines():
    """Moses' own lines: 4 hypotheses each of dev verses 0-2, with segmentation and alignment."""
    with gzip.open(DEV_LIST, "rb") as handle:
        lines = itertools.takewhile(lambda line: int(line.split(b" ||| ")[0]) < 3, handle)
        by_sentence = itertools.groupby(lines, key=lambda line: line.split(b" ||| ")[0])
        return [line for _, group in by_sentence for line in itertools.islice(group, PER_SENTENCE)]


@pytest.fixture(scope="module")
def sources():
    return read_lines(DEV_SRC)[:3]


def replaced(line: bytes, field: int, value: bytes) -> bytes:
    fields = line.rstrip(b"\n").split(b" ||| ")
    fields[field] = value
    return b" ||| ".join(fields) + b"\n"


def features_edit(old: bytes, new: bytes):
    return lambda line: line.replace(old, new, 1)


def whole_list(edit):
    """An edit of the whole list, where the others edit its last line."""
    edit.whole_list = True
    return edit


LAST = 3 * PER_SENTENCE  # the bad line is the list's last: nothing may be scored or written before it
# (class, edit of the list's last line (or of the whole list), the message after "FILE:LINE: ")
BAD = [
    ("empty line", lambda l: b"\n", "empty line; Moses writes none in an n-best list"),
    ("blank line", lambda l: b"  \t\n", "empty line; Moses writes none in an n-best list"),
    ("too few fields", lambda l: b" ||| ".join(l.split(b" ||| ")[:3]) + b"\n",
     "expected 'id ||| hypothesis ||| features ||| total"),
    ("id not a number", lambda l: replaced(l, 0, b"two"), "sentence id 'two' is not a number"),
    ("id negative", lambda l: replaced(l, 0, b"-2"), "sentence id '-2' is not a number"),
    ("id with a fraction", lambda l: replaced(l, 0, b"2.0"), "sentence id '2.0' is not a number"),
    ("id a non-ASCII digit", lambda l: replaced(l, 0, "²".encode()), "sentence id '²' is not a number"),
    ("id beyond the source (a list of a longer source)", lambda l: replaced(l, 0, b"3"),
     "sentence id 3 but {source} has only 3 sentence(s)"),
    ("ids out of order", whole_list(lambda lines: lines + [lines[PER_SENTENCE]]),
     "sentence id 1 after 2; Moses writes the sentences in order"),
    ("feature value not a number", features_edit(b"LM0= -", b"LM0= x"),
     "bad features field (could not convert string to float: 'x"),
    ("feature value nan", features_edit(b"Distortion0= 0", b"Distortion0= nan"),
     "bad features field (Distortion0= nan is not a finite number)"),
    ("feature value -inf", features_edit(b"Distortion0= 0", b"Distortion0= -inf"),
     "bad features field (Distortion0= -inf is not a finite number)"),
    ("feature value overflowing", features_edit(b"Distortion0= 0", b"Distortion0= -1e999"),
     "bad features field (Distortion0= -1e999 is not a finite number)"),
    ("feature value as Python writes it", features_edit(b"Distortion0= 0", b"Distortion0= 0_0"),
     "bad features field (Distortion0= '0_0' is not a number as Moses writes one)"),
    ("feature name without a value", features_edit(b"Distortion0= 0 ", b"Distortion0= "),
     "bad features field (Distortion0= has no value)"),
    ("value before any name", features_edit(b"LexicalReordering0= ", b"1 LexicalReordering0= "),
     "bad features field (value '1' before any feature name)"),
    ("'=' without a name", features_edit(b"Distortion0= ", b"= "), "bad features field ('=' without a feature name)"),
    ("a feature twice", features_edit(b"Distortion0= 0", b"Distortion0= 0 Distortion0= 0"),
     "bad features field (Distortion0= twice)"),
    ("no features", lambda l: replaced(l, 2, b""), "bad features field (no features; Moses writes 'Name= value ...'"),
    ("a feature missing", features_edit(b"Distortion0= 0 ", b""),
     "features LexicalReordering0_0 LexicalReordering0_1"),
    ("a feature too many", features_edit(b"Distortion0= 0", b"Distortion0= 0 RNN0= -3"),
     "features LexicalReordering0_0 LexicalReordering0_1"),
    ("a sparse feature without its value", features_edit(b"Distortion0= 0", b"Distortion0= 0 tm_pair="),
     "bad features field (tm_pair= has no value)"),
    ("total not a number", lambda l: replaced(l, 3, b"-311.118x"), "total '-311.118x' is not a number"),
    ("total nan", lambda l: replaced(l, 3, b"nan"), "total 'nan' is not a number"),
    ("total empty", lambda l: replaced(l, 3, b""), "total '' is not a number"),
    ("total overflowing", lambda l: replaced(l, 3, b"1e400"), "total 1e400 is not a finite number"),
    ("segmentation span outside the source (a list of another source)",
     lambda l: replaced(l, 4, l.split(b" ||| ")[4].replace(b"20=16 21=17", b"20=16 21-25=17")),
     "segment 21-25=17-17: source span past the source's 22 word(s)"),
    ("segmentation overlapping", lambda l: replaced(l, 4, l.split(b" ||| ")[4].replace(b"21=17", b"20=17")),
     "segment 20-20=17-17: source words 20-20 overlap an earlier segment"),
    ("segmentation leaving a source word out", lambda l: replaced(l, 4, l.split(b" ||| ")[4].replace(b" 21=17", b"")),
     "the segments cover 17 of the hypothesis's 18 word(s)"),
    ("segmentation not one", lambda l: replaced(l, 4, b"0=0 1-3=x"), "segmentation '0=0 1-3=x' is not 'i-j=k-l ...'"),
    ("segmentation empty", lambda l: replaced(l, 4, b""), "the segments cover 0 of the hypothesis's 18 word(s)"),
    ("alignment point outside the hypothesis", lambda l: replaced(l, 5, b"0-0 21-18"),
     "alignment point 21-18 outside the sentence pair (22 source, 18 target word(s))"),
    ("alignment not one", lambda l: replaced(l, 5, b"0-0 1:1"),
     "expected a word alignment 's-t ...' after the segmentation, found '0-0 1:1'"),
    ("something after the alignment", lambda l: l.rstrip(b"\n") + b"||| extra\n",
     "expected a word alignment 's-t ...' after the segmentation, found "),
    ("a trailing ' ||| '", lambda l: l.rstrip(b"\n") + b"||| \n", "expected a word alignment 's-t ...' after the "
                                                                     "segmentation, found "),
    ("fewer fields than the other lines", lambda l: b" ||| ".join(l.split(b" ||| ")[:5]) + b"\n",
     "5 fields, but the first line has 6: Moses writes every line of a list with the same fields"),
]


class Refuses:
    """A scorer that fails the test if a model is asked anything: the list is refused first."""

    def __call__(self, pairs):
        raise AssertionError("scored a list that should have been refused")


def readers(tmp_path, sources):
    """Every n-best reader of the project, each as a call on (list path); a reader that writes
    writes to tmp_path / "out"."""
    source = tmp_path / "dev.en"
    source.write_text("".join(line + "\n" for line in sources), encoding="utf-8")
    out = tmp_path / "out"
    return {
        "rescore-nbest": lambda path: rescore_nbest(path, out, source, rnn0(Refuses())),
        "rescore-nbest phrase": lambda path: rescore_nbest(path, out, source, rnn0(Refuses()), mode="phrase"),
        "sentence features": lambda path: add_sentence_features(path, out, source, [NbestModel("RNNfwd", Refuses())]),
        "rerank": lambda path: read_nbest(path, sources, str(source)),
        "rerank's check of a given list": lambda path: check_nbest(path, sources, str(source)),
        "proxy bench": lambda path: read_nbest_list(path, sources, str(source)),
    }


@pytest.mark.parametrize("edit, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_every_reader_refuses_each_class_in_one_line_naming_file_and_line(tmp_path, real_lines, sources, edit,
                                                                          message):
    path = tmp_path / "list.nbest"
    lines = edit(list(real_lines)) if getattr(edit, "whole_list", False) else real_lines[:-1] + [edit(real_lines[-1])]
    path.write_bytes(b"".join(lines))
    for name, read in readers(tmp_path, sources).items():
        with pytest.raises(NbestFormatError) as info:
            read(path)
        said = str(info.value)
        expected = message.format(source=tmp_path / "dev.en")
        assert said.startswith(f"{path}:{len(lines)}: {expected}"), (name, said)
        assert "\n" not in said, name
        assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == \
            ["dev.en", "list.nbest"], name  # nothing written, not even a temporary


def test_the_real_lists_are_taken_whole():
    summary = check_nbest(DEV_LIST, read_lines(DEV_SRC))
    assert (summary.lines, summary.sentences, summary.segmented) == (113315, 842, True)
    assert len(summary.feature_names) == 14
    unsegmented = check_nbest(FIXTURES / "tuning/run11.best100.out.gz", read_lines(DEV_SRC))
    assert (unsegmented.lines, unsegmented.segmented) == (50679, False)


def test_what_moses_writes_is_taken_and_kept_byte_for_byte(tmp_path, real_lines, sources):
    """CRLF endings, a last line without one, an empty source line's empty hypothesis (Moses:
    `id |||  ||| features ||| total |||  ||| `, no segments, no alignment points), a sparse feature."""
    empty_source = real_lines[0].split(b" ||| ")
    empty_line = b" ||| ".join([b"3", b"", empty_source[2], b"-1.5 |||", b""]) + b"\n"
    lines = [line.replace(b"\n", b"\r\n") for line in real_lines] + [empty_line]
    lines[1] = lines[1].replace(b"Distortion0= 0", b"Distortion0= 0 tm_pair_x= 2")
    lines[-1] = lines[-1].rstrip(b"\n")
    path = tmp_path / "list.nbest"
    path.write_bytes(b"".join(lines))
    source = tmp_path / "dev.en"
    source.write_text("".join(line + "\n" for line in sources) + "\n", encoding="utf-8")  # sentence 3: empty

    scored = rescore_nbest(path, tmp_path / "out", source, rnn0(lambda pairs: np.full(len(pairs), -2.0)))
    assert scored.per_phrase and scored.lines == len(lines) and scored.sentences == 4
    written = (tmp_path / "out").read_bytes().split(b"\n")
    for before, after in zip(b"".join(lines).split(b"\n"), written):
        fields = before.split(b" ||| ")
        value = b"0" if fields[0] == b"3" else b"%d" % (-2 * len(fields[4].split()))
        fields[2] += b" RNN0= " + value
        assert after == b" ||| ".join(fields)
    sentences = read_nbest(path, sources + [""])
    assert [len(hypotheses) for hypotheses in sentences] == [PER_SENTENCE] * 3 + [1] and sentences[3][0].words == ""


def test_a_list_of_some_sentences_is_scored_but_not_reranked(tmp_path, real_lines, sources):
    """rescore-nbest scores each line on its own, so it takes a list of some of the source's
    sentences; a reranker would read the others as empty translations, so it refuses the list."""
    path = tmp_path / "list.nbest"
    path.write_bytes(b"".join(line for line in real_lines if not line.startswith(b"1 ")))
    source = tmp_path / "dev.en"
    source.write_text("".join(line + "\n" for line in sources), encoding="utf-8")
    assert rescore_nbest(path, tmp_path / "out", source, rnn0(lambda pairs: np.zeros(len(pairs)))).sentences == 2
    with pytest.raises(NbestFormatError, match=re.escape(f"{path}: no hypotheses for 1 of the 3 sentences of the "
                                                         f"source (ids 1); Moses writes at least one line")):
        read_nbest(path, sources)


def test_a_hypothesis_that_is_not_utf8_is_refused_where_a_model_reads_only_utf8(tmp_path, real_lines, sources):
    path = tmp_path / "list.nbest"
    path.write_bytes(b"".join(real_lines[:-1]) + real_lines[-1].replace(b"jokschan", b"jok\xe9chan"))
    source = tmp_path / "dev.en"
    source.write_text("".join(line + "\n" for line in sources), encoding="utf-8")
    subwords = TextChecks(utf8_only=True, model="sp.pt")
    with pytest.raises(NbestFormatError, match=re.escape(f"{path}:{LAST}: byte 0xE9 at character 4 is not UTF-8: "
                                                         f"the subword model sp.pt reads UTF-8 text")):
        rescore_nbest(path, tmp_path / "out", source, rnn0(Refuses(), checks=subwords))
    with pytest.raises(NbestFormatError, match=re.escape(f"{path}:{LAST}: byte 0xE9")):
        add_sentence_features(path, tmp_path / "out", source, [NbestModel("RNNfwd", Refuses(), checks=subwords)])
    assert not (tmp_path / "out").exists()
    assert rescore_nbest(path, tmp_path / "out", source, rnn0(lambda pairs: np.zeros(len(pairs)))).lines == LAST


def test_an_empty_list_is_refused(tmp_path, sources):
    path = tmp_path / "list.nbest"
    path.write_bytes(b"")
    source = tmp_path / "dev.en"
    source.write_text("".join(line + "\n" for line in sources), encoding="utf-8")
    with pytest.raises(NbestFormatError, match=re.escape(f"{path}: an empty n-best list; Moses writes at least one "
                                                         f"line per sentence of its input")):
        rescore_nbest(path, tmp_path / "out", source, rnn0(Refuses()))
    assert not (tmp_path / "out").exists()
