"""Read the feature and BLEU-statistics files of Moses's `extractor` (text format), several
iterations merged per sentence as `mert` merges them, into flat numpy arrays for tuning.

Text format (mert/FeatureArray.cpp, mert/ScoreArray.cpp), one block a sentence:
    FEATURES_TXT_BEGIN_0 <sentence id> <count> <dims> <name> ...
    <dims values>                     (count lines)
    FEATURES_TXT_END_0
and the same with SCORES_TXT_BEGIN_0 <id> <count> 9 BLEU / SCORES_TXT_END_0 in the scores
file, whose blocks pair with the feature file's one for one.

Merging (mert/Data.cpp removeDuplicates): a sentence's hypotheses are those of every file,
in file order; a hypothesis whose features and statistics both equal an earlier one's is
dropped by swapping it with the sentence's last hypothesis, so the order that remains is
mert's own. The order matters only to ties of the model score, which go to the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import NbestFormatError
from ..line_files import decoded, open_binary_read
from .bleu_statistics import NUM_STATS

__all__ = ["NbestArrays", "read_extractor_files", "unique_order"]

FEATURES = (b"FEATURES_TXT_BEGIN_0", b"FEATURES_TXT_END_0")
SCORES = (b"SCORES_TXT_BEGIN_0", b"SCORES_TXT_END_0")


@dataclass(frozen=True)
class NbestArrays:
    """Every sentence's hypotheses, contiguous: sentence s owns rows starts[s]:starts[s + 1]."""
    names: list[str]  # K feature names, extractor spelling (`LM0_0`)
    features: np.ndarray  # (hyps, K) float64
    stats: np.ndarray  # (hyps, 9) int64, BLEU statistics
    starts: np.ndarray  # (sentences + 1,) int64 offsets into the rows
    sentence_ids: np.ndarray  # (sentences,) int64, the files' sentence ids, ascending

    @property
    def num_sentences(self) -> int:
        return len(self.starts) - 1

    @cached_property
    def row_sentences(self) -> np.ndarray:
        """(hyps,) int64: the sentence index (0 .. sentences - 1) of each row."""
        return np.repeat(np.arange(self.num_sentences), np.diff(self.starts))


@dataclass
class _Block:
    sentence: int
    width: int  # values a row (the header's dims)
    values: list  # (count, width) rows of bytes tokens
    names: list  # header's trailing fields (feature names, or the score type)
    where: str  # file:line of its header


def _read_blocks(path: Path, marks: tuple[bytes, bytes], what: str) -> list[_Block]:
    """The blocks of one extractor file, each checked: header, row count and width, footer."""
    begin, end = marks
    with open_binary_read(path) as handle:
        lines = handle.read().split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    blocks: list[_Block] = []
    at = 0  # index of the line being read; its number is at + 1
    while at < len(lines):
        fields = lines[at].split()
        if not fields:
            at += 1
            continue
        if fields[0] != begin or len(fields) < 4 or not all(f.isdigit() for f in fields[1:4]):
            found = decoded(b" ".join(fields[:4]))[:60]
            raise NbestFormatError(f"{path}:{at + 1}: expected '{begin.decode()} <sentence> <count> "
                                   f"<dims> ...' ({what}, text format), found '{found}'")
        sentence, count, width = (int(f) for f in fields[1:4])
        block = _Block(sentence, width, [line.split() for line in lines[at + 1:at + 1 + count]],
                       [decoded(f) for f in fields[4:]], f"{path}:{at + 1}")
        for offset, row in enumerate(block.values, start=at + 2):
            if row == [end]:
                raise NbestFormatError(f"{path}:{offset}: block ends after {offset - at - 2} rows, but "
                                       f"its header says {count}")
            if len(row) != width:
                raise NbestFormatError(f"{path}:{offset}: expected {width} {what} values, found {len(row)}")
        at += 1 + count
        if at >= len(lines):
            raise NbestFormatError(f"{path}:{len(lines)}: file ends inside the block begun at {block.where}")
        if lines[at].split() != [end]:
            raise NbestFormatError(f"{path}:{at + 1}: expected '{end.decode()}' after {count} rows, "
                                   f"found '{decoded(lines[at].strip())[:60]}'")
        blocks.append(block)
        at += 1
    if not blocks:
        raise NbestFormatError(f"{path}:{len(lines)}: no '{begin.decode()}' block")
    return blocks


