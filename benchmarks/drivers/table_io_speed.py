"""Lines per CPU second of the phrase-table I/O layer: read, read+append+write, score formatting.

CPU time, not wall time, so that other work on a shared machine does not distort the figures.

Usage: python benchmarks/drivers/table_io_speed.py TABLE.gz [--zlib]   (--zlib: ignore python-isal)
"""

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rescorer.io import gzip_io
from rescorer.io.table_reader import PhraseTableReader, append_scores
from rescorer.io.score_format import format_moses_scores
from rescorer.io.atomic_output import AtomicOutput


def rate(num: int, seconds: float) -> str:
    return f"{num:,} in {seconds:.2f} s = {num / seconds:,.0f}/s"


def main(table_path: str, *flags: str) -> None:
    if "--zlib" in flags:
        gzip_io._igzip = None
    print(f"gzip backend: {gzip_io.gzip_backend()}")

    start = time.process_time()
    with PhraseTableReader(table_path) as reader:
        raws = sum(1 for _ in reader)
    print(f"read:                    {rate(raws, time.process_time() - start)} lines")

    with tempfile.TemporaryDirectory() as tmp:
        start = time.process_time()
        with PhraseTableReader(table_path) as reader, AtomicOutput(Path(tmp) / "out.gz") as out:
            for entry in reader:
                out.write_line(append_scores(entry, ["0.5"]))
        seconds = time.process_time() - start
        size = (Path(tmp) / "out.gz").stat().st_size
        print(f"read+append+write .gz:   {rate(out.lines_written, seconds)} lines, {size:,} bytes")

        lines = [b"source phrase %d ||| phrase cible ||| 0.5 0.25 0.125 0.5 0.3 ||| 0-0 1-1 ||| 2 2 1 ||| |||" % i
                 for i in range(1_000_000)]
        start = time.process_time()
        with AtomicOutput(Path(tmp) / "write-only.gz") as out:
            for line in lines:
                out.write_line(line)
        size = (Path(tmp) / "write-only.gz").stat().st_size
        print(f"write .gz only:          {rate(len(lines), time.process_time() - start)} lines, {size:,} bytes")

    log_probs = np.random.default_rng(0).uniform(-30.0, 0.0, 1_000_000)
    start = time.process_time()
    format_moses_scores(log_probs)
    print(f"format_moses_scores:     {rate(len(log_probs), time.process_time() - start)} scores")


if __name__ == "__main__":
    main(*sys.argv[1:])
