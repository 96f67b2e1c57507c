"""Streaming a phrase table through models and writing it back with the new score column(s).

A three-stage pipeline hides the CPU-side work behind the models: a reader thread parses and
encodes the next chunk, the main thread scores the current one (PyTorch releases the GIL inside
its kernels), and a writer thread formats and compresses the previous one.

Several models score in one pass: one column per model, in the order given, then the word
penalty when asked for. The word penalty counts target words outside the FIRST model's
shortlist (`RescoreSummary.shortlists_differ` says when the models' target shortlists differ,
so that the count would depend on the order).
"""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence, Union

import numpy as np

from rescorer.checkpoint import ModelBundle
from rescorer.errors import RescorerError
from rescorer.phrase_encoding import EncodedPhrases, encode_phrases
from rescorer.phrase_table import PhraseTableReader, append_scores
from rescorer.preparation import Progress, no_progress
from rescorer.score_format import MAX_COUNT, format_count_scores, format_log_scores, format_moses_scores
from rescorer.scoring import score_encoded
from rescorer.table_output import AtomicOutput, committed_together

SCORE_FORMATS = ("prob", "log")


@dataclass
class RescoreSummary:
    lines_read: int
    lines_written: int
    lines_rejected: int
    mean_log_probs: list  # one per model, in column order
    src_coverages: list  # shortlist coverage of running words, one per model
    tgt_coverages: list
    seconds: float
    shortlists_differ: bool = False  # the models' target shortlists are not all the same
    unk_capped: int = 0  # lines whose word-penalty count was capped at unk_cap
    unk_cap: int = MAX_COUNT

    @property
    def mean_log_prob(self) -> float:
        return self.mean_log_probs[0]

    @property
    def src_coverage(self) -> float:
        return self.src_coverages[0]

    @property
    def tgt_coverage(self) -> float:
        return self.tgt_coverages[0]

    @property
    def pairs_per_second(self) -> float:
        return self.lines_written / self.seconds if self.seconds > 0 else 0.0

    def report(self, names: Sequence[str], reject_path: Optional[Path], unk_penalty: bool,
               output: Path) -> str:
        """The one-line summary of a run; `names` names the models (a mean log p for each)."""
        rejected = f", {self.lines_rejected} rejected to {reject_path}" if self.lines_rejected else ""
        if self.unk_capped:
            rejected += (f"; {self.unk_capped} lines with more than {self.unk_cap} unknown target "
                         f"words got the word penalty exp({self.unk_cap})")
        if len(names) == 1:
            means = f"{self.mean_log_prob:.3f}"
        else:
            means = ", ".join(f"{name} {mean:.3f}" for name, mean in zip(names, self.mean_log_probs))
        if len(set(zip(self.src_coverages, self.tgt_coverages))) == 1:
            coverage = f"{self.src_coverage:.1%} source, {self.tgt_coverage:.1%} target tokens"
        else:
            coverage = ", ".join(f"{name} {src:.1%} source, {tgt:.1%} target tokens" for name, src, tgt
                                 in zip(names, self.src_coverages, self.tgt_coverages))
        penalty = (f"; the word penalty counts words outside {names[0]}'s target shortlist (the "
                   f"models' shortlists differ)" if unk_penalty and self.shortlists_differ else "")
        return (f"lines in {self.lines_read}, out {self.lines_written}{rejected}; "
                f"mean log p {means}; shortlist coverage {coverage}{penalty}; "
                f"{self.seconds:.1f} s, {self.pairs_per_second:.0f} pairs/s; wrote {output}")


@dataclass
class _Encoding:
    """A chunk's pairs in one pair of shortlists (shared by the models that use them)."""

    src_seqs: EncodedPhrases
    tgt_seqs: EncodedPhrases
    unknown_tgt: np.ndarray  # shortlist-unknown target words per pair (the word penalty)
    unknown_src: int
    unknown_tgt_total: int


@dataclass
class _Chunk:
    entries: list
    encodings: list  # one _Encoding per distinct pair of shortlists
    src_tokens: int
    tgt_tokens: int


def _distinct_vocabularies(bundles: Sequence[ModelBundle]) -> tuple[list, list[int]]:
    """The distinct (src, tgt) shortlist pairs, and each model's index among them."""
    distinct: list = []
    index = []
    for bundle in bundles:
        pair = (bundle.src_vocab, bundle.tgt_vocab)
        if pair not in distinct:
            distinct.append(pair)
        index.append(distinct.index(pair))
    return distinct, index


def _encode_chunks(reader: PhraseTableReader, vocabularies: list, chunk_size: int) -> Iterator[_Chunk]:
    entries: list = []
    for entry in reader:
        entries.append(entry)
        if len(entries) == chunk_size:
            yield _encode_chunk(entries, vocabularies)
            entries = []
    if entries:
        yield _encode_chunk(entries, vocabularies)


