"""Encoding, scoring and formatting a chunk of phrase-table entries: the steps that the
streaming path (`rescorer.rescoring`) and the unit path (`rescorer.unit_scoring`) share.

A chunk is encoded once per distinct pair of shortlists (models that share shortlists share
the encoding); each model scores it; its lines are written back with one column per model,
then the word penalty. `in_background` runs the reading and encoding a chunk ahead, in a
thread (PyTorch releases the GIL inside its kernels, so it overlaps the scoring).
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

import numpy as np

from rescorer.checkpoint import ModelBundle
from rescorer.errors import RescorerError
from rescorer.phrase_table import PhraseTableReader, append_scores
from rescorer.score_format import MAX_COUNT, format_count_scores

__all__ = ["Encoding", "Chunk", "distinct_vocabularies", "encode_chunks", "encode_chunk",
           "in_background", "check_finite", "chunk_lines"]


@dataclass
class Encoding:
    """A chunk's pairs in one pair of shortlists (shared by the models that use them)."""

    src_seqs: list
    tgt_seqs: list
    unknown_tgt: np.ndarray  # shortlist-unknown target words per pair (the word penalty)
    unknown_src: int
    unknown_tgt_total: int


@dataclass
class Chunk:
    entries: list
    encodings: list  # one Encoding per distinct pair of shortlists
    src_tokens: int
    tgt_tokens: int


def distinct_vocabularies(bundles: Sequence[ModelBundle]) -> tuple[list, list[int]]:
    """The distinct (src, tgt) shortlist pairs, and each model's index among them."""
    distinct: list = []
    index = []
    for bundle in bundles:
        pair = (bundle.src_vocab, bundle.tgt_vocab)
        if pair not in distinct:
            distinct.append(pair)
        index.append(distinct.index(pair))
    return distinct, index


def encode_chunks(reader: PhraseTableReader, vocabularies: list, chunk_size: int) -> Iterator[Chunk]:
    entries: list = []
    for entry in reader:
        entries.append(entry)
        if len(entries) == chunk_size:
            yield encode_chunk(entries, vocabularies)
            entries = []
    if entries:
        yield encode_chunk(entries, vocabularies)


def encode_chunk(entries: list, vocabularies: list) -> Chunk:
    src_words = [entry.src.split() for entry in entries]
    tgt_words = [entry.tgt.split() for entry in entries]
    encodings = []
    for src_vocab, tgt_vocab in vocabularies:
        unknown_tgt = np.fromiter((tgt_vocab.count_unknown(w) for w in tgt_words), dtype=np.int64,
                                  count=len(entries))
        encodings.append(Encoding([src_vocab.encode(words) for words in src_words],
                                   [tgt_vocab.encode(words) for words in tgt_words], unknown_tgt,
                                   sum(src_vocab.count_unknown(w) for w in src_words),
                                   int(unknown_tgt.sum())))
    return Chunk(entries, encodings, sum(map(len, src_words)), sum(map(len, tgt_words)))


def in_background(items: Iterable, depth: int = 2) -> Iterator:
    """Iterate `items` in a worker thread, `depth` ahead; its exceptions surface here."""
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def work() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        buffer.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            buffer.put(("done", done))
        except BaseException as error:  # handed to the consumer, which re-raises it
            buffer.put(("error", error))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while True:
            kind, value = buffer.get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        worker.join(timeout=5)


def check_finite(logp: np.ndarray, chunk: Chunk, table_path: Path) -> None:
    """A model that gives NaN (weights broken by a diverged training) is refused, line named."""
    bad = np.isnan(logp) | (logp == np.inf)
    if bad.any():
        line_no = chunk.entries[int(np.flatnonzero(bad)[0])].line_no
        raise RescorerError(f"{table_path}:{line_no}: the model scores this pair as "
                            f"{logp[bad][0]}: its weights are broken (a diverged training?)")


def chunk_lines(entries: Sequence, logps: list, format_scores,
                penalty: Optional[np.ndarray]) -> Iterator[bytes]:
    """The entries' lines with the models' columns (then the word penalty) appended."""
    columns = [format_scores(logp) for logp in logps]
    if penalty is not None:
        columns.append(format_count_scores(np.minimum(penalty, MAX_COUNT)))
    for entry, new_scores in zip(entries, zip(*columns)):
        yield append_scores(entry, new_scores)
