"""Sentence pairs of a parallel corpus, as Moses' own training reads it: two tokenized files,
line i of one the translation of line i of the other; plain or compressed (told by magic bytes).

A line with an empty side cannot be trained on: it stops the read with one line naming the
file and line number, or, with a reject sink, goes there as `LINE<TAB>source<TAB>target` and
reading goes on. Sides of different lengths are always an error: no pairing of the rest of the
lines can be trusted then. With `utf8_only` (subword models, which segment UTF-8 text), a line
holding bytes that are not UTF-8 is a bad line too.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import BinaryIO, Iterator

from rescorer.counts import counted
from rescorer.errors import CorpusError, RescorerError
from rescorer.io.compression import CompressedStreamError, decompressing_reader
from rescorer.io.utf8_bytes import first_non_utf8

__all__ = ["ParallelCorpusReader"]

SIDES = ("source", "target")


class ParallelCorpusReader:
    """Iterate (line_no, source, target) over two files, once; `reject` as PhraseTableReader's
    (None: the first bad line is an error). Counters are readable during and after iteration."""

    def __init__(self, src_path: Path, tgt_path: Path, reject=None, utf8_only: bool = False):
        self.paths = (Path(src_path), Path(tgt_path))
        self.reject = reject
        self.utf8_only = utf8_only
        self.lines_read = 0
        self.lines_rejected = 0

    def __iter__(self) -> Iterator[tuple[int, str, str]]:
        with contextlib.ExitStack() as stack:
            src, tgt = (stack.enter_context(_open_side(path, side)) for path, side in zip(self.paths, SIDES))
            yield from self._pairs(src, tgt)

    def _pairs(self, src: BinaryIO, tgt: BinaryIO) -> Iterator[tuple[int, str, str]]:
        src_name, tgt_name = map(str, self.paths)
        good = 0
        with self._read_errors():
            for line_no, (src_line, tgt_line) in enumerate(_zip_sides(src, tgt, *self.paths), start=1):
                self.lines_read = line_no
                src_words, tgt_words = src_line.strip(), tgt_line.strip()
                src_text, tgt_text = (words.decode("utf-8", "surrogateescape") for words in (src_words, tgt_words))
                problem = None
                # no words as training splits them: str.split() also splits on Unicode
                # whitespace (a line of one no-break space is an empty sentence)
                if not src_text.split():
                    problem = f"{src_name}:{line_no}: empty source sentence{_only_spaces(src_words)} (its " \
                              f"target line is {_shown(tgt_words)})"
                elif not tgt_text.split():
                    problem = f"{tgt_name}:{line_no}: empty target sentence{_only_spaces(tgt_words)} (its " \
                              f"source line is {_shown(src_words)})"
                elif self.utf8_only:
                    problem = _not_utf8(src_name, line_no, src_words, "source") or \
                        _not_utf8(tgt_name, line_no, tgt_words, "target")
                if problem is not None:
                    if self.reject is None:
                        raise CorpusError(problem)
                    self.reject.write_line(b"%d\t%s\t%s" % (line_no, src_words, tgt_words))
                    self.lines_rejected += 1
                    continue
                good += 1
                yield line_no, src_text, tgt_text
        if self.lines_read == 0:
            raise CorpusError(f"{src_name}: the parallel corpus is empty")
        if good == 0:
            raise CorpusError(f"{src_name}, {tgt_name}: no good sentence pair: all {self.lines_read} "
                              f"lines have an empty side")

    @contextlib.contextmanager
    def _read_errors(self) -> Iterator[None]:
        try:
            yield
        except CompressedStreamError as exc:
            raise CorpusError(f"{exc.name}: {exc.kind} stream is {exc.reason} after line "
                              f"{self.lines_read}") from None


def _not_utf8(name: str, line_no: int, words: bytes, side: str):
    """Why a sentence cannot be segmented into subwords (its first byte that is not UTF-8), or None."""
    where = first_non_utf8(words)
    if where is None:
        return None
    return f"{name}:{line_no}: the {side} sentence is not UTF-8 ({where}): subword models segment UTF-8 text"


def _only_spaces(words: bytes) -> str:
    """What an empty sentence holds when it is not nothing: Unicode whitespace, shown escaped."""
    return f" (only whitespace: {words.decode('utf-8', 'backslashreplace')!a})" if words else ""


def _shown(words: bytes, limit: int = 40) -> str:
    text = words.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _zip_sides(src: BinaryIO, tgt: BinaryIO, src_path: Path, tgt_path: Path) -> Iterator[tuple[bytes, bytes]]:
    """The two files' lines side by side; a side that ends first is an error naming where."""
    line_no = 0
    for line_no, src_line in enumerate(src, start=1):
        tgt_line = tgt.readline()
        if not tgt_line:
            raise CorpusError(f"{tgt_path}:{line_no}: the target side ends after {counted(line_no - 1, 'line')}, "
                              f"but {src_path} goes on: a parallel corpus has one line per sentence "
                              f"on each side")
        yield src_line, tgt_line
    if tgt.readline():
        raise CorpusError(f"{src_path}:{line_no + 1}: the source side ends after {counted(line_no, 'line')}, but "
                          f"{tgt_path} goes on: a parallel corpus has one line per sentence on each side")


@contextlib.contextmanager
def _open_side(path: Path, side: str) -> Iterator[BinaryIO]:
    try:
        file = open(path, "rb", buffering=1 << 20)
    except OSError as exc:
        raise RescorerError(f"{path}: cannot open the {side} side of the parallel corpus "
                            f"({exc.strerror})") from None
    with file:
        decompressed = decompressing_reader(file, str(path))
        try:
            yield decompressed or file
        finally:
            if decompressed is not None:
                decompressed.close()
