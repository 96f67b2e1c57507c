"""A parallel corpus is read pair by pair; an empty side is named by file and line (or goes to
the reject file), and sides of different lengths are always an error."""

import gzip

import pytest

from rescorer.errors import RescorerError
from rescorer.io.parallel_corpus import ParallelCorpusReader


class Rejects:
    def __init__(self):
        self.lines = []

    def write_line(self, line: bytes) -> None:
        self.lines.append(line)


def corpus(tmp_path, source: str, target: str, gzipped: bool = False):
    src, tgt = tmp_path / "c.en", tmp_path / "c.fr"
    for path, text in ((src, source), (tgt, target)):
        data = text.encode()
        path.write_bytes(gzip.compress(data) if gzipped else data)
    return src, tgt


@pytest.mark.parametrize("gzipped", [False, True])
def test_pairs_in_order_with_line_numbers(tmp_path, gzipped):
    src, tgt = corpus(tmp_path, "in the beginning\n  god  created \n", "au commencement\ndieu créa\n", gzipped)
    assert list(ParallelCorpusReader(src, tgt)) == [(1, "in the beginning", "au commencement"),
                                                    (2, "god  created", "dieu créa")]


@pytest.mark.parametrize("source, target, message", [
    ("a\n\nc\n", "x\ny\nz\n", "c.en:2: empty source sentence (its target line is 'y')"),
    ("a\nb\nc\n", "x\n \t\nz\n", "c.fr:2: empty target sentence (its source line is 'b')"),
])
def test_an_empty_side_is_named(tmp_path, source, target, message):
    src, tgt = corpus(tmp_path, source, target)
    with pytest.raises(RescorerError) as error:
        list(ParallelCorpusReader(src, tgt))
    assert str(error.value) == message.replace("c.en", str(src)).replace("c.fr", str(tgt))


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2003 \u00a0", "\u200a"])
def test_a_side_of_only_unicode_whitespace_is_empty(tmp_path, space):
    """Issue 32 case 23: a line holding only a no-break space passed the check (bytes.strip() knows
    ASCII whitespace only) and was trained as an empty sentence, since words are split by
    str.split(), which splits on Unicode whitespace too."""
    src, tgt = corpus(tmp_path, f"a\n{space}\nc\n", "x\ny\nz\n")
    with pytest.raises(RescorerError) as error:
        list(ParallelCorpusReader(src, tgt))
    assert str(error.value) == (f"{src}:2: empty source sentence (only whitespace: {space!a}) (its target "
                                f"line is 'y')")
    rejects = Rejects()
    assert list(ParallelCorpusReader(tgt, src, rejects)) == [(1, "x", "a"), (3, "z", "c")]
    assert rejects.lines == [b"2\ty\t" + space.encode()]


def test_unicode_whitespace_between_words_is_kept(tmp_path):
    src, tgt = corpus(tmp_path, "a\u00a0b\n", "x\n")
    assert list(ParallelCorpusReader(src, tgt)) == [(1, "a\u00a0b", "x")]


def test_rejects_keep_the_line_number_and_both_sides(tmp_path):
    src, tgt = corpus(tmp_path, "a\n\nc\nd\n", "x\ny\n\nw\n")
    rejects = Rejects()
    reader = ParallelCorpusReader(src, tgt, rejects)
    assert list(reader) == [(1, "a", "x"), (4, "d", "w")]
    assert rejects.lines == [b"2\t\ty", b"3\tc\t"]
    assert (reader.lines_read, reader.lines_rejected) == (4, 2)


@pytest.mark.parametrize("source, target, where, said", [
    ("a\nb\nc\n", "x\ny\n", "c.fr:3", "the target side ends after 2 lines"),
    ("a\nb\n", "x\ny\nz\n", "c.en:3", "the source side ends after 2 lines"),
])
def test_sides_of_different_lengths_are_an_error_even_with_rejects(tmp_path, source, target, where, said):
    src, tgt = corpus(tmp_path, source, target)
    with pytest.raises(RescorerError) as error:
        list(ParallelCorpusReader(src, tgt, Rejects()))
    name = where.split(":")[0]
    assert str(error.value).startswith(where.replace(name, str(src if name == "c.en" else tgt)) + ": " + said)


def test_empty_and_all_bad_corpora(tmp_path):
    src, tgt = corpus(tmp_path, "", "")
    with pytest.raises(RescorerError, match="the parallel corpus is empty"):
        list(ParallelCorpusReader(src, tgt))
    src, tgt = corpus(tmp_path, "\n\n", "x\ny\n")
    with pytest.raises(RescorerError, match="no good sentence pair: all 2 lines have an empty side"):
        list(ParallelCorpusReader(src, tgt, Rejects()))


def test_a_missing_side(tmp_path):
    src, _ = corpus(tmp_path, "a\n", "x\n")
    with pytest.raises(RescorerError, match="cannot open the target side of the parallel corpus"):
        list(ParallelCorpusReader(src, tmp_path / "absent.fr"))
