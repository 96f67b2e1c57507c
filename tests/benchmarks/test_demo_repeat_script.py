"""benchmarks/drivers/demo_repeat.py: a short demo run gives a row whose table, less the new score,
is the example table itself; a run replaces only this CPU's row for its thread count."""

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

from benchmarks.drivers.demo_repeat import COLUMNS, EXAMPLE, merged

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "drivers" / "demo_repeat.py"


def test_a_short_demo_run_leaves_every_byte_but_the_new_score(tmp_path):
    out = tmp_path / "repeat.tsv"
    other_cpu = dict(zip(COLUMNS, ["another CPU (avx2)", "1", "2.13.0+cpu", "x", *"-" * (len(COLUMNS) - 4)]))
    out.write_text("\t".join(COLUMNS) + "\n" + "\t".join(other_cpu.values()) + "\n")
    run = subprocess.run([sys.executable, SCRIPT, "--threads", "1", "--out", out, "--",
                          "--max-epochs", "1", "--batch-tokens", "500", "--valid-every", "30"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    header, kept, row = (line.split("\t") for line in out.read_text().splitlines())
    assert tuple(header) == COLUMNS and kept == list(other_cpu.values())
    row = dict(zip(header, row))
    example = hashlib.sha256(b"\n".join(gzip.decompress(EXAMPLE.read_bytes()).splitlines())).hexdigest()[:16]
    assert row["digest without the new score"] == example != row["digest of the table"]
    assert row["threads"] == "1" and float(row["best held-out perplexity"]) > 1
    assert float(row["learning rate"]) == 3e-3  # the default recipe's, from the settings line
    assert 0 < float(row["first line's new score"]) <= 1 and row["precision auto"] in ("bf16", "fp32")


def test_a_run_replaces_its_own_rows_only(tmp_path):
    path = tmp_path / "repeat.tsv"
    rows = [dict(zip(COLUMNS, [cpu, threads, "2.13.0", "demo", *[value] * (len(COLUMNS) - 4)]))
            for cpu, threads, value in (("amd", "1", "a"), ("amd", "2", "b"), ("intel", "1", "c"))]
    path.write_text("\t".join(COLUMNS) + "\n" + "".join("\t".join(row.values()) + "\n" for row in rows))
    new = dict(rows[1], seconds="new")
    assert merged(path, [new]) == [rows[0], rows[2], new]
    other_recipe = dict(rows[1], **{"learning rate": "0.003"})  # a new default keeps the old one's row
    assert merged(path, [other_recipe]) == [*rows, other_recipe]
