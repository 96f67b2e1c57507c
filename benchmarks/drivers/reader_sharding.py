"""How should each rank find its units in a gzipped table? Measures, on one core, in one run:

- parse:   rescorer's reader parsing every line (what a rank pays for the lines it scores);
- skip:    `UnitReader.skip_lines` over the whole table: decompress and count newlines
           (what every rank pays, today, to pass over the other ranks' units), isal and zlib;
- index:   indexed_gzip (random access through a zran index): one pass to build the index
           (every point's 32 KiB window), then a seek to a unit in the middle and reading it;
- rapidgzip: decompressing the whole table with 1 and 2 threads (its parallel decoder);
- pipeline: `rescore_table` with a stand-in model so cheap that the CPU side (parse, encode,
  batch, format, compress, write the unit) is all that is measured: a rank's ceiling when its
  GPU scores faster than that;
- assemble: rank 0 concatenating the finished units into the output (MB/s of gzip).

Then, from those rates, the time one rank of W spends reading a table of N lines both ways.
indexed_gzip and rapidgzip are not dependencies of rescorer: install them to measure them
(pip install indexed_gzip rapidgzip); the parts they need are skipped without them.

    OMP_NUM_THREADS=1 python3 benchmarks/drivers/reader_sharding.py [--table PATH] [--lines 500000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.helpers.pairs import DEFAULT_TABLE  # noqa: E402
from rescorer.io import gzip_io  # noqa: E402
from rescorer.io.table_reader import PhraseTableReader  # noqa: E402
from rescorer.io.table_units import UnitReader  # noqa: E402

UNIT_LINES = 200_000


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def parse_all(path: Path) -> int:
    with PhraseTableReader(path) as reader:
        return sum(1 for _ in reader)


def skip_all(path: Path) -> int:
    with UnitReader(path) as reader:
        return reader.skip_lines(1 << 62)


def skip_all_zlib(path: Path) -> int:
    isal = gzip_io._igzip
    gzip_io._igzip = None  # the reader falls back to zlib, as without python-isal
    try:
        return skip_all(path)
    finally:
        gzip_io._igzip = isal


def indexed_gzip_build(path: Path, spacing: int):
    import indexed_gzip

    with indexed_gzip.IndexedGzipFile(str(path), spacing=spacing) as file:
        file.build_full_index()
        index = Path("/tmp") / f"reader-sharding-{path.name}.gzidx"
        file.export_index(str(index))
    return index


def indexed_gzip_seek(path: Path, index: Path, offset: int, lines: int) -> int:
    """Open with the index, seek to an uncompressed offset, read `lines` lines from there."""
    import indexed_gzip

    with indexed_gzip.IndexedGzipFile(str(path), index_file=str(index)) as file:
        file.seek(offset)
        file.readline()  # to the next line start
        count = 0
        for _ in file:
            count += 1
            if count == lines:
                break
    return count


def rapidgzip_count(path: Path, threads: int) -> int:
    import rapidgzip

    newlines = 0
    with rapidgzip.open(str(path), parallelization=threads) as file:
        while block := file.read(1 << 22):
            newlines += block.count(b"\n")
    return newlines


def pipeline(path: Path, work: Path) -> int:
    """The whole scoring path with a stand-in model that costs next to nothing."""
    from benchmarks.helpers import ours
    from rescorer.scoring.settings import ScoreSettings
    from rescorer.scoring.table_rescoring import rescore_table

    vocabs = ours.load_shortlists(DEFAULT_TABLE, REPO / "benchmarks" / "results")
    summary = rescore_table(path, work / "out.gz", ours.tiny_bundle(*vocabs), ScoreSettings(force=True))
    return summary.lines_read


def assemble(work: Path) -> int:
    """Copy the last pipeline output into a new output as rank 0 copies units: bytes copied."""
    from rescorer.io.atomic_output import AtomicOutput

    source = work / "out.gz"
    with AtomicOutput(work / "assembled.gz", force=True, encoded=True) as output:
        output.copy_from(source, 0)
    return source.stat().st_size


def measure(path: Path, rounds: int) -> dict:
    """Median seconds of each way to read the table, rounds interleaved."""
    uncompressed = len(gzip.decompress(path.read_bytes()))
    parts = {"parse": lambda: parse_all(path), "skip (isal)": lambda: skip_all(path),
             "skip (zlib)": lambda: skip_all_zlib(path)}
    extra = {}
    try:
        import indexed_gzip  # noqa: F401

        parts["index build (1 MiB spacing)"] = lambda: indexed_gzip_build(path, 1 << 20)
    except ImportError:
        extra["indexed_gzip"] = "not installed"
    try:
        import rapidgzip  # noqa: F401

        parts["rapidgzip, 1 thread"] = lambda: rapidgzip_count(path, 1)
        parts["rapidgzip, 2 threads"] = lambda: rapidgzip_count(path, 2)
    except ImportError:
        extra["rapidgzip"] = "not installed"
    scratch = Path(tempfile.mkdtemp(prefix="reader-sharding-"))
    parts["pipeline (stand-in model)"] = lambda: pipeline(path, scratch)
    parts["assemble the units (gzip bytes)"] = lambda: assemble(scratch)
    seconds = {name: [] for name in parts}
    results = {}
    for _ in range(rounds):
        for name, work in parts.items():
            elapsed, results[name] = timed(work)
            seconds[name].append(elapsed)
    lines = results["parse"]
    assert results["skip (isal)"] == results["skip (zlib)"] == results["pipeline (stand-in model)"] == lines
    table = {name: {"seconds": statistics.median(values), "lines_per_s": lines / statistics.median(values),
                    "mb_per_s": uncompressed / statistics.median(values) / 1e6}
             for name, values in seconds.items()}
    copied = results.pop("assemble the units (gzip bytes)")
    table["assemble the units (gzip bytes)"] = {"seconds": statistics.median(seconds["assemble the units (gzip bytes)"]),
                                                 "gzip_mb_per_s": copied / statistics.median(
                                                     seconds["assemble the units (gzip bytes)"]) / 1e6}
    shutil.rmtree(scratch, ignore_errors=True)
    if "index build (1 MiB spacing)" in results:
        index = results["index build (1 MiB spacing)"]
        seeks = [timed(lambda: indexed_gzip_seek(path, index, uncompressed // 2, UNIT_LINES))[0]
                 for _ in range(rounds)]
        table["index: open, seek to the middle, read 200k lines"] = {"seconds": statistics.median(seeks)}
        table["index file"] = {"bytes": index.stat().st_size}
    return {"table": str(path), "lines": lines, "compressed_bytes": path.stat().st_size,
            "uncompressed_bytes": uncompressed, "parts": table, **extra}


def per_rank_seconds(result: dict, total_lines: float, world_size: int, model_pairs_per_s: float) -> dict:
    """Seconds for one rank of `world_size` to score its share of `total_lines`: its own lines at
    the slower of its CPU pipeline and its model, plus passing over the others' lines; and
    rank 0's assembly of the whole output afterwards."""
    parts = result["parts"]
    own = total_lines / world_size
    pipeline = parts["pipeline (stand-in model)"]["lines_per_s"]
    gzip_bytes_per_line = result["compressed_bytes"] / result["lines"] * 1.1  # one more column
    return {"own lines": own / min(pipeline, model_pairs_per_s),
            "passing over the rest": (total_lines - own) / parts["skip (isal)"]["lines_per_s"],
            "assembly on rank 0": total_lines * gzip_bytes_per_line / 1e6
            / parts["assemble the units (gzip bytes)"]["gzip_mb_per_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=500_000,
                        help="Measure on every k-th line of the table, this many (0: the whole table).")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--model-pairs-per-s", type=float, default=2.08e6,
                        help="A GPU's model-only rate for the estimate [default: the paper model's "
                             "190 MFLOP/pair at 40%% of an H100's 989 TFLOP/s bf16]")
    args = parser.parse_args()
    if args.lines:
        from benchmarks.drivers.ranks import table_slice

        results = REPO / "benchmarks" / "results"
        results.mkdir(parents=True, exist_ok=True)
        args.table = table_slice(args.table, args.lines, results)
    result = measure(args.table, args.rounds)
    print(f"{args.table.name}: {result['lines']:,} lines, {result['compressed_bytes'] / 1e6:.1f} MB "
          f"gzipped, {result['uncompressed_bytes'] / 1e6:.1f} MB of text; medians of {args.rounds} "
          f"interleaved rounds, one core")
    print(f"{'part':52} {'seconds':>8} {'lines/s':>12} {'MB/s':>7}")
    for name, part in result["parts"].items():
        if "gzip_mb_per_s" in part:
            print(f"{name:52} {part['seconds']:8.2f} {'':>12} {part['gzip_mb_per_s']:7.0f} (of gzip)")
        elif "seconds" in part and "lines_per_s" in part:
            print(f"{name:52} {part['seconds']:8.2f} {part['lines_per_s']:12,.0f} {part['mb_per_s']:7.0f}")
        elif "seconds" in part:
            print(f"{name:52} {part['seconds']:8.2f}")
        else:
            print(f"{name:52} {part['bytes']:,} bytes")
    for name in ("indexed_gzip", "rapidgzip"):
        if name in result:
            print(f"{name}: {result[name]}")
    print(f"\nOne rank of W scoring N lines (s), its model at {args.model_pairs_per_s:,.0f} pairs/s:")
    for total in (2.2e6, 1e8):
        for world in (1, 8, 64):
            times = per_rank_seconds(result, total, world, args.model_pairs_per_s)
            print(f"  N={total:>11,.0f}, W={world:2d}: " + ", ".join(f"{name} {value:,.0f}"
                                                             for name, value in times.items()) +
                  f"; total {sum(times.values()):,.0f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
