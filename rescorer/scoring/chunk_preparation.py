"""What a host worker process does to a table's chunks, beside the process that runs the model:
parse a chunk's raw lines, encode its pairs and pad its batches (`prepare_chunk`); once scored,
write its lines back with their new scores (`scored_lines`).

These are the steps that held the GIL of the model's process (parsing and encoding took ~12 us a
pair, formatting ~1 us): in workers they run beside the model and beside each other. Each step
calls the functions the one-process path calls, so the bytes are the same. No torch here (the
torch-free contract in setup.cfg): a worker starts in a fraction of a second.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from rescorer.data.batching import padded_batches
from rescorer.io.score_format import new_score_tokens
from rescorer.io.table_reader import insert_scores
from rescorer.io.table_units import RawLines, parse_raw_lines
from rescorer.runtime.failure_reports import injected_fault
from rescorer.scoring.chunk_encoding import Chunk, encode_chunk

__all__ = ["PreparationSettings", "PreparedChunk", "start_worker", "prepare_chunk", "scored_lines"]


@dataclass(frozen=True)
class PreparationSettings:
    """What every chunk of a run needs, sent to each worker once."""

    table_name: str  # as errors name it
    vocabularies: list  # the distinct (src, tgt, direction) shortlists (ScoringModels.vocabularies)
    token_budget: int
    keep_rejects: bool  # bad lines are kept for the reject file, else the first is an error


@dataclass
class PreparedChunk:
    """A chunk ready for the model: its pairs encoded and padded into batches (`chunk`, whose
    entries stay in the worker: its `line_spans` say where their lines are), and its rejected lines."""

    chunk: Chunk
    rejected: list


_settings: Optional[PreparationSettings] = None  # this worker's, from `start_worker`


def start_worker(settings: PreparationSettings) -> None:
    """A worker's initializer: keep the run's settings; leave Ctrl-C to the main process (it
    reaches the whole process group; the main process stops the workers); and end with the main
    process, should it be killed (a worker waiting for work would otherwise wait on).

    SIGTERM keeps its default and ends the worker: when one worker dies the pool terminates the
    others with it, and one that ignored it could wait forever to hand back a result no one reads
    (the run then hung). A scheduler's SIGTERM to the whole group (torchrun, Slurm) still ends
    the run as an interrupt: the main process takes its own SIGTERM first."""
    global _settings
    _settings = settings
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()


def _exit_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def prepare_chunk(raw: RawLines, unit: int) -> PreparedChunk:
    """Parse, encode and batch one chunk's lines, of `unit` (a bad line raises
    PhraseTableFormatError naming it, unless the run keeps rejects)."""
    injected_fault("host-worker", unit)
    settings = _settings
    entries, rejected = parse_raw_lines(raw, settings.table_name, settings.keep_rejects)
    chunk = encode_chunk(entries, settings.vocabularies)
    for encoding in chunk.encodings:
        encoding.batches = padded_batches(encoding.src_seqs, encoding.tgt_seqs, settings.token_budget)
    scores_ends = np.fromiter((entry.scores_end for entry in entries), dtype=np.int64, count=len(entries))
    chunk.entries, chunk.line_spans = None, (chunk.line_numbers - raw.first_line, scores_ends)
    return PreparedChunk(chunk, rejected)


def scored_lines(raw: RawLines, line_spans: tuple[np.ndarray, np.ndarray], columns: list,
                 format_scores: Callable, penalty: Optional[np.ndarray]) -> bytes:
    """The chunk's good lines (at `line_spans`, Chunk's, among the raw lines) with the new columns
    (then the word penalty) inserted, joined, each ending with its newline: `chunk_lines`' bytes."""
    lines = raw.data.split(b"\n")
    line_indices, scores_ends = line_spans
    tokens = new_score_tokens(columns, format_scores, penalty)
    written = [insert_scores(lines[index], end, new) for index, end, new in
               zip(line_indices.tolist(), scores_ends.tolist(), tokens)]
    return b"\n".join(written) + b"\n" if written else b""
