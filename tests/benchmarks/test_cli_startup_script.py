"""benchmarks/drivers/cli_startup.py: one round writes a row per case, the interpreter alone faster than
`import torch`, and `rescore --help` as a fraction of it."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "drivers" / "cli_startup.py"


def test_one_round_times_every_case(tmp_path):
    out = tmp_path / "startup.tsv"
    run = subprocess.run([sys.executable, SCRIPT, "--rounds", "1", "--out", out], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [line.split("\t") for line in out.read_text().splitlines() if not line.startswith("#")]
    assert rows[0][0] == "case" and len(rows) == 8
    by_case = {row[0]: row for row in rows[1:]}
    assert float(by_case["python3 -c 'import torch'"][4]) == 1.0
    assert float(by_case["python3 -c pass"][1]) < float(by_case["python3 -c 'import torch'"][1])
    assert "rescore --help" in by_case and out.read_text().splitlines()[-1].startswith("# 1 rounds")
