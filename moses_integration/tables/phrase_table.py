"""Phrase-table file operations Moses integration needs: count the scores, keep a subset of
score columns (to build the ablation systems' tables), re-binarize a compact table, and
sample scores for the figure. Lines are read with `rescorer.io.table_reader.PhraseTableReader`
(which validates them) and handled as bytes, so that every other field is kept."""

from __future__ import annotations

import math
import random
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import Mapping, Sequence

from rescorer.counts import counted
from rescorer.errors import PhraseTableFormatError
from rescorer.io.atomic_output import AtomicOutput
from rescorer.io.table_reader import PhraseEntry, PhraseTableReader

from .. import child_process
from ..errors import MosesNotFoundError, MosesRunError
from ..ini.moses_install import COMPACT_BINARY, MosesInstall

__all__ = ["scores_span", "read_num_scores", "select_score_columns", "split_score_columns",
           "binarize_compact", "sample_scores"]


def scores_span(entry: PhraseEntry) -> tuple[int, int]:
    """Offsets in entry.raw of the score tokens, first to last (the spacing around them excluded)."""
    raw = entry.raw
    field_start = raw.find(b"|||", raw.find(b"|||") + 3) + 3  # the reader has checked both exist
    return entry.scores_end - len(raw[field_start:entry.scores_end].lstrip()), entry.scores_end


def read_num_scores(path: Path) -> int:
    """Number of scores on the first line (Moses trusts num-features= and misreads otherwise)."""
    with PhraseTableReader(path) as reader:
        return next(iter(reader)).num_scores


def select_score_columns(src_path: Path, out_path: Path, keep: Sequence[int],
                         force: bool = False) -> int:
    """Write `src_path` keeping only the score columns `keep` (0-based, in that order).

    Returns the number of lines. Every other byte of each line is copied unchanged. The output
    appears only once complete; an existing one is replaced only with `force`."""
    return split_score_columns(src_path, {out_path: keep}, force)


def split_score_columns(src_path: Path, outputs: Mapping[Path, Sequence[int]],
                        force: bool = False) -> int:
    """select_score_columns for several outputs in one pass over `src_path` (one per system)."""
    with ExitStack() as stack:
        reader = stack.enter_context(PhraseTableReader(src_path))
        writers = []
        for out_path, keep in outputs.items():
            out_path.parent.mkdir(parents=True, exist_ok=True)
            writers.append((stack.enter_context(
                AtomicOutput(out_path, force=force, input_path=src_path)), list(keep)))
        needed = max((max(keep) for _, keep in writers if keep), default=-1) + 1
        lines = 0
        for entry in reader:
            start, end = scores_span(entry)
            scores = entry.raw[start:end].split()
            if len(scores) < needed:
                raise PhraseTableFormatError(
                    f"{src_path}:{entry.line_no}: expected at least {counted(needed, 'score')}, "
                    f"found {len(scores)}")
            head, tail = entry.raw[:start], entry.raw[end:]
            for out, keep in writers:
                out.write_line(b"".join((head, b" ".join(scores[i] for i in keep), tail)))
            lines += 1
    return lines


def binarize_compact(moses: MosesInstall, text_table: Path, out_prefix: Path,
                     num_scores: int, threads: int, log_path: Path) -> Path:
    """Run processPhraseTableMin; returns the `.minphr` file Moses will load (PREFIX.minphr).

    It is given the whole name: processPhraseTableMin appends ".minphr" only when its test
    `rfind(".minphr") != size() - 7` holds, which is false for a 6-character prefix (both sides
    npos), so `-out pt.rnn` wrote `pt.rnn` and Moses then looked for `pt.rnn.minphr`."""
    binary = moses.binary(COMPACT_BINARY)
    if not binary.is_file():
        raise MosesNotFoundError(
            f"cannot re-binarize the PhraseDictionaryCompact table: {binary} not found "
            "(build Moses with --with-cmph); or use the text table with PhraseDictionaryMemory")
    minphr = out_prefix.with_name(out_prefix.name + ".minphr")
    argv = [str(binary), "-in", str(text_table), "-out", str(minphr),
            "-nscores", str(num_scores), "-threads", str(threads)]
    with open(log_path, "wb") as log:
        code = child_process.call(argv, stdout=log, stderr=subprocess.STDOUT)
    if code != 0:
        raise MosesRunError(f"{COMPACT_BINARY} exited with status {code}; see {log_path}")
    if not minphr.is_file():
        raise MosesRunError(f"{COMPACT_BINARY} exited with status 0 but wrote no {minphr}; see {log_path}")
    return minphr


def sample_scores(path: Path, columns: Sequence[int], size: int, seed: int = 1) -> list[tuple]:
    """A uniform sample (reservoir) of `size` lines' scores at `columns`, as natural logs.

    Moses stores probabilities and takes their log; so do we, flooring at log(1e-300)."""
    rng = random.Random(seed)
    reservoir: list[tuple] = []
    with PhraseTableReader(path) as reader:
        for entry in reader:
            line_no = entry.line_no
            if len(reservoir) < size:
                slot = len(reservoir)
                reservoir.append(())
            else:
                slot = rng.randrange(line_no)
                if slot >= size:
                    continue
            start, end = scores_span(entry)
            scores = entry.raw[start:end].split()
            try:
                reservoir[slot] = tuple(math.log(max(float(scores[c]), 1e-300)) for c in columns)
            except IndexError:
                raise PhraseTableFormatError(
                    f"{path}:{line_no}: expected numeric scores at columns {list(columns)}, "
                    f"found {[s.decode() for s in scores]}") from None
    return reservoir
