"""What of the README's demo repeats on this machine: its command run on 1 and on 2 threads, and
the figures a reader compares with the README's (held-out perplexity, the best update, the first
line's new score, `--precision auto`'s choice, a digest of the written table). The demo's small
batches let the CPU's matrix library split products differently by thread count and by CPU, so
the figures are kept per CPU: each run replaces this CPU's rows for that thread count and keeps
the other CPUs' rows, which are that CPU's to measure.

    python3 benchmarks/drivers/demo_repeat.py [--threads 1 --threads 2] [--out benchmarks/drivers/demo_repeat.tsv]
        [-- MORE RESCORE OPTIONS]

`digest without the new score` hashes every output line with its last score cut off: equal on
every row when only the new column moves (what the README says). The run's seconds are wall
clock on a machine that may be busy: compare them only within one run.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
EXAMPLE = REPO / "examples" / "phrase-table.gz"
DEMO_OPTIONS = ["--max-epochs", "50", "--batch-tokens", "500"]  # the README's demo line
COLUMNS = ("cpu", "threads", "torch", "options", "learning rate", "best held-out perplexity", "at update",
           "honest perplexity",
           "first line's new score", "precision auto", "digest of the table", "digest without the new score",
           "seconds")

from rescorer.runtime.cpu_features import cpu_features  # noqa: E402

SUMMARY = re.compile(r"valid perplexity ([\d.]+) \(update (\d+); honest ([\d.]+)")
PRECISION = re.compile(r"^precision auto: (\w+)", re.M)
# Where the CPU has no native bf16, auto is fp32 with no check to report: the scoring settings
# line's resolved precision says so.
SCORED_PRECISION = re.compile(r"\|job:score\|.*?\|precision:(\w+)\|")
RATE = re.compile(r"\|learning-rate:([^|]+)\|")  # the settings line's: the default changes with the recipe


def demo_row(threads: int, options: list, scratch: Path) -> dict:
    """Run the demo on `threads` threads in a fresh directory; its figures as a row."""
    out = scratch / f"t{threads}" / "phrase-table.rnn.gz"
    command = [sys.executable, "-m", "rescorer", str(EXAMPLE), "-o", str(out), *options]
    environment = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    run = subprocess.run(command, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"demo_repeat.py: the demo failed on {threads} thread(s):\n{run.stderr[-2000:]}")
    summary = SUMMARY.search(run.stderr)
    precision = PRECISION.search(run.stderr) or SCORED_PRECISION.search(run.stderr)
    lines = gzip.decompress(out.read_bytes()).splitlines()
    kept = hashlib.sha256(b"\n".join(cut_new_score(line)[0] for line in lines))
    return {"cpu": cpu_features().describe(), "threads": str(threads), "torch": torch_version(),
            "options": " ".join(options), "learning rate": RATE.search(run.stderr)[1],
            "best held-out perplexity": summary[1], "at update": summary[2],
            "honest perplexity": summary[3], "first line's new score": cut_new_score(lines[0])[1].decode(),
            "precision auto": precision[1] if precision else "-",
            "digest of the table": hashlib.sha256(b"\n".join(lines)).hexdigest()[:16],
            "digest without the new score": kept.hexdigest()[:16], "seconds": f"{seconds:.0f}"}


def cut_new_score(line: bytes) -> tuple[bytes, bytes]:
    """The line with the last score of its scores field cut off, and that score."""
    fields = line.split(b" ||| ")
    fields[2], score = fields[2].rsplit(b" ", 1)
    return b" ||| ".join(fields), score


def torch_version() -> str:
    import torch

    return torch.__version__


def merged(path: Path, rows: list) -> list:
    """The file's rows with this run's in place of the rows of the same CPU, threads, torch, options
    and learning rate (a row of an earlier default recipe stays until its CPU measures the new one)."""
    key = ("cpu", "threads", "torch", "options", "learning rate")
    new = {tuple(row[name] for name in key) for row in rows}
    kept = []
    if path.exists():
        lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
        header = lines[0].split("\t")
        kept = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
        kept = [row for row in kept if tuple(row[name] for name in key) not in new]
    return kept + rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, action="append", help="thread counts [1 and 2]")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("demo_repeat.tsv"))
    parser.add_argument("rescore_options", nargs="*", help="after --: in place of the README's demo options")
    arguments = parser.parse_args()
    options = arguments.rescore_options or DEMO_OPTIONS
    with tempfile.TemporaryDirectory() as scratch:
        rows = [demo_row(threads, options, Path(scratch)) for threads in arguments.threads or [1, 2]]
    table = merged(arguments.out, rows)
    text = "\t".join(COLUMNS) + "\n" + "".join("\t".join(row[name] for name in COLUMNS) + "\n" for row in table)
    arguments.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