def _as_array(block: _Block, dtype, what: str) -> np.ndarray:
    """A block's rows as finite numbers; a bad one is named by its line."""
    try:
        values = np.array(block.values, dtype=dtype).reshape(len(block.values), block.width)
        if np.isfinite(values).all():
            return values
    except ValueError:
        pass
    path, head = block.where.rsplit(":", 1)
    for offset, row in enumerate(block.values, start=int(head) + 1):
        for token in row:
            try:
                if np.isfinite(dtype(token)):
                    continue
            except ValueError:
                pass
            raise NbestFormatError(f"{path}:{offset}: {what} value '{decoded(token)[:30]}' is not a finite number")
    raise AssertionError("unreachable: some value failed to convert")  # pragma: no cover


def unique_order(keys: list[bytes]) -> list[int]:
    """Indices that mert keeps of one sentence's hypotheses, in the order it leaves them: a
    duplicate is swapped with the last hypothesis still in play, which is then looked at."""
    order = list(range(len(keys)))
    seen: set[bytes] = set()
    position, last = 0, len(keys) - 1
    while position <= last:
        key = keys[order[position]]
        if key in seen:
            order[position], order[last] = order[last], order[position]
            last -= 1
        else:
            seen.add(key)
            position += 1
    return order[:last + 1]


def read_extractor_files(feature_paths: Sequence[Path], score_paths: Sequence[Path]) -> NbestArrays:
    """Merge extractor outputs (gzipped or plain) of one or more iterations, as mert loads
    `--ffile a,b --scfile a,b`: per sentence all files' hypotheses, duplicates removed."""
    if len(feature_paths) != len(score_paths) or not feature_paths:
        raise ValueError(f"{len(feature_paths)} feature file(s) but {len(score_paths)} score file(s)")
    names: list[str] | None = None
    per_sentence: dict[int, list[tuple[np.ndarray, np.ndarray, str]]] = {}  # id -> (features, stats, where)
    for feature_path, score_path in zip(feature_paths, score_paths):
        feature_blocks = _read_blocks(Path(feature_path), FEATURES, "feature")
        score_blocks = _read_blocks(Path(score_path), SCORES, "score")
        if len(feature_blocks) != len(score_blocks):
            common = min(len(feature_blocks), len(score_blocks))
            extra, other = ((feature_blocks[common], score_path) if len(feature_blocks) > common
                            else (score_blocks[common], feature_path))
            raise NbestFormatError(f"{extra.where}: block {common + 1} (sentence {extra.sentence}), "
                                   f"but {other} ends after {common} blocks")
        for fblock, sblock in zip(feature_blocks, score_blocks):
            if (fblock.sentence, len(fblock.values)) != (sblock.sentence, len(sblock.values)):
                raise NbestFormatError(
                    f"{sblock.where}: sentence {sblock.sentence} with {len(sblock.values)} hypotheses, "
                    f"but {fblock.where} has sentence {fblock.sentence} with {len(fblock.values)}")
            if sblock.width != NUM_STATS:
                raise NbestFormatError(f"{sblock.where}: expected {NUM_STATS} BLEU statistics a "
                                       f"hypothesis, found {sblock.width}")
            if len(fblock.names) != fblock.width:
                raise NbestFormatError(f"{fblock.where}: {len(fblock.names)} feature names for "
                                       f"{fblock.width} values")
            if names is None:
                names = fblock.names
            elif fblock.names != names:
                raise NbestFormatError(f"{fblock.where}: feature names {' '.join(fblock.names)} "
                                       f"differ from the first block's {' '.join(names)}")
            features = _as_array(fblock, float, "feature")  # (count, K)
            stats = _as_array(sblock, int, "score")  # (count, 9)
            per_sentence.setdefault(fblock.sentence, []).append((features, stats, fblock.where))
    sentence_ids = np.array(sorted(per_sentence), dtype=np.int64)
    all_features, all_stats, counts = [], [], []
    for sentence in sentence_ids:
        features = np.concatenate([f for f, _, _ in per_sentence[sentence]])
        stats = np.concatenate([s for _, s, _ in per_sentence[sentence]])
        if len(features) == 0:
            raise NbestFormatError(f"{per_sentence[sentence][0][2]}: sentence {sentence} has no "
                                   f"hypothesis in any file")
        keys = [f.tobytes() + s.tobytes() for f, s in zip(features, stats)]
        keep = unique_order(keys)
        all_features.append(features[keep])
        all_stats.append(stats[keep])
        counts.append(len(keep))
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return NbestArrays(names=list(names), features=np.concatenate(all_features).astype(np.float64),
                       stats=np.concatenate(all_stats).astype(np.int64), starts=starts,
                       sentence_ids=sentence_ids)
