"""Scoring and formatting a chunk of phrase-table entries: the steps that the streaming path
(`rescorer.scoring.table_rescoring`) and the unit path (`rescorer.scoring.units`) share.

A chunk is encoded once per distinct pair of shortlists (rescorer.scoring.chunk_encoding); each
model scores it; its lines are written back with one column per model, then the word penalty.
`in_background` runs the reading and encoding a chunk ahead, in a thread (PyTorch releases the
GIL inside its kernels, so it overlaps the scoring).
"""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

import numpy as np

from rescorer.errors import RescorerError
from rescorer.io.score_format import MAX_COUNT, new_score_tokens
from rescorer.io.table_reader import append_scores
from rescorer.models.model_files import ModelBundle
from rescorer.scoring.batch_scoring import score_batches, score_encoded
from rescorer.scoring.chunk_encoding import Chunk

__all__ = ["ScoringModels", "distinct_vocabularies", "in_background", "check_finite", "chunk_lines",
           "long_lived_objects_frozen", "score_chunk", "output_columns", "word_penalty", "ScoreTotals"]


@dataclass(frozen=True)
class ScoringModels:
    """The models that score a table, and what every chunk needs of them, made once: their
    distinct (src, tgt, direction) shortlists (a chunk is encoded once per shortlist, not per
    model), each model's index among those, and the names the summary and journal give them."""

    bundles: tuple
    vocabularies: list
    vocab_index: list
    names: tuple

    @classmethod
    def of(cls, bundles: Sequence[ModelBundle], names: Optional[Sequence[str]] = None) -> "ScoringModels":
        vocabularies, vocab_index = distinct_vocabularies(bundles)
        names = names or [f"model {index}" for index in range(1, len(bundles) + 1)]
        return cls(tuple(bundles), vocabularies, vocab_index, tuple(names))


def distinct_vocabularies(bundles: Sequence[ModelBundle]) -> tuple[list, list[int]]:
    """The distinct (src, tgt, direction) shortlists (SideEncodings: with their subword models),
    and each model's index among them."""
    distinct: list = []
    index = []
    for bundle in bundles:
        pair = (bundle.src_encoding, bundle.tgt_encoding, bundle.direction)
        if pair not in distinct:
            distinct.append(pair)
        index.append(distinct.index(pair))
    return distinct, index


@contextlib.contextmanager
def long_lived_objects_frozen() -> Iterator[None]:
    """Keep the objects alive before the pass (torch, the models: ~400k) out of the garbage
    collector's full collections while the reader makes millions of short-lived ones; those
    collections took a third of the reader thread's time, holding the GIL (gc.freeze)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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


def score_chunk(chunk: Chunk, bundles: Sequence[ModelBundle], vocab_index: list, token_budget: Optional[int],
                precision: str, table_path: Path) -> list[np.ndarray]:
    """Each model's log p of the chunk's pairs, through its shortlists' encoding (in the batches a
    host worker padded, when it did); NaN refused."""
    logps = []
    for bundle, index in zip(bundles, vocab_index):
        encoding = chunk.encodings[index]
        if encoding.batches is not None:
            logp = score_batches(bundle.model, encoding.batches, chunk.num_pairs, precision)
        else:
            logp = score_encoded(bundle.model, encoding.src_seqs, encoding.tgt_seqs, token_budget, precision)
        check_finite(logp, chunk, table_path)
        logps.append(logp)
    return logps


def output_columns(chunk: Chunk, logps: list, vocab_index: list, ensemble: bool,
                   per_word: bool) -> list[np.ndarray]:
    """The log p columns a line gets: one per model, or with `ensemble` one for all, their
    mixture log((p_1 + ... + p_n) / n) (a distribution over targets, as each model's is); then
    with `per_word` each column again divided by the word count of its model's target side, its
    words, not a subword model's pieces (log p includes [EOS]'s term; the paper notes the RNN
    prefers short phrases). Each column is floored on its own when written (Moses' -100, in both
    score formats): a per-word column divides the unfloored log p, so that a long phrase's
    per-word figure stays its own instead of -100 / words."""
    if ensemble:
        columns = [np.logaddexp.reduce(np.stack(logps), axis=0) - np.log(len(logps))]
        vocab_index = vocab_index[:1]  # the models of an ensemble read the pair the same way
    else:
        columns = list(logps)
    if per_word:
        columns += [column / chunk.encodings[index].tgt_words for column, index in zip(columns, vocab_index)]
    return columns


def word_penalty(chunk: Chunk, vocab_index: list, unk_penalty: bool) -> Optional[np.ndarray]:
    """Shortlist-unknown target words per pair, by the first model's shortlist (or None)."""
    return chunk.encodings[vocab_index[0]].unknown_tgt if unk_penalty else None


@dataclass
class ScoreTotals:
    """The summary's terms for some lines: a whole streamed run, or one unit (its record)."""

    lines_read: int = 0
    lines_written: int = 0
    lines_rejected: int = 0
    logp_sums: list = field(default_factory=list)  # one per model
    src_tokens: int = 0
    tgt_tokens: int = 0
    unknown_src: list = field(default_factory=list)  # one per distinct pair of shortlists
    unknown_tgt: list = field(default_factory=list)
    capped: int = 0

    def add(self, chunk: Chunk, logps: list, penalty: Optional[np.ndarray]) -> None:
        """Count a scored chunk's written lines (lines read and rejected are the caller's)."""
        if not self.logp_sums:
            self.logp_sums = [0.0] * len(logps)
            self.unknown_src = [0] * len(chunk.encodings)
            self.unknown_tgt = [0] * len(chunk.encodings)
        self.lines_written += chunk.num_pairs
        self.logp_sums = [total + float(logp.sum()) for total, logp in zip(self.logp_sums, logps)]
        self.src_tokens += chunk.src_tokens
        self.tgt_tokens += chunk.tgt_tokens
        self.unknown_src = [a + e.unknown_src for a, e in zip(self.unknown_src, chunk.encodings)]
        self.unknown_tgt = [a + e.unknown_tgt_total for a, e in zip(self.unknown_tgt, chunk.encodings)]
        self.capped += int((penalty > MAX_COUNT).sum()) if penalty is not None else 0


def check_finite(logp: np.ndarray, chunk: Chunk, table_path: Path) -> None:
    """A model that gives NaN (weights broken by a diverged training) is refused, line named."""
    bad = np.isnan(logp) | (logp == np.inf)
    if bad.any():
        line_no = int(chunk.line_numbers[int(np.flatnonzero(bad)[0])])
        raise RescorerError(f"{table_path}:{line_no}: the model scores this pair as "
                            f"{logp[bad][0]}: its weights are broken (a diverged training?)")


def chunk_lines(entries: Sequence, logps: list, format_scores,
                penalty: Optional[np.ndarray]) -> Iterator[bytes]:
    """The entries' lines with the log p columns (then the word penalty) appended."""
    for entry, new_scores in zip(entries, new_score_tokens(logps, format_scores, penalty)):
        yield append_scores(entry, new_scores)
