"""An on-disk cache of encoded phrase pairs, so training samples from memmaps, not a Python list.

A table of 10^8 pairs would not fit in RAM as Python objects; as int32 ids plus int64 offsets
it is a few GB on disk, paged in on demand. Layout of a cache directory:
`src.ids`, `tgt.ids` (int32 token ids, all pairs concatenated), `src.offsets`, `tgt.offsets`
(int64, num_pairs + 1 entries), `meta.json`, and for weighted training `counts` (float32, the
table's c(pair) of each pair).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from rescorer.data.subwords import SubwordSides
from rescorer.data.text_encoding import SideEncoding
from rescorer.data.vocabulary import Vocabulary
from rescorer.errors import RescorerError
from rescorer.io.file_names import temporary_name

ID_DTYPE = np.int32
OFFSET_DTYPE = np.int64
COUNT_DTYPE = np.float32
SIDES = ("src", "tgt")


class PairCache:
    """Read-only view of a built cache: pair i is (src_ids[i], tgt_ids[i])."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.meta = json.loads((self.directory / "meta.json").read_text())
        self.num_pairs = int(self.meta["num_pairs"])
        self.too_long = int(self.meta.get("too_long", 0))  # pairs left out by the length bound
        self._ids = {side: _load(self.directory / f"{side}.ids", ID_DTYPE) for side in SIDES}
        self._offsets = {side: _load(self.directory / f"{side}.offsets", OFFSET_DTYPE) for side in SIDES}
        for side in SIDES:  # a damaged cache is rebuilt, never trained on
            offsets = self._offsets[side]
            if len(offsets) != self.num_pairs + 1 or (len(offsets) and offsets[-1] != len(self._ids[side])):
                raise ValueError(f"{self.directory}: {side} offsets do not match the ids")
        counts_path = self.directory / "counts"
        self.counts = _load(counts_path, COUNT_DTYPE) if counts_path.exists() else None
        if self.counts is not None and len(self.counts) != self.num_pairs:
            raise ValueError(f"{self.directory}: counts do not match the pairs")

    def lengths(self, side: str) -> np.ndarray:
        return np.diff(self._offsets[side])

    def token_counts(self, side: str, vocab_size: int,
                     indices: Optional[np.ndarray] = None) -> np.ndarray:
        """How often each id occurs on one side, over all pairs or the given ones (float64)."""
        if indices is None:
            ids = self._ids[side]
        else:
            seqs = self.sequences(side, indices)
            ids = np.concatenate(seqs) if seqs else np.zeros(0, dtype=ID_DTYPE)
        return np.bincount(ids, minlength=vocab_size).astype(np.float64)

    def sequences(self, side: str, indices: Sequence[int]) -> list[np.ndarray]:
        ids, offsets = self._ids[side], self._offsets[side]
        return [ids[offsets[i]:offsets[i + 1]] for i in indices]


def _load(path: Path, dtype) -> np.ndarray:
    if path.stat().st_size == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r")


class _SideWriter:
    """Appends one side's ids and offsets to disk in blocks, so memory stays flat."""

    BLOCK_PAIRS = 65536

    def __init__(self, directory: Path, side: str):
        self.ids_file = (directory / f"{side}.ids").open("wb")
        self.offsets_file = (directory / f"{side}.offsets").open("wb")
        self.total = 0
        self.ids: list[int] = []
        self.offsets: list[int] = [0]

    def add(self, ids: list[int]) -> None:
        self.ids.extend(ids)
        self.total += len(ids)
        self.offsets.append(self.total)
        if len(self.offsets) >= self.BLOCK_PAIRS:
            self.flush()

    def flush(self) -> None:
        # write(), not ndarray.tofile(): a full disk then raises OSError(ENOSPC), which says so
        self.ids_file.write(np.asarray(self.ids, dtype=ID_DTYPE).tobytes())
        self.offsets_file.write(np.asarray(self.offsets, dtype=OFFSET_DTYPE).tobytes())
        self.ids, self.offsets = [], []

    def close(self) -> None:
        self.flush()
        self.ids_file.close()
        self.offsets_file.close()


def build_pair_cache(pairs: Iterable[tuple], src_vocab: Vocabulary,
                     tgt_vocab: Vocabulary, directory: Path, meta: dict,
                     max_length: Optional[int] = None, with_counts: bool = False,
                     subwords: Optional[SubwordSides] = None) -> PairCache:
    """Encode every (src, tgt) phrase pair into `directory`, replacing what was there; a pair
    with more than `max_length` words on either side is left out, and counted (`too_long`).
    With `with_counts` the pairs are (src, tgt, count) and the counts are kept too. With
    `subwords` each side is encoded as its subword pieces (the bound still counts words, as
    Moses' clean-corpus-n does).

    Written under a temporary name beside it (`.NAME.tmp-PID`) and renamed at the end, so an
    interrupted build never looks finished; the temporary is removed on any error. `meta` is
    stored as given (it identifies the table and vocabularies, so a later run can tell whether
    the cache still fits). Callers make sure `directory` is a pair cache or empty
    (`rescorer.io.path_checks`): it is replaced.
    """
    directory = Path(directory)
    src_encoding = SideEncoding(src_vocab, subwords.source if subwords else None)
    tgt_encoding = SideEncoding(tgt_vocab, subwords.target if subwords else None)
    partial = directory.with_name(temporary_name(directory))
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        src_writer, tgt_writer = _SideWriter(partial, "src"), _SideWriter(partial, "tgt")
        counts: list[float] = []
        num_pairs = too_long = 0
        try:
            for pair in pairs:
                src_words, tgt_words = pair[0].split(), pair[1].split()
                if max_length is not None and max(len(src_words), len(tgt_words)) > max_length:
                    too_long += 1
                    continue
                if subwords is None:
                    src_writer.add(src_vocab.encode(src_words))
                    tgt_writer.add(tgt_vocab.encode(tgt_words))
                else:
                    src_writer.add(src_encoding.encode(pair[0]))
                    tgt_writer.add(tgt_encoding.encode(pair[1]))
                if with_counts:
                    counts.append(pair[2])
                num_pairs += 1
        finally:
            src_writer.close()
            tgt_writer.close()
        if with_counts:
            (partial / "counts").write_bytes(np.asarray(counts, dtype=COUNT_DTYPE).tobytes())
        (partial / "meta.json").write_text(json.dumps(dict(meta, num_pairs=num_pairs, too_long=too_long),
                                                      indent=1))
        shutil.rmtree(directory, ignore_errors=True)
        os.replace(partial, directory)
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        raise RescorerError(f"{directory}: cannot write the pair cache ({reason}); nothing was "
                            f"kept there") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return PairCache(directory)


def open_matching_cache(directory: Path, meta: dict) -> Optional[PairCache]:
    """The cache in `directory` if it was built from the same table and vocabularies, else None."""
    try:
        cache = PairCache(directory)
    except (OSError, ValueError, KeyError):
        return None
    stored = {key: value for key, value in cache.meta.items() if key not in ("num_pairs", "too_long")}
    return cache if stored == meta else None
