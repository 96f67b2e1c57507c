"""Phrase-table file operations Moses integration needs: count the scores, keep a subset of
score columns (to build the ablation systems' tables), re-binarize a compact table, and
sample scores for the figure. Lines are handled as bytes so that every other field is kept."""

from __future__ import annotations

import math
import random
import subprocess
from pathlib import Path
from typing import Sequence

from rescorer.errors import PhraseTableFormatError

from .errors import MosesNotFoundError, MosesRunError
from .moses_install import COMPACT_BINARY, MosesInstall
from .textio import open_binary_read, open_binary_write

__all__ = ["read_num_scores", "select_score_columns", "binarize_compact", "sample_scores"]

SEP = b" ||| "


def _scores_field(line: bytes, path: Path, line_no: int) -> list[bytes]:
    fields = line.rstrip(b"\r\n").split(SEP)
    if len(fields) < 3:
        raise PhraseTableFormatError(
            f"{path}:{line_no}: expected at least 3 ' ||| ' fields, found {len(fields)}")
    return fields


def read_num_scores(path: Path) -> int:
    """Number of scores on the first line (Moses trusts num-features= and misreads otherwise)."""
    with open_binary_read(path) as handle:
        first = handle.readline()
    if not first:
        raise PhraseTableFormatError(f"{path}: expected phrase pairs, found an empty file")
    return len(_scores_field(first, path, 1)[2].split())


def select_score_columns(src_path: Path, out_path: Path, keep: Sequence[int]) -> int:
    """Write `src_path` keeping only the score columns `keep` (0-based, in that order).

    Returns the number of lines. Every other byte of each line is copied unchanged."""
    count = 0
    with open_binary_read(src_path) as src, open_binary_write(out_path) as out:
        for count, line in enumerate(src, start=1):
            fields = _scores_field(line, src_path, count)
            scores = fields[2].split()
            try:
                fields[2] = b" ".join(scores[i] for i in keep)
            except IndexError:
                raise PhraseTableFormatError(
                    f"{src_path}:{count}: expected at least {max(keep) + 1} scores, found {len(scores)}"
                ) from None
            ending = line[len(line.rstrip(b"\r\n")):]
            out.write(SEP.join(fields) + ending)
    return count


def binarize_compact(moses: MosesInstall, text_table: Path, out_prefix: Path,
                     num_scores: int, threads: int, log_path: Path) -> Path:
    """Run processPhraseTableMin; returns the `.minphr` file Moses will load."""
    binary = moses.binary(COMPACT_BINARY)
    if not binary.is_file():
        raise MosesNotFoundError(
            f"cannot re-binarize the PhraseDictionaryCompact table: {binary} not found "
            "(build Moses with --with-cmph); or use the text table with PhraseDictionaryMemory")
    argv = [str(binary), "-in", str(text_table), "-out", str(out_prefix),
            "-nscores", str(num_scores), "-threads", str(threads)]
    with open(log_path, "wb") as log:
        code = subprocess.call(argv, stdout=log, stderr=subprocess.STDOUT)
    if code != 0:
        raise MosesRunError(f"{COMPACT_BINARY} exited with status {code}; see {log_path}")
    return out_prefix.with_name(out_prefix.name + ".minphr")


def sample_scores(path: Path, columns: Sequence[int], size: int, seed: int = 1) -> list[tuple]:
    """A uniform sample (reservoir) of `size` lines' scores at `columns`, as natural logs.

    Moses stores probabilities and takes their log; so do we, flooring at log(1e-300)."""
    rng = random.Random(seed)
    reservoir: list[tuple] = []
    with open_binary_read(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if len(reservoir) < size:
                slot = len(reservoir)
                reservoir.append(())
            else:
                slot = rng.randrange(line_no)
                if slot >= size:
                    continue
            scores = _scores_field(line, path, line_no)[2].split()
            try:
                reservoir[slot] = tuple(math.log(max(float(scores[c]), 1e-300)) for c in columns)
            except (IndexError, ValueError):
                raise PhraseTableFormatError(
                    f"{path}:{line_no}: expected numeric scores at columns {list(columns)}, "
                    f"found {[s.decode() for s in scores]}") from None
    return reservoir
