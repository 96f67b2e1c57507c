"""benchmarks/studies/proxy/main_job_columns.sh: a main job's figures land in OUT/NAME without
the machine's paths, and a rerun does not run the job again."""

import json
import subprocess
from pathlib import Path

from tests.helpers import study_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "proxy" / "main_job_columns.sh"


def main_job(example_table, tmp_path):
    return study_script("main_job_columns.sh", example_table, tmp_path / "work", tmp_path / "out", "quick", "--",
                        "--preset", "tiny", "--batch-tokens", "500", "--max-updates", "10", seeds="1", PROXY="no")


def test_a_main_job_is_recorded_without_machine_paths_and_not_run_again(example_table, tmp_path):
    first = main_job(example_table, tmp_path)
    assert first.returncode == 0, first.stderr
    recorded = (tmp_path / "out" / "quick" / "main-job.json").read_text()
    figures = json.loads(recorded)
    assert str(tmp_path) not in recorded and figures["model"] == "WORK/quick/job/out.model.pt"
    assert figures["command"].endswith("-o OUT --preset tiny --batch-tokens 500 --max-updates 10")
    assert figures["updates"] == 10 and figures["lines_out"] == 4000
    assert set(figures["seconds"]) == {"read and cache", "train", "score", "write", "total"}
    model = tmp_path / "work" / "quick" / "job" / "out.model.pt"
    stamp = model.stat().st_mtime_ns
    again = main_job(example_table, tmp_path)
    assert again.returncode == 0, again.stderr
    assert model.stat().st_mtime_ns == stamp
    assert (tmp_path / "out" / "quick" / "main-job.json").read_text() == recorded


def test_without_its_arguments_it_says_how_to_call_it(tmp_path):
    for arguments in ([str(tmp_path)], [str(tmp_path), "out", "name", "--preset"]):
        called = subprocess.run(["bash", str(SCRIPT), *arguments], capture_output=True, text=True)
        assert called.returncode == 2 and "main_job_columns.sh WORK OUT NAME" in called.stdout


def test_the_speed_rows_script_runs_its_main_job_the_same_way(example_table, tmp_path):
    """main_job_row.sh (the speed table's rows) times its job through main_job_columns.sh: the same
    figures without machine paths, and a usage message without its arguments."""
    ran = study_script("main_job_row.sh", example_table, tmp_path / "work", "quick", tmp_path / "out",
                       tmp_path / "unused.scored.gz", "--", "--preset", "tiny", "--batch-tokens", "500",
                       "--max-updates", "10", seeds="1", PROXY="no")
    assert ran.returncode == 0, ran.stderr
    recorded = (tmp_path / "out" / "quick" / "main-job.json").read_text()
    assert str(tmp_path) not in recorded and json.loads(recorded)["model"] == "WORK/quick/job/out.model.pt"
    assert json.loads(recorded)["updates"] == 10
    called = subprocess.run(["bash", str(SCRIPT.parent / "main_job_row.sh"), str(tmp_path)], capture_output=True, text=True)
    assert called.returncode == 2 and "main_job_row.sh WORK NAME OUT SCORED -- RESCORE OPTIONS" in called.stdout
