"""Streaming a phrase table through a model and writing it back with the new score column(s).

A three-stage pipeline hides the CPU-side work behind the model: a reader thread parses and
encodes the next chunk, the main thread scores the current one (PyTorch releases the GIL inside
its kernels), and a writer thread formats and compresses the previous one.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

import numpy as np

from rescorer.checkpoint import ModelBundle
from rescorer.errors import RescorerError
from rescorer.phrase_table import PhraseTableReader, append_scores
from rescorer.preparation import Progress, no_progress
from rescorer.score_format import MAX_COUNT, format_count_scores, format_log_scores, format_moses_scores
from rescorer.scoring import score_encoded
from rescorer.table_output import AtomicOutput, committed_together
from rescorer.vocabulary import Vocabulary

SCORE_FORMATS = ("prob", "log")


@dataclass
class RescoreSummary:
    lines_read: int
    lines_written: int
    lines_rejected: int
    mean_log_prob: float
    src_coverage: float
    tgt_coverage: float
    seconds: float
    unk_capped: int = 0  # lines whose word-penalty count was capped at unk_cap
    unk_cap: int = MAX_COUNT

    @property
    def pairs_per_second(self) -> float:
        return self.lines_written / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _Chunk:
    entries: list
    src_seqs: list
    tgt_seqs: list
    unknown_tgt: np.ndarray  # shortlist-unknown target words per pair (the word penalty)
    unknown_src: int
    src_tokens: int
    tgt_tokens: int


def _encode_chunks(reader: PhraseTableReader, bundle: ModelBundle,
                   chunk_size: int) -> Iterator[_Chunk]:
    src_vocab, tgt_vocab = bundle.src_vocab, bundle.tgt_vocab
    entries: list = []
    for entry in reader:
        entries.append(entry)
        if len(entries) == chunk_size:
            yield _encode_chunk(entries, src_vocab, tgt_vocab)
            entries = []
    if entries:
        yield _encode_chunk(entries, src_vocab, tgt_vocab)


def _encode_chunk(entries: list, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> _Chunk:
    src_words = [entry.src.split() for entry in entries]
    tgt_words = [entry.tgt.split() for entry in entries]
    src_seqs = [src_vocab.encode(words) for words in src_words]
    tgt_seqs = [tgt_vocab.encode(words) for words in tgt_words]
    unknown_tgt = np.fromiter((tgt_vocab.count_unknown(w) for w in tgt_words), dtype=np.int64,
                              count=len(entries))
    unknown_src = sum(src_vocab.count_unknown(w) for w in src_words)
    return _Chunk(entries, src_seqs, tgt_seqs, unknown_tgt, unknown_src,
                  sum(map(len, src_seqs)), sum(map(len, tgt_seqs)))


def _in_background(items: Iterable, depth: int = 2) -> Iterator:
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


def rescore_table(table_path: Path, output_path: Path, bundle: ModelBundle, *,
                  unk_penalty: bool = False, score_format: str = "prob", force: bool = False,
                  reject_path: Optional[Path] = None, chunk_size: int = 20000,
                  token_budget: Optional[int] = None, precision: str = "fp32",
                  progress: Progress = no_progress) -> RescoreSummary:
    """Write `table_path` to `output_path` with log p(tgt | src) appended to every line's scores.

    Nothing appears at `output_path` unless every line was read, scored and written (a FIFO, a
    device or '-' is streamed into). Bad lines go to `reject_path`, which follows the output's
    rules and appears only if a line was rejected; without it the first bad line is an error.
    Word-penalty counts above MAX_COUNT are written as exp(MAX_COUNT), counted in `unk_capped`.
    An interrupt (KeyboardInterrupt) leaves with `.note` saying what reached the output.
    """
    if score_format not in SCORE_FORMATS:
        raise RescorerError(f"unknown score format {score_format!r}; valid: {', '.join(SCORE_FORMATS)}")
    format_scores = format_moses_scores if score_format == "prob" else format_log_scores
    started = time.perf_counter()
    total_logp, src_tokens, tgt_tokens, unknown_src, unknown_tgt, capped = 0.0, 0, 0, 0, 0, 0
    output = AtomicOutput(output_path, force=force, input_path=table_path)
    rejects = (AtomicOutput(reject_path, force=force, input_path=table_path, only_if_written=True)
               if reject_path is not None else None)
    try:
        with PhraseTableReader(table_path, reject_path=rejects) as reader, \
                committed_together(output, rejects), ThreadPoolExecutor(max_workers=1) as writer:
            pending = None
            for chunk in _in_background(_encode_chunks(reader, bundle, chunk_size)):
                logp = score_encoded(bundle.model, chunk.src_seqs, chunk.tgt_seqs, token_budget, precision)
                _check_finite(logp, chunk, table_path)
                if pending is not None:
                    pending.result()
                pending = writer.submit(_write_chunk, output, chunk, logp, format_scores, unk_penalty)
                total_logp += float(logp.sum())
                src_tokens, tgt_tokens = src_tokens + chunk.src_tokens, tgt_tokens + chunk.tgt_tokens
                unknown_src += chunk.unknown_src
                unknown_tgt += int(chunk.unknown_tgt.sum())
                capped += int((chunk.unknown_tgt > MAX_COUNT).sum()) if unk_penalty else 0
                progress(len(chunk.entries))
            if pending is not None:
                pending.result()
            lines_read, lines_rejected = reader.lines_read, reader.lines_rejected
            written = output.lines_written
            if written + lines_rejected != lines_read:
                raise RescorerError(f"{table_path}: read {lines_read} lines but wrote {written} and "
                                    f"rejected {lines_rejected}; output discarded")
    except KeyboardInterrupt as interrupt:
        interrupt.note = (f"{output.lines_written} lines had already been written to {output_path}"
                          if output.is_stream else
                          f"no output was written ({output_path} is as it was)")
        raise
    return RescoreSummary(lines_read, written, lines_rejected,
                          total_logp / written if written else float("nan"),
                          1 - unknown_src / src_tokens if src_tokens else 1.0,
                          1 - unknown_tgt / tgt_tokens if tgt_tokens else 1.0,
                          time.perf_counter() - started, capped)


def _check_finite(logp: np.ndarray, chunk: _Chunk, table_path: Path) -> None:
    """A model that gives NaN (weights broken by a diverged training) is refused, line named."""
    bad = np.isnan(logp) | (logp == np.inf)
    if bad.any():
        line_no = chunk.entries[int(np.flatnonzero(bad)[0])].line_no
        raise RescorerError(f"{table_path}:{line_no}: the model scores this pair as "
                            f"{logp[bad][0]}: its weights are broken (a diverged training?)")


def _write_chunk(output: AtomicOutput, chunk: _Chunk, logp: np.ndarray, format_scores,
                 unk_penalty: bool) -> None:
    columns = [format_scores(logp)]
    if unk_penalty:
        columns.append(format_count_scores(np.minimum(chunk.unknown_tgt, MAX_COUNT)))
    for entry, new_scores in zip(chunk.entries, zip(*columns)):
        output.write_line(append_scores(entry, new_scores))
