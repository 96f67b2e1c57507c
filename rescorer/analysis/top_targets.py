"""The paper's Table 2: for chosen source phrases, the top targets by the phrase table's
p(f|e) beside the top targets by the RNN.

Cho et al. (2014, §4.3) pick long source phrases (4 or more words), frequent and rare ones, and
find that the RNN prefers actual or literal translations where the table's relative
frequencies favour noise. Sources are picked in one pass over the table (Moses tables are
sorted by source, so a source's targets are one run of lines): the most frequent, the rarest or
a seeded random choice, optionally of at least `min_words` words and `min_targets` targets
(a source with one target ranks it first both ways), or the ones a file lists.

The table's p(f|e) is the paper's notation for p(target | source): Moses calls it φ(e|f), the
third score. The RNN's log p comes from a score column of a rescored table or from a model.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from rescorer.analysis.settings import PICKS
from rescorer.counts import counted
from rescorer.data.directions import oriented
from rescorer.errors import PhraseTableFormatError, RescorerError
from rescorer.io.table_reader import PhraseTableReader

__all__ = ["DIRECT_COLUMN", "PICKS", "SourceChoice", "SourceGroup", "read_source_groups",
           "read_sources_file", "score_groups", "top_targets_rows"]

DIRECT_COLUMN = 2  # φ(e|f) in Moses' naming: p(target | source), the table's third score


@dataclass(frozen=True)
class SourceChoice:
    """Which sources to show: `count` picked by `pick` among those of at least `min_words`
    words and `min_targets` targets, or exactly `sources` (in that order) when given."""

    count: int = 10
    min_words: int = 1
    min_targets: int = 1
    pick: str = "frequent"
    seed: int = 1
    sources: Optional[Sequence[str]] = None


@dataclass
class SourceGroup:
    """All targets of one source phrase, with their log p by the table and by the RNN."""

    source: str
    frequency: float  # c(source) from the counts field, else the number of targets
    targets: list[str] = field(default_factory=list)
    direct: list[float] = field(default_factory=list)  # log p(target | source), the table's
    rnn: Optional[list[float]] = None  # log p(target | source), the RNN's

    def ranked(self, by: str) -> list[int]:
        """Target indices by descending log p of `by` ('table' or 'rnn'), ties in table order."""
        scores = self.direct if by == "table" else self.rnn
        if scores is None:
            raise ValueError(f"{self.source!r} has no RNN scores")
        return sorted(range(len(self.targets)), key=lambda index: -scores[index])


def _source_frequency(raw: bytes) -> Optional[float]:
    """c(source) from the counts field (`c(target) c(source) c(pair)`), when the table has it."""
    fields = raw.split(b"|||")
    if len(fields) > 4:
        counts = fields[4].split()
        if len(counts) >= 2:
            try:
                return float(counts[1])
            except ValueError:
                return None
    return None


def _tiebreak(seed: int, source: str) -> int:
    """A seeded hash of the source: random picks and ties that do not depend on table order."""
    digest = hashlib.blake2b(source.encode("utf-8", "surrogateescape"), digest_size=8,
                             key=str(seed).encode())
    return int.from_bytes(digest.digest(), "big")


def _key(group: SourceGroup, choice: SourceChoice) -> tuple:
    """Larger is kept: the most frequent, the rarest, or the largest seeded hash."""
    tiebreak = _tiebreak(choice.seed, group.source)
    if choice.pick == "frequent":
        return (group.frequency, tiebreak)
    if choice.pick == "rare":
        return (-group.frequency, tiebreak)
    return (tiebreak,)


def read_source_groups(table_path: Path, choice: SourceChoice, rnn_column: Optional[int] = None,
                       score_is_log: bool = False) -> list[SourceGroup]:
    """The chosen sources' groups, in the choice's order (most frequent first, rarest first,
    by hash, or the listed order). `rnn_column` (0-based, negative from the end) reads the
    RNN's score from a rescored table, stored as a probability unless `score_is_log`."""
    if choice.pick not in PICKS:
        raise ValueError(f"pick must be one of {PICKS}, found {choice.pick!r}")
    wanted = None if choice.sources is None else set(choice.sources)
    kept: dict[str, SourceGroup] = {}
    heap: list[tuple] = []
    group: Optional[SourceGroup] = None

    def finish(done: Optional[SourceGroup]) -> None:
        if done is None:
            return
        if math.isnan(done.frequency):  # no counts field: the number of targets
            done.frequency = float(len(done.targets))
        if wanted is not None:
            if done.source in kept:  # an unsorted table: the source's lines come in runs
                earlier = kept[done.source]
                earlier.targets += done.targets
                earlier.direct += done.direct
                if earlier.rnn is not None:
                    earlier.rnn += done.rnn
            else:
                kept[done.source] = done
            return
        if len(done.source.split()) < choice.min_words or len(done.targets) < choice.min_targets:
            return
        item = (_key(done, choice), id(done), done)
        if len(heap) < choice.count:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            heapq.heapreplace(heap, item)

    with PhraseTableReader(table_path) as reader:
        for entry in reader:
            if wanted is not None and entry.src not in wanted:
                continue
            scores = entry.raw[:entry.scores_end].rsplit(b"|||", 1)[1].split()
            columns_ok = len(scores) > DIRECT_COLUMN and (
                rnn_column is None or -len(scores) <= rnn_column < len(scores))
            if not columns_ok:
                needed = (f"columns {_counted_from_1(rnn_column)} and {DIRECT_COLUMN + 1}"
                          if rnn_column is not None else f"column {DIRECT_COLUMN + 1}")
                raise PhraseTableFormatError(
                    f"{table_path}:{entry.line_no}: expected scores at {needed} (counted from 1), found "
                    f"{counted(len(scores), 'score')}{': is it a rescored table?' if rnn_column is not None else ''}")
            if group is None or group.source != entry.src:
                finish(group)
                frequency = _source_frequency(entry.raw)
                group = SourceGroup(entry.src, math.nan if frequency is None else frequency,
                                    rnn=[] if rnn_column is not None else None)
            group.targets.append(entry.tgt)
            group.direct.append(_log(scores[DIRECT_COLUMN], table_path, entry.line_no, False))
            if rnn_column is not None:
                group.rnn.append(_log(scores[rnn_column], table_path, entry.line_no, score_is_log))
    finish(group)
    if wanted is not None:
        return [kept[source] for source in choice.sources if source in kept]
    return [item[2] for item in sorted(heap, key=lambda item: item[0], reverse=True)]


