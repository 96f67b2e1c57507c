"""What a model trains on: the unique phrase pairs of a Moses phrase table (the paper's setup),
or the sentence pairs of a parallel corpus (the later encoder-decoders' setup, for reranking
n-best lists). Training reads either through the same three questions: which pairs, in which
direction; what identifies the input (a changed input makes the pair cache stale); how a command
line names it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Union

from rescorer.data.directions import oriented
from rescorer.errors import RescorerError
from rescorer.io.parallel_corpus import ParallelCorpusReader
from rescorer.io.table_reader import PhraseTableReader, RejectSink, pair_count
from rescorer.runtime.progress import Progress

__all__ = ["PhraseTablePairs", "ParallelCorpusPairs", "PairSource", "pair_source", "file_identity"]


def file_identity(path: Path, prefix: str) -> dict:
    """What makes a pair cache stale: a file's name, size and modification time."""
    stat = Path(path).stat()
    return {f"{prefix}_name": Path(path).name, f"{prefix}_bytes": stat.st_size,
            f"{prefix}_mtime_ns": stat.st_mtime_ns}


@dataclass(frozen=True)
class PhraseTablePairs:
    """Every line of a phrase table, one pair each (frequencies ignored, as the paper does); with
    `utf8_only` (a subword model's table), a line that is not UTF-8 is a bad line."""

    path: Path
    utf8_only: bool = False
    kind = "table"  # how progress lines name it

    @property
    def side_paths(self) -> tuple:
        """The files the source and the target text come from."""
        return self.path, self.path

    def pairs(self, progress: Progress, reject: Optional[RejectSink] = None, direction: str = "forward",
              with_counts: bool = False, lowest_count: tuple = (0.0, "")) -> Iterator[tuple]:
        """(model source, model target) of every line, then its c(pair) with `with_counts` (a
        count not above `lowest_count`, (bound, why), refused); a bad line stops the read
        (reject None) or goes to `reject`."""
        with PhraseTableReader(self.path, reject_path=reject, utf8_only=self.utf8_only) as reader:
            for entry in reader:
                progress(1)
                pair = oriented(entry.src, entry.tgt, direction)
                yield (*pair, pair_count(entry, str(self.path), *lowest_count)) if with_counts else pair

    def identity(self) -> dict:
        return file_identity(self.path, "table")

    def describe(self) -> str:
        return f"phrase table {self.path.name}"

    def command_args(self) -> str:
        return shlex.quote(str(self.path))

    def __str__(self) -> str:
        return str(self.path)


@dataclass(frozen=True)
class ParallelCorpusPairs:
    """Every line pair of a parallel corpus (source file, target file), one sentence pair each;
    with `utf8_only` (a subword model's corpus), a line that is not UTF-8 is a bad line."""

    src_path: Path
    tgt_path: Path
    utf8_only: bool = False
    kind = "corpus"

    @property
    def side_paths(self) -> tuple:
        """The files the source and the target text come from."""
        return self.src_path, self.tgt_path

    def pairs(self, progress: Progress, reject: Optional[RejectSink] = None, direction: str = "forward",
              with_counts: bool = False, lowest_count: tuple = (0.0, "")) -> Iterator[tuple]:
        if with_counts:
            raise RescorerError("a parallel corpus has no pair counts: weight its sentence pairs "
                                "equally (--pair-weights unique)")
        for _, src, tgt in ParallelCorpusReader(self.src_path, self.tgt_path, reject, self.utf8_only):
            progress(1)
            yield oriented(src, tgt, direction)

    def identity(self) -> dict:
        return {**file_identity(self.src_path, "corpus_source"), **file_identity(self.tgt_path, "corpus_target")}

    def describe(self) -> str:
        return f"parallel corpus {self.src_path.name}, {self.tgt_path.name}"

    def command_args(self) -> str:
        return f"--parallel {shlex.quote(str(self.src_path))} {shlex.quote(str(self.tgt_path))}"

    def __str__(self) -> str:
        return f"{self.src_path}, {self.tgt_path}"


PairSource = Union[PhraseTablePairs, ParallelCorpusPairs]


def pair_source(source: Union[Path, str, PairSource]) -> PairSource:
    """A phrase table's path, or a source as it is."""
    if isinstance(source, (PhraseTablePairs, ParallelCorpusPairs)):
        return source
    return PhraseTablePairs(Path(source))
