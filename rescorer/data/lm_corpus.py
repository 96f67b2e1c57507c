"""A language model's training text and its n-grams.

The corpus is tokenized text, one sentence a line, plain or compressed, or stdin ('-'): read
once, into memory. Every line is a sentence to train on, so an empty line or one longer than
MAX_SENTENCE_WORDS (a missing line break, a binary file) stops the read with one line naming
the file and the line.

Each sentence of n-1 context words predicts its words and then [EOS]; the context of its first
words is padded with BOS ("<s>", id 3 of the LM's vocabulary). The sentences are laid end to
end in one stream, each after n-1 BOS: the window of the word at stream position p is then
stream[p-n+1 : p], with no per-sentence work when batches are drawn.
"""

from __future__ import annotations

import hashlib
import io
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from rescorer.data.vocabulary import EOS_ID, Vocabulary
from rescorer.errors import CorpusError
from rescorer.io.compression import CompressedStreamError, decompressing_reader
from rescorer.runtime.progress import Progress, no_progress

__all__ = ["MAX_SENTENCE_WORDS", "LmCorpus", "read_lm_corpus", "NgramStream", "ngram_stream"]

MAX_SENTENCE_WORDS = 1000  # Moses' clean-corpus-n keeps 80; Bible verses reach 80, n-best hypotheses less
BOS_ID = 3  # rescorer.models.ngram_lm.BOS_ID (models sits above data)


@dataclass
class LmCorpus:
    """The sentences of a corpus (each a list of words), its word counts and a digest of its
    text (what a resumed run checks it is given again)."""

    name: str
    sentences: list[list[str]]
    counts: Counter
    digest: str

    @property
    def num_words(self) -> int:
        return sum(self.counts.values())


def read_lm_corpus(path: Path, progress: Progress = no_progress) -> LmCorpus:
    """Read a whole corpus; CorpusError (file:line: what) on an empty corpus, an empty line or a
    line longer than MAX_SENTENCE_WORDS words."""
    name = str(path)
    sentences: list[list[str]] = []
    counts: Counter = Counter()
    digest = hashlib.sha256()
    line_no = 0
    try:
        with _opened(path) as file:
            lines = decompressing_reader(file, name) or file
            for line_no, line in enumerate(lines, start=1):
                digest.update(line)
                words = line.decode("utf-8", "surrogateescape").split()
                if not words:
                    raise CorpusError(f"{name}:{line_no}: empty line: a language model's corpus has one "
                                      f"sentence a line (remove the empty lines first)")
                if len(words) > MAX_SENTENCE_WORDS:
                    raise CorpusError(f"{name}:{line_no}: {len(words)} words, more than the "
                                      f"{MAX_SENTENCE_WORDS} a sentence may have (a missing line break?)")
                sentences.append(words)
                counts.update(words)
                if line_no % 10000 == 0:
                    progress(10000)
    except CompressedStreamError as error:
        raise CorpusError(f"{error.name}: {error.kind} stream is {error.reason} after line {line_no}") from None
    except OSError as error:
        raise CorpusError(f"{name}: cannot read the corpus ({error.strerror or error})") from None
    progress(line_no % 10000)
    if not sentences:
        raise CorpusError(f"{name}: the corpus is empty")
    return LmCorpus(name, sentences, counts, digest.hexdigest()[:16])


class _opened:
    """The corpus file opened for binary reading; '-' is stdin (left open)."""

    def __init__(self, path: Path):
        self.path = path
        self.file = None

    def __enter__(self):
        if str(self.path) == "-":  # telling the compression needs peek(), which a BytesIO lacks
            stdin = sys.stdin.buffer
            return stdin if hasattr(stdin, "peek") else io.BufferedReader(stdin)
        self.file = open(self.path, "rb", buffering=1 << 20)
        return self.file

    def __exit__(self, *exc) -> None:
        if self.file is not None:
            self.file.close()


@dataclass
class NgramStream:
    """Encoded sentences laid end to end for n-gram windows (see the module docstring)."""

    stream: np.ndarray  # int64 (tokens,): per sentence n-1 BOS, its word ids, EOS
    targets: np.ndarray  # int64 (ngrams,): stream position of every predicted id, sentence by sentence
    sentence_starts: np.ndarray  # int64 (sentences + 1,): sentence s predicts targets[starts[s]:starts[s+1]]
    order: int

    @property
    def num_sentences(self) -> int:
        return len(self.sentence_starts) - 1

    def targets_of(self, sentences: np.ndarray) -> np.ndarray:
        """The target positions of these sentences (indices), in their order."""
        starts, ends = self.sentence_starts[sentences], self.sentence_starts[sentences + 1]
        if len(sentences) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.targets[s:e] for s, e in zip(starts, ends)])

    def windows(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(contexts (n, order-1), oldest word first; words (n,)) of the targets at `positions`."""
        offsets = np.arange(-(self.order - 1), 0, dtype=np.int64)
        return self.stream[positions[:, None] + offsets], self.stream[positions]


def ngram_stream(sentences: Iterable[Sequence[str]], vocab: Vocabulary, order: int) -> NgramStream:
    """The sentences' n-gram stream under `vocab` (words outside it are [UNK])."""
    if order < 2:
        raise ValueError("an n-gram model needs order >= 2")
    pad = [BOS_ID] * (order - 1)
    stream: list[int] = []
    targets: list[np.ndarray] = []
    starts = [0]
    for words in sentences:
        begin = len(stream) + order - 1
        stream += pad
        stream += vocab.encode(words)
        stream.append(EOS_ID)
        targets.append(np.arange(begin, len(stream), dtype=np.int64))
        starts.append(starts[-1] + len(words) + 1)
    return NgramStream(np.asarray(stream, dtype=np.int64),
                       np.concatenate(targets) if targets else np.zeros(0, dtype=np.int64),
                       np.asarray(starts, dtype=np.int64), order)