def _log(token: bytes, table_path: Path, line_no: int, is_log: bool) -> float:
    try:
        value = float(token)
    except ValueError:
        raise PhraseTableFormatError(f"{table_path}:{line_no}: score {token.decode(errors='replace')!r} "
                                     f"is not a number") from None
    return value if is_log else math.log(max(value, 1e-300))


def _counted_from_1(index: int) -> int:
    """A column index as the command line counts columns: 1 is the first score, -1 the last."""
    return index + 1 if index >= 0 else index


def read_sources_file(path: Path) -> list[str]:
    """Source phrases, one per line (blank lines skipped, spacing normalised), in file order;
    '-' reads them from stdin."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
        lines = data.decode("utf-8", "surrogateescape").splitlines()
    except OSError as error:
        raise RescorerError(f"{path}: cannot read the sources ({error.strerror or error})") from None
    sources = []
    for number, line in enumerate(lines, 1):
        if "|||" in line:
            raise RescorerError(f"{path}:{number}: expected one source phrase per line, found "
                                f"' ||| ' (a phrase-table line?)")
        phrase = " ".join(line.split())
        if phrase and phrase not in sources:
            sources.append(phrase)
    if not sources:
        raise RescorerError(f"{path}: no source phrases (expected one per line)")
    return sources


def score_groups(groups: Sequence[SourceGroup], bundle, token_budget: Optional[int] = None) -> None:
    """Fill each group's RNN log p with `bundle`'s model (a ModelBundle on its device): log p(target |
    source), or log p(source | target) for an inverse model."""
    from rescorer.scoring.batch_scoring import score_encoded

    src_seqs, tgt_seqs = [], []
    for group in groups:
        for target in group.targets:
            model_src, model_tgt = oriented(group.source, target, bundle.direction)
            src_seqs.append(bundle.src_vocab.encode(model_src.split()))
            tgt_seqs.append(bundle.tgt_vocab.encode(model_tgt.split()))
    scores = score_encoded(bundle.model, src_seqs, tgt_seqs, token_budget)
    start = 0
    for group in groups:
        group.rnn = scores[start:start + len(group.targets)].tolist()
        start += len(group.targets)


def _listing(group: SourceGroup, order: list[int], scores: list[float], top: int) -> str:
    return "; ".join(f"{group.targets[index]} ({scores[index]:.2f})" for index in order[:top])


TABLE2_HEADERS = ("source", "c(source)", "targets", "top by the table's p(f|e)", "top by the RNN")
CSV_HEADERS = ("source", "source_count", "ranked_by", "rank", "target", "table_log_p", "rnn_log_p")


def top_targets_rows(groups: Sequence[SourceGroup], top: int, csv: bool = False,
                     missing: Sequence[str] = ()) -> tuple[tuple, list[list]]:
    """Headers and rows of Table 2: one row per source (Markdown) or per shown target (CSV).
    Each target carries its log p; `missing` are listed sources the table lacks."""
    rows: list[list] = []
    for group in groups:
        by_table, by_rnn = group.ranked("table"), group.ranked("rnn")
        if not csv:
            rows.append([group.source, f"{group.frequency:g}", len(group.targets),
                         _listing(group, by_table, group.direct, top),
                         _listing(group, by_rnn, group.rnn, top)])
            continue
        for ranked_by, order in (("table", by_table), ("rnn", by_rnn)):
            for rank, index in enumerate(order[:top], 1):
                rows.append([group.source, f"{group.frequency:g}", ranked_by, rank, group.targets[index],
                             f"{group.direct[index]:.8g}", f"{group.rnn[index]:.8g}"])
    for source in missing:
        rows.append([source, "0", "", "", "", "", ""] if csv else [source, "0", 0, "(not in the table)", ""])
    return (CSV_HEADERS if csv else TABLE2_HEADERS), rows

