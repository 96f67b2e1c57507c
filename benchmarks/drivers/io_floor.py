"""The I/O floor of rescoring: decompress, split every line into fields, write it back with one
more score, recompress, and no model. End-to-end scoring cannot beat these rates.

Three ways are timed on the same gzipped table:
- ``zlib``: the standard library's gzip module (level 6), lines split on `` ||| ``;
- ``isal``: python-isal's igzip (level 2, what rescorer maps level 6 to), same splitting;
- ``rescorer``: rescorer's own PhraseTableReader (parses and checks the score fields) and
  AtomicOutput writer, with a constant score appended: the pipeline with the model taken out.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
import time
from pathlib import Path
from typing import Dict

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

__all__ = ["measure_io_floor"]

SEP = b" ||| "
NEW_SCORE = b"0.5"


def _copy_split(reader, writer) -> int:
    """Split each line into its fields and the score field into numbers, append a score, rejoin."""
    lines = 0
    for line in reader:
        fields = line.rstrip(b"\n").split(SEP)
        fields[0].split()  # source tokens
        fields[1].split()  # target tokens
        scores = fields[2].split()
        scores.append(NEW_SCORE)
        fields[2] = b" ".join(scores)
        writer.write(SEP.join(fields) + b"\n")
        lines += 1
    return lines


def _stdlib(table: Path, out: Path) -> int:
    with open(table, "rb") as raw_in, open(out, "wb") as raw_out:
        reader = io.BufferedReader(gzip.GzipFile(fileobj=raw_in, mode="rb"), 1 << 20)
        with gzip.GzipFile(fileobj=raw_out, mode="wb", compresslevel=6, mtime=0) as writer:
            return _copy_split(reader, writer)


def _isal(table: Path, out: Path) -> int:
    from isal import igzip

    with open(table, "rb") as raw_in, open(out, "wb") as raw_out:
        reader = io.BufferedReader(igzip.IGzipFile(fileobj=raw_in, mode="rb"), 1 << 20)
        with igzip.IGzipFile(fileobj=raw_out, mode="wb", compresslevel=2, mtime=0) as writer:
            return _copy_split(reader, writer)


def _rescorer(table: Path, out: Path) -> int:
    from rescorer.io.table_reader import PhraseTableReader, append_scores
    from rescorer.io.atomic_output import AtomicOutput

    with PhraseTableReader(table) as reader, AtomicOutput(out, force=True, input_path=table) as output:
        for entry in reader:
            output.write_line(append_scores(entry, ["0.5"]))
        return reader.lines_read


WAYS = {"zlib": _stdlib, "isal": _isal, "rescorer": _rescorer}


def measure_io_floor(table: Path, work_dir: Path, ways=("zlib", "isal", "rescorer")) -> Dict[str, dict]:
    """Lines/s of each way on ``table``; a way whose module is missing reports why instead."""
    work_dir.mkdir(parents=True, exist_ok=True)
    results: Dict[str, dict] = {}
    for way in ways:
        out = work_dir / f"io-floor-{way}.gz"
        try:
            start = time.perf_counter()
            lines = WAYS[way](table, out)
            seconds = time.perf_counter() - start
        except ImportError as error:
            results[way] = {"skipped": f"{type(error).__name__}: {error}"}
            continue
        finally:
            out.unlink(missing_ok=True)
        results[way] = {"lines": lines, "seconds": seconds, "lines_per_s": lines / seconds}
    return results


def main(argv=None) -> int:
    from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", nargs="?", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = measure_io_floor(args.table, RESULTS_DIR)
    for way, res in results.items():
        if "skipped" in res:
            print(f"  {way:9s} skipped: {res['skipped']}")
        else:
            print(f"  {way:9s} {res['lines_per_s']:10.0f} lines/s  ({res['lines']} lines, {res['seconds']:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
