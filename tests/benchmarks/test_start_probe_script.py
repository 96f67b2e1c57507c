"""benchmarks/studies/proxy/start_probe.sh: each seed's run gets one row with its recipe's name
and options, the options reach `rescore train`, and a rerun trains nothing again."""

import subprocess
from pathlib import Path

import pandas as pd

from tests.helpers import study_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "proxy" / "start_probe.sh"


def probe(example_table, tmp_path, *options):
    return study_script("start_probe.sh", example_table, tmp_path / "work", "20", tmp_path / "out", "slow",
                        "--preset", "tiny", "--valid-every", "10", "--learning-rate", "1e-3", *options, seeds="1 2")


def test_each_seed_gets_a_row_and_a_rerun_trains_nothing(example_table, tmp_path):
    first = probe(example_table, tmp_path)
    assert first.returncode == 0, first.stderr
    rows = pd.read_csv(tmp_path / "out" / "models.tsv", sep="\t")
    assert list(rows.seed) == [1, 2] and set(rows.recipe) == {"slow"}
    assert set(rows.options) == {"--preset tiny --valid-every 10 --learning-rate 1e-3"}
    assert list(rows.updates) == [20, 20] and (rows["best held-out perplexity"] > 1).all()
    log = (tmp_path / "work" / "slow-s1.train.log").read_text()
    assert "learning-rate:0.001" in log and "preset:tiny" in log  # the options reached the command
    assert rows["best held-out perplexity"].nunique() == 2  # two seeds, two models
    models = sorted((tmp_path / "work").glob("*.pt"))
    stamps = [model.stat().st_mtime_ns for model in models]
    again = probe(example_table, tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(pd.read_csv(tmp_path / "out" / "models.tsv", sep="\t")) == 2
    assert [model.stat().st_mtime_ns for model in models] == stamps


def test_without_its_arguments_it_says_how_to_call_it(tmp_path):
    called = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert called.returncode == 2 and "start_probe.sh WORK UPDATES OUT NAME" in called.stdout
