"""Phrase pairs for the benchmarks: an evenly spaced sample of the real table, cached as TSV.

The table is sorted by source phrase, so its first lines are not typical; every k-th line
gives the same mix of lengths (1-7 tokens per side) as the whole table.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import List, Tuple

__all__ = ["DEFAULT_TABLE", "RESULTS_DIR", "sample_pairs", "sample_table", "repeated_table",
           "read_table_pairs", "write_parallel_text", "count_lines"]

# ../shared beside the repository, as in CI
DEFAULT_TABLE = Path(__file__).resolve().parents[3] / "shared" / "data" / "bible-en-fr" / "model" / "phrase-table.gz"
RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"

Pair = Tuple[List[str], List[str]]


def count_lines(path: Path) -> int:
    with gzip.open(path, "rb") as f:
        return sum(1 for _ in f)


def evenly_spaced_line_numbers(table_path: Path, count: int) -> set:
    """0-based numbers of `count` lines spread evenly over the table (sorted tables vary along)."""
    total = count_lines(table_path)
    if count > total:
        raise ValueError(f"{table_path}: asked for {count} lines but the table has {total}")
    stride = total / count
    return {int(i * stride) for i in range(count)}


def sample_pairs(num_pairs: int, table_path: Path = DEFAULT_TABLE, cache_dir: Path = RESULTS_DIR) -> List[Pair]:
    """``num_pairs`` (source tokens, target tokens) taken at an even stride, in file order."""
    cache = cache_dir / f"pairs-{num_pairs}.tsv"
    if not cache.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        wanted = evenly_spaced_line_numbers(table_path, num_pairs)
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


def _open_out(path: Path):
    try:  # python-isal writes gzip 3-5x faster; the file is a standard gzip either way
        from isal import igzip

        return igzip.open(path, "wb", compresslevel=1)
    except ImportError:
        return gzip.open(path, "wb", compresslevel=1)


def sample_table(num_lines: int, table_path: Path = DEFAULT_TABLE, cache_dir: Path = RESULTS_DIR) -> Path:
    """A gzipped phrase table of ``num_lines`` whole lines taken at an even stride (cached)."""
    out = cache_dir / f"table-sample-{num_lines}.gz"
    if out.exists():
        return out
    cache_dir.mkdir(parents=True, exist_ok=True)
    wanted = evenly_spaced_line_numbers(table_path, num_lines)
    tmp = out.with_suffix(".tmp")
    with gzip.open(table_path, "rb") as f, _open_out(tmp) as o:
        o.writelines(line for number, line in enumerate(f) if number in wanted)
    tmp.replace(out)
    return out


def repeated_table(num_lines: int, table_path: Path = DEFAULT_TABLE, cache_dir: Path = RESULTS_DIR) -> Path:
    """A gzipped table of the first ``num_lines`` lines of the real table repeated end to end (cached)."""
    out = cache_dir / f"table-repeated-{num_lines}.gz"
    if out.exists():
        return out
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    left = num_lines
    with _open_out(tmp) as o:
        while left > 0:
            with gzip.open(table_path, "rb") as f:
                for line in f:
                    o.write(line)
                    left -= 1
                    if left == 0:
                        break
    tmp.replace(out)
    return out


def read_table_pairs(path: Path) -> List[Pair]:
    """(source tokens, target tokens) of every line of a gzipped table."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [(fields[0].split(), fields[1].split()) for fields in (line.split(" ||| ") for line in f)]
