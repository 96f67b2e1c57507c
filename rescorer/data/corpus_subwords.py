"""A model's two subword models, learned on what it trains on (a parallel corpus's sentences, or
a phrase table's phrases): each side's on that side's text (the model's source side first: the
target for an inverse model, as its vocabularies are). A side too small for the size asked is
refused in one line naming its file and the sizes it allows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from rescorer.data.directions import oriented
from rescorer.data.pair_sources import PairSource
from rescorer.data.subwords import SubwordModel, SubwordSides, learn_subwords
from rescorer.errors import CorpusError
from rescorer.io.table_reader import RejectSink
from rescorer.runtime.progress import Progress

__all__ = ["learn_corpus_subwords"]


def learn_corpus_subwords(corpus: PairSource, kind: str, size: int, progress: Progress,
                          reject: Optional[RejectSink] = None, direction: str = "forward",
                          at_most: bool = False) -> SubwordSides:
    """One pass over the source's good pairs (bad lines stop it, or go to `reject`), then a
    `size`-piece subword model of `kind` per side (`at_most`: fewer where a side allows no more)."""
    src_lines, tgt_lines = [], []
    for src, tgt in corpus.pairs(progress, reject, direction):
        src_lines.append(src)
        tgt_lines.append(tgt)
    src_path, tgt_path = oriented(*corpus.side_paths, direction)
    return SubwordSides(_learned(src_lines, kind, size, src_path, at_most),
                        _learned(tgt_lines, kind, size, tgt_path, at_most))


def _learned(lines: list[str], kind: str, size: int, path: Path, at_most: bool) -> SubwordModel:
    try:
        return learn_subwords(lines, size, kind, at_most)
    except ValueError as error:
        raise CorpusError(f"{path}: {_why(str(error), kind, size)}") from None


def _why(message: str, kind: str, size: int) -> str:
    """sentencepiece's reason as the sizes this side allows."""
    most = re.search(r"value <= (\d+)", message)
    if most:
        return (f"too little text for --subword-size {size}: it allows at most {most.group(1)} {kind} pieces "
                f"(give a smaller --subword-size)")
    least = re.search(r"smaller than required_chars\. \d+ vs (\d+)", message)
    if least:
        return (f"--subword-size {size} is less than its characters and the 256 byte pieces need: at least "
                f"{least.group(1)}")
    return message
