"""Phrase pairs for the benchmarks: an evenly spaced sample of the real table, cached as TSV.

The table is sorted by source phrase, so its first lines are not typical; every k-th line
gives the same mix of lengths (1-7 tokens per side) as the whole table.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import List, Tuple

__all__ = ["DEFAULT_TABLE", "RESULTS_DIR", "sample_pairs", "write_parallel_text", "count_lines"]

DEFAULT_TABLE = Path("/work/shared/data/bible-en-fr/model/phrase-table.gz")
RESULTS_DIR = Path(__file__).resolve().parent / "results"

Pair = Tuple[List[str], List[str]]


def count_lines(path: Path) -> int:
    with gzip.open(path, "rb") as f:
        return sum(1 for _ in f)


def sample_pairs(num_pairs: int, table_path: Path = DEFAULT_TABLE, cache_dir: Path = RESULTS_DIR) -> List[Pair]:
    """``num_pairs`` (source tokens, target tokens) taken at an even stride, in file order."""
    cache = cache_dir / f"pairs-{num_pairs}.tsv"
    if not cache.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        total = count_lines(table_path)
        if num_pairs > total:
            raise ValueError(f"{table_path}: asked for {num_pairs} pairs but the table has {total} lines")
        stride = total / num_pairs
        wanted = {int(i * stride) for i in range(num_pairs)}
        tmp = cache.with_suffix(".tmp")
        with gzip.open(table_path, "rt", encoding="utf-8") as f, open(tmp, "w", encoding="utf-8") as out:
            for number, line in enumerate(f):
                if number in wanted:
                    fields = line.split(" ||| ")
                    out.write(f"{fields[0].strip()}\t{fields[1].strip()}\n")
        tmp.replace(cache)
    pairs = []
    with open(cache, encoding="utf-8") as f:
        for line in f:
            src, tgt = line.rstrip("\n").split("\t")
            pairs.append((src.split(), tgt.split()))
    return pairs


def write_parallel_text(pairs: List[Pair], src_path: Path, tgt_path: Path) -> None:
    """One phrase per line, tokens separated by spaces, as OpenNMT-py reads them."""
    with open(src_path, "w", encoding="utf-8") as fs, open(tgt_path, "w", encoding="utf-8") as ft:
        for src, tgt in pairs:
            fs.write(" ".join(src) + "\n")
            ft.write(" ".join(tgt) + "\n")
