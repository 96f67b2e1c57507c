"""benchmarks/studies/proxy/precision_columns.py: the figures `--precision auto` checks, computed from a
scored table's columns, and a bad column list refused in one line."""

import gzip
import math
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "proxy" / "precision_columns.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_mean_delta_and_best_kept_come_from_the_columns(tmp_path):
    table = tmp_path / "scored.gz"
    rows = [("a", "x", (0.5, 0.25, 0.5)),   # fp32, bf16, int8 of one model
            ("a", "y", (0.25, 0.5, 0.25)),  # bf16 swaps a's best target, int8 keeps it
            ("b", "z", (0.1, 0.1, 0.1))]
    with gzip.open(table, "wt") as out:
        for src, tgt, scores in rows:
            out.write(f"{src} ||| {tgt} ||| 0.5 {' '.join(map(str, scores))} ||| 0-0 ||| 1 1 1\n")
    result = run(table, "m=2,3,4")
    assert result.returncode == 0, result.stderr
    header, bf16, int8 = result.stdout.splitlines()
    delta = 2 * math.log(2) / 3  # two pairs moved by log 2, one not
    assert bf16.split("\t") == ["m", "bf16", "3", f"{delta:.4f}", "0.0000", "1", "no"]
    assert int8.split("\t") == ["m", "int8", "3", "0.0000", "1.0000", "1", "yes"]


def test_a_bad_column_list_is_refused_in_one_line(tmp_path):
    result = run(tmp_path / "any.gz", "m=2,3")
    assert result.returncode != 0
    assert result.stderr.strip() == "precision_columns.py: 'm=2,3': expected MODEL=FP32,BF16,INT8 (score columns, 1 the first)"


def test_a_missing_table_or_column_is_named(tmp_path):
    missing = run(tmp_path / "nope.gz", "m=2,3,4")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert missing.stderr.startswith(f"precision_columns.py: {tmp_path / 'nope.gz'}: cannot open")
    table = tmp_path / "scored.gz"
    with gzip.open(table, "wt") as out:
        out.write("a ||| x ||| 0.5 0.25 ||| 0-0\n")
    short = run(table, "m=2,3,4")
    assert short.stderr.strip() == f"precision_columns.py: m=2,3,4: {table} has 2 scores a line"
