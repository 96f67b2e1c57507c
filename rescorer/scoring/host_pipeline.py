"""The host's side of scoring a table in units: reading, parsing and encoding chunks ahead of the
model, and writing them back behind it, in one of two ways with the same bytes.

- `ThreadPipeline` (`--host-workers 0`): one thread reads, parses and encodes a chunk ahead and
  the writer thread formats the lines; their Python work takes the GIL from the model's thread,
  so one process tops out near 80k pairs/s however fast the model (an H200 waited on it).
- `ProcessPipeline` (`--host-workers N`): this process only reads the table's bytes (the
  decompression releases the GIL) and compresses the output; N worker processes parse, encode
  and pad the batches (rescorer.scoring.chunk_preparation) and make the written lines, a few
  chunks ahead of the model, so the model's thread keeps the GIL nearly to itself.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

from rescorer.errors import RescorerError
from rescorer.io.table_units import TableUnits, UnitChunk
from rescorer.scoring.chunk_encoding import Chunk, encode_chunk
from rescorer.scoring.chunk_preparation import PreparationSettings, prepare_chunk, scored_lines, start_worker
from rescorer.scoring.chunks import ScoringModels, chunk_lines, in_background
from rescorer.scoring.settings import ScoreSettings

__all__ = ["default_host_workers", "host_pipeline", "ThreadPipeline", "ProcessPipeline"]

# What writes a chunk's lines into its unit's output (AtomicOutput), in the writer thread.
LinesWriter = Callable[[object], None]


def default_host_workers(device_type: str) -> int:
    """Host workers when none are asked for: on CUDA, this rank's share of the host's cores less
    two (the model's thread and the reader's and writer's threads); on a CPU, where the model
    itself needs every core, none."""
    if device_type != "cuda":
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ranks_here = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    return max(1, cores // ranks_here - 2)


@contextlib.contextmanager
def host_pipeline(units: TableUnits, models: ScoringModels, settings: ScoreSettings,
                  table_path: Path) -> Iterator["ThreadPipeline | ProcessPipeline"]:
    """The pipeline `settings.host_workers` asks for (resolved: not None), open for one pass."""
    if settings.host_workers:
        pipeline = ProcessPipeline(units, models, settings, table_path)
    else:
        pipeline = ThreadPipeline(units, models, settings)
    with pipeline:
        yield pipeline


class ThreadPipeline:
    """Parse and encode in a thread of this process, one chunk ahead; format in the writer thread."""

    def __init__(self, units: TableUnits, models: ScoringModels, settings: ScoreSettings):
        self._chunks = in_background((chunk, encode_chunk(chunk.entries, models.vocabularies))
                                     for chunk in units.chunks(settings.chunk_size))
        self._format_scores = settings.format_scores()

    def chunks(self) -> Iterator[tuple[UnitChunk, Chunk]]:
        """Each chunk of this rank's units, with its encoded pairs."""
        return self._chunks

    def lines(self, unit_chunk: UnitChunk, chunk: Chunk, columns: list,
              penalty: Optional[np.ndarray]) -> LinesWriter:
        lines = chunk_lines(chunk.entries, columns, self._format_scores, penalty)
        return lambda output: output.write_lines(lines)

    def __enter__(self) -> "ThreadPipeline":
        return self

    def __exit__(self, *exc_info) -> None:
        self._chunks.close()


class ProcessPipeline:
    """Parse, encode, pad and format in `settings.host_workers` worker processes.

    Workers are spawned, never forked (safe beside CUDA and this process's threads), and import
    no torch. Chunks are handed out a few per worker ahead of the model; their results are taken
    in table order, so an error in a worker (a bad line, without --reject) is raised here as the
    one-process path raises it, after the chunks before it.
    """

    def __init__(self, units: TableUnits, models: ScoringModels, settings: ScoreSettings, table_path: Path):
        self._format_scores = settings.format_scores()
        workers = settings.host_workers
        self._executor = _spawned_workers(workers, PreparationSettings(
            str(table_path), models.vocabularies, settings.token_budget, units.keep_rejects))
        handed_out = ((chunk, self._executor.submit(prepare_chunk, chunk.raw, chunk.unit))
                      for chunk in units.chunks(settings.chunk_size, raw=True))
        self._ready = in_background(handed_out, depth=2 * workers)  # chunks handed out ahead of the model

    def chunks(self) -> Iterator[tuple[UnitChunk, Chunk]]:
        """Each chunk of this rank's units, with its encoded pairs and padded batches."""
        with _worker_failures():
            for unit_chunk, future in self._ready:
                prepared = future.result()
                unit_chunk.rejected = prepared.rejected
                yield unit_chunk, prepared.chunk

    def lines(self, unit_chunk: UnitChunk, chunk: Chunk, columns: list,
              penalty: Optional[np.ndarray]) -> LinesWriter:
        with _worker_failures():
            future = self._executor.submit(scored_lines, unit_chunk.raw, chunk.line_spans, columns,
                                           self._format_scores, penalty)
        def write(output) -> None:
            with _worker_failures():
                output.write_joined_lines(future.result(), chunk.num_pairs)

        return write

    def __enter__(self) -> "ProcessPipeline":
        return self

    def __exit__(self, *exc_info) -> None:
        self._ready.close()  # the reader thread stops handing out chunks first
        self._executor.shutdown(wait=True, cancel_futures=True)


def _spawned_workers(count: int, settings: PreparationSettings) -> ProcessPoolExecutor:
    """`count` worker processes, spawned now, each started with `settings`."""
    executor = ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=start_worker, initargs=(settings,))
    with _main_script_hidden():
        for _ in range(count):
            executor.submit(int)  # each submit finds no idle worker and spawns one
    return executor


@contextlib.contextmanager
def _main_script_hidden() -> Iterator[None]:
    """While workers are spawned: multiprocessing has a spawned process import the main script
    (by its __file__, or its module by __spec__), in case a task names something of it; the
    `rescore` script imports torch, ~2 s and ~300 MB a worker, and our tasks need none of it."""
    main = sys.modules["__main__"]
    hidden = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(hidden)


@contextlib.contextmanager
def _worker_failures() -> Iterator[None]:
    """A worker's error is raised as it is (a bad line's names it); a worker that died is one
    line, not a traceback."""
    try:
        yield
    except BrokenProcessPool:
        raise RescorerError("a host worker process ended unexpectedly (killed, or out of memory?); "
                            "rerun with fewer --host-workers, or 0 to read and write in this process") from None
