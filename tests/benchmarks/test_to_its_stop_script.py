"""benchmarks/studies/proxy/to_its_stop.sh: each seed trains until early stopping ends it (no
update bound), gets one row and a copy of its log without the machine's paths, and a rerun trains
nothing again."""

import subprocess
from pathlib import Path

import pandas as pd

from tests.helpers import study_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "proxy" / "to_its_stop.sh"


def to_its_stop(example_table, tmp_path):
    return study_script("to_its_stop.sh", example_table, tmp_path / "work", tmp_path / "out", "quick",
                        "--preset", "tiny", "--batch-tokens", "500", "--valid-every", "5", "--patience", "1",
                        "--learning-rate", "1e-2", seeds="1 2", PROXY="no")


def test_each_seed_runs_to_its_own_stop_and_a_rerun_trains_nothing(example_table, tmp_path):
    first = to_its_stop(example_table, tmp_path)
    assert first.returncode == 0, first.stderr
    rows = pd.read_csv(tmp_path / "out" / "models.tsv", sep="\t")
    assert list(rows.seed) == [1, 2] and set(rows.recipe) == {"quick"}
    assert set(rows.options) == {"--preset tiny --batch-tokens 500 --valid-every 5 --patience 1 --learning-rate 1e-2"}
    for seed in (1, 2):
        log = (tmp_path / "out" / f"quick-s{seed}.train.log").read_text()
        assert "stopped: validation perplexity did not improve 1 times" in log  # early stopping, not a bound
        assert "max-updates:-" in log and str(tmp_path) not in log and "WORK/quick" in log
    assert (rows.updates < 100).all() and (rows["best held-out perplexity"] > 1).all()
    stamps = [model.stat().st_mtime_ns for model in sorted((tmp_path / "work").glob("*.pt"))]
    again = to_its_stop(example_table, tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(pd.read_csv(tmp_path / "out" / "models.tsv", sep="\t")) == 2
    assert [model.stat().st_mtime_ns for model in sorted((tmp_path / "work").glob("*.pt"))] == stamps


def test_without_its_arguments_it_says_how_to_call_it(tmp_path):
    called = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert called.returncode == 2 and "to_its_stop.sh WORK OUT NAME" in called.stdout