def _encode_chunk(entries: list, vocabularies: list) -> _Chunk:
    src_phrases = [entry.src for entry in entries]
    tgt_phrases = [entry.tgt for entry in entries]
    encodings = []
    for src_vocab, tgt_vocab in vocabularies:
        src, tgt = encode_phrases(src_phrases, src_vocab), encode_phrases(tgt_phrases, tgt_vocab)
        encodings.append(_Encoding(src, tgt, tgt.unknown, int(src.unknown.sum()), int(tgt.unknown.sum())))
    return _Chunk(entries, encodings, int(src.offsets[-1]), int(tgt.offsets[-1]))


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


def rescore_table(table_path: Path, output_path: Path,
                  bundles: Union[ModelBundle, Sequence[ModelBundle]], *,
                  unk_penalty: bool = False, score_format: str = "prob", force: bool = False,
                  reject_path: Optional[Path] = None, chunk_size: int = 20000,
                  token_budget: Optional[int] = None, precision: str = "fp32",
                  progress: Progress = no_progress) -> RescoreSummary:
    """Write `table_path` to `output_path` with each model's log p(tgt | src) appended to every
    line's scores, in the order of `bundles` (one bundle or several).

    Nothing appears at `output_path` unless every line was read, scored and written (a FIFO, a
    device or '-' is streamed into). Bad lines go to `reject_path`, which follows the output's
    rules and appears only if a line was rejected; without it the first bad line is an error.
    Word-penalty counts above MAX_COUNT are written as exp(MAX_COUNT), counted in `unk_capped`.
    An interrupt (KeyboardInterrupt) leaves with `.note` saying what reached the output.
    """
    if score_format not in SCORE_FORMATS:
        raise RescorerError(f"unknown score format {score_format!r}; valid: {', '.join(SCORE_FORMATS)}")
    bundles = [bundles] if isinstance(bundles, ModelBundle) else list(bundles)
    if not bundles:
        raise RescorerError("no model to score with")
    vocabularies, vocab_index = _distinct_vocabularies(bundles)
    format_scores = format_moses_scores if score_format == "prob" else format_log_scores
    started = time.perf_counter()
    total_logp = np.zeros(len(bundles))
    src_tokens, tgt_tokens, capped = 0, 0, 0
    unknown_src, unknown_tgt = np.zeros(len(vocabularies), np.int64), np.zeros(len(vocabularies), np.int64)
    output = AtomicOutput(output_path, force=force, input_path=table_path)
    rejects = (AtomicOutput(reject_path, force=force, input_path=table_path, only_if_written=True)
               if reject_path is not None else None)
    try:
        with PhraseTableReader(table_path, reject_path=rejects) as reader, long_lived_objects_frozen(), \
                committed_together(output, rejects), ThreadPoolExecutor(max_workers=1) as writer:
            pending = None
            for chunk in _in_background(_encode_chunks(reader, vocabularies, chunk_size)):
                logps = []
                for bundle, encoding in zip(bundles, (chunk.encodings[i] for i in vocab_index)):
                    logp = score_encoded(bundle.model, encoding.src_seqs, encoding.tgt_seqs,
                                         token_budget, precision)
                    _check_finite(logp, chunk, table_path)
                    logps.append(logp)
                if pending is not None:
                    pending.result()
                penalty = chunk.encodings[vocab_index[0]].unknown_tgt if unk_penalty else None
                pending = writer.submit(_write_chunk, output, chunk, logps, format_scores, penalty)
                total_logp += [float(logp.sum()) for logp in logps]
                src_tokens, tgt_tokens = src_tokens + chunk.src_tokens, tgt_tokens + chunk.tgt_tokens
                unknown_src += [encoding.unknown_src for encoding in chunk.encodings]
                unknown_tgt += [encoding.unknown_tgt_total for encoding in chunk.encodings]
                capped += int((penalty > MAX_COUNT).sum()) if penalty is not None else 0
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
    means = [total / written if written else float("nan") for total in total_logp]
    src_coverage = [1 - unknown_src[i] / src_tokens if src_tokens else 1.0 for i in vocab_index]
    tgt_coverage = [1 - unknown_tgt[i] / tgt_tokens if tgt_tokens else 1.0 for i in vocab_index]
    differ = any(tgt_vocab != vocabularies[0][1] for _, tgt_vocab in vocabularies[1:])
    return RescoreSummary(lines_read, written, lines_rejected, means, src_coverage, tgt_coverage,
                          time.perf_counter() - started, differ, capped)


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


def _check_finite(logp: np.ndarray, chunk: _Chunk, table_path: Path) -> None:
    """A model that gives NaN (weights broken by a diverged training) is refused, line named."""
    bad = np.isnan(logp) | (logp == np.inf)
    if bad.any():
        line_no = chunk.entries[int(np.flatnonzero(bad)[0])].line_no
        raise RescorerError(f"{table_path}:{line_no}: the model scores this pair as "
                            f"{logp[bad][0]}: its weights are broken (a diverged training?)")


def _write_chunk(output: AtomicOutput, chunk: _Chunk, logps: list, format_scores,
                 penalty: Optional[np.ndarray]) -> None:
    columns = [format_scores(logp) for logp in logps]
    if penalty is not None:
        columns.append(format_count_scores(np.minimum(penalty, MAX_COUNT)))
    for entry, new_scores in zip(chunk.entries, zip(*columns)):
        output.write_line(append_scores(entry, new_scores))
