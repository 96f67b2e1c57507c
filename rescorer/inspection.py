"""Looking at what a rescored table says: the RNN's favourite targets for frequent sources.

The paper's sanity check (Table 2): for frequent source phrases, the targets the RNN scores
highest should be real translations, often better ones than the table's most probable.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from rescorer.errors import PhraseTableFormatError
from rescorer.phrase_table import PhraseTableReader

DIRECT_COLUMN = 2  # phi(e|f) in Moses' naming: p(target | source), the table's third score


@dataclass(order=True)
class SourceGroup:
    """All targets of one source phrase (Moses tables are sorted by source)."""

    frequency: float
    source: str = field(compare=False)
    targets: list = field(default_factory=list, compare=False)  # (tgt, rnn log p, log phi(e|f))


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


def top_targets(table_path: Path, num_sources: int = 10, column: int = -1,
                score_is_log: bool = False) -> list[SourceGroup]:
    """The `num_sources` most frequent sources, each with its targets sorted by the RNN score.

    Frequency is c(source) from the counts field, or else the number of targets. `column`
    picks the score (default: the last, where `rescore` appends).
    """
    heap: list[SourceGroup] = []
    group: Optional[SourceGroup] = None

    def finish(done: Optional[SourceGroup]) -> None:
        if done is None:
            return
        if done.frequency != done.frequency:  # NaN: no counts field, use the number of targets
            done.frequency = float(len(done.targets))
        if len(heap) < num_sources:
            heapq.heappush(heap, done)
        elif done.frequency > heap[0].frequency:
            heapq.heapreplace(heap, done)

    with PhraseTableReader(table_path) as reader:
        for entry in reader:
            scores = entry.raw[:entry.scores_end].rsplit(b"|||", 1)[1].split()
            if not -len(scores) <= column < len(scores) or len(scores) <= DIRECT_COLUMN:
                raise PhraseTableFormatError(
                    f"{table_path}:{entry.line_no}: expected scores at columns {column} and "
                    f"{DIRECT_COLUMN} (0-based), found {len(scores)} scores: is it a rescored table?")
            rnn = float(scores[column])
            rnn = rnn if score_is_log else math.log(max(rnn, 1e-300))
            direct = math.log(max(float(scores[DIRECT_COLUMN]), 1e-300))
            if group is None or group.source != entry.src:
                finish(group)
                frequency = _source_frequency(entry.raw)
                group = SourceGroup(math.nan if frequency is None else frequency, entry.src)
            group.targets.append((entry.tgt, rnn, direct))
    finish(group)
    groups = sorted(heap, reverse=True)
    for done in groups:
        done.targets.sort(key=lambda target: -target[1])
    return groups
