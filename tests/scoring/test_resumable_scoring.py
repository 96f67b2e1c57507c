"""Scoring in units: a run killed anywhere (kill -9, SIGTERM) and resumed writes the same table
as a run that was never interrupted, and redoes at most the unit it was in."""

import gzip
import re
import shutil
import signal

import pytest

from tests.distributed_runs import one_thread_env, rescore

UNIT = 500
BAD_LINES = {777: b"only two ||| fields", 2501: b"x ||| y ||| not-a-number 1 1 1"}


@pytest.fixture(scope="module")
def table_bytes(example_table) -> bytes:
    """The real 4,000-line slice with two bad lines inserted (lines 777 and 2501): 9 units."""
    lines = gzip.decompress(example_table.read_bytes()).split(b"\n")[:-1]
    for line_no, bad in sorted(BAD_LINES.items()):
        lines.insert(line_no - 1, bad)
    return gzip.compress(b"\n".join(lines) + b"\n")


SCORING = ["--unk-penalty", "--reject", "rej.txt", "--unit-lines", UNIT]


@pytest.fixture(scope="module")
def straight(tmp_path_factory, table_bytes, tiny_model_path):
    """An uninterrupted run: (output bytes, reject bytes, summary line)."""
    directory = tmp_path_factory.mktemp("straight")
    (directory / "t.gz").write_bytes(table_bytes)
    result = rescore("score", "t.gz", "--model", tiny_model_path, "-o", "o.gz", *SCORING, cwd=directory)
    assert result.returncode == 0, result.stderr
    return (directory / "o.gz").read_bytes(), (directory / "rej.txt").read_bytes(), result.stderr


@pytest.fixture()
def workspace(tmp_path, table_bytes, tiny_model_path):
    (tmp_path / "t.gz").write_bytes(table_bytes)
    shutil.copy(tiny_model_path, tmp_path / "m.pt")
    return tmp_path


def killed_run(workspace, fault: str, signal_name: str = "SIGKILL"):
    env = one_thread_env(RESCORE_FAULT=fault, RESCORE_FAULT_SIGNAL=signal_name)
    return rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, cwd=workspace, env=env)


def finished_units(workspace) -> list[int]:
    return sorted(int(path.stem.split("-")[1]) for path in (workspace / ".o.gz.partial").glob("unit-*.json"))


# (where the run is killed, the units finished when it dies)
KILL_POINTS = [
    ("mid-unit:0", []),
    ("mid-unit:3", [0, 1, 2]),
    ("before-record:2", [0, 1]),  # unit 2's data is durable, its record is not: redone
    ("after-record:4", [0, 1, 2, 3, 4]),
    ("after-record:8", list(range(9))),  # every unit done, killed before the output is assembled
]


@pytest.mark.parametrize("fault, finished", KILL_POINTS, ids=[point for point, _ in KILL_POINTS])
def test_kill_9_then_resume_writes_the_uninterrupted_table(workspace, straight, fault, finished):
    killed = killed_run(workspace, fault)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not (workspace / "o.gz").exists() and not (workspace / "rej.txt").exists()
    assert finished_units(workspace) == finished
    resumed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--resume", cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    output, rejects, summary = straight
    assert (workspace / "o.gz").read_bytes() == output  # the same gzip members, byte for byte
    assert (workspace / "rej.txt").read_bytes() == rejects == b"\n".join(BAD_LINES.values()) + b"\n"
    assert "lines in 4002, out 4000, 2 rejected to rej.txt" in resumed.stderr
    done = sum(min(UNIT, 4002 - unit * UNIT) for unit in finished)
    assert (f"{done} lines were done by the interrupted run" in resumed.stderr) == bool(done)
    assert sorted(path.name for path in workspace.iterdir()) == ["m.pt", "o.gz", "rej.txt", "t.gz"]


def test_sigterm_keeps_the_finished_units_and_says_so(workspace, straight):
    interrupted = killed_run(workspace, "after-record:2", "SIGTERM")
    assert interrupted.returncode == 143, interrupted.stderr
    last = interrupted.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"rescore: interrupted \(SIGTERM\); \d finished units? \(\d+ lines\) (is|are) kept in "
                        r"\S*\.o\.gz\.partial: rerun with --resume to continue", last), last
    assert finished_units(workspace)[:3] == [0, 1, 2]
    resumed = rescore("-q", "score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--resume", cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert (workspace / "o.gz").read_bytes() == straight[0]


def test_a_leftover_partial_run_needs_resume_or_force(workspace, straight):
    assert killed_run(workspace, "after-record:2").returncode == -signal.SIGKILL
    before = sorted((path.name, path.stat().st_mtime_ns) for path in (workspace / ".o.gz.partial").iterdir())
    refused = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, cwd=workspace)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        "Error: o.gz: an interrupted run left 3 finished units (1500 lines) in .o.gz.partial; pass "
        "--resume to continue it, or --force to start over")
    assert sorted((path.name, path.stat().st_mtime_ns) for path in (workspace / ".o.gz.partial").iterdir()) == before
    forced = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--force", cwd=workspace)
    assert forced.returncode == 0, forced.stderr
    assert "done by the interrupted run" not in forced.stderr
    assert (workspace / "o.gz").read_bytes() == straight[0] and not (workspace / ".o.gz.partial").exists()


def test_resume_with_nothing_to_resume_starts_from_the_first_line(workspace, straight):
    result = rescore("-q", "score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--resume", cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert (workspace / "o.gz").read_bytes() == straight[0]


def test_plain_output_is_resumable_too(workspace, straight):
    plain = gzip.decompress(straight[0])
    killed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.txt", *SCORING, cwd=workspace,
                     env=one_thread_env(RESCORE_FAULT="after-record:3"))
    assert killed.returncode == -signal.SIGKILL
    assert sorted(path.name for path in (workspace / ".o.txt.partial").glob("unit-*"))[:2] == [
        "unit-000000.json", "unit-000000.txt"]
    resumed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.txt", *SCORING, "--resume", cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert (workspace / "o.txt").read_bytes() == plain


def test_a_signal_once_the_output_is_in_place_changes_nothing(workspace, straight):
    """SIGTERM after the output is renamed into place, before .o.gz.partial/ is removed, or after
    the summary line: the run has done its work, so it ends as a success and cleans up."""
    for point in ("after-output:0", "after-summary:0"):
        finished = killed_run(workspace, point, "SIGTERM")
        assert finished.returncode == 0, finished.stderr
        assert "interrupted" not in finished.stderr and "Exception ignored" not in finished.stderr
        assert "lines in 4002, out 4000, 2 rejected to rej.txt" in finished.stderr
        assert (workspace / "o.gz").read_bytes() == straight[0]
        assert sorted(path.name for path in workspace.iterdir()) == ["m.pt", "o.gz", "rej.txt", "t.gz"]
        for name in ("o.gz", "rej.txt"):
            (workspace / name).unlink()


def test_a_kill_once_the_output_is_in_place_is_cleaned_by_the_next_run(workspace, straight):
    """kill -9 between the rename and the clean-up: the next run sees that the partial directory
    is older than the finished output, removes it, and --resume has nothing left to do."""
    killed = killed_run(workspace, "after-output:0")
    assert killed.returncode == -signal.SIGKILL
    assert (workspace / "o.gz").read_bytes() == straight[0] and (workspace / ".o.gz.partial").is_dir()
    resumed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--resume", cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert ".o.gz.partial: removed; the run that left it had finished o.gz" in resumed.stderr
    assert resumed.stderr.strip().splitlines()[-1] == "o.gz is complete: nothing to resume"
    assert (workspace / "o.gz").read_bytes() == straight[0]
    assert sorted(path.name for path in workspace.iterdir()) == ["m.pt", "o.gz", "rej.txt", "t.gz"]


def test_a_new_run_over_an_older_output_keeps_its_own_partial_directory(workspace, straight):
    """With --force over an older finished output, an interrupted run's units are newer than the
    output: they are this run's, kept for --resume, not taken for a finished run's leftovers."""
    (workspace / "o.gz").write_bytes(straight[0])
    killed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--force", cwd=workspace,
                     env=one_thread_env(RESCORE_FAULT="after-record:2"))
    assert killed.returncode == -signal.SIGKILL
    resumed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--resume", "--force",
                      cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert "1500 lines were done by the interrupted run" in resumed.stderr


def test_a_finished_unit_damaged_on_disk_is_scored_again(workspace, straight):
    """One byte of a finished unit flipped, its size kept: its checksum tells, and --resume scores
    it again instead of assembling a damaged gzip member into the output."""
    assert killed_run(workspace, "after-record:4").returncode == -signal.SIGKILL
    unit = workspace / ".o.gz.partial" / "unit-000002.gz"
    data = bytearray(unit.read_bytes())
    data[len(data) // 2] ^= 0xFF
    unit.write_bytes(bytes(data))
    resumed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--resume", cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert "unit 2 was damaged on disk (its checksum differs from its record); it is scored again" in resumed.stderr
    assert "2000 lines were done by the interrupted run" in resumed.stderr  # units 0, 1, 3 and 4
    assert (workspace / "o.gz").read_bytes() == straight[0]


# `rescore` whose os.replace sends the process SIGTERM the moment it has renamed a file of the given
# name into place: the instant between the output's rename and the run's knowing it is done.
SIGNAL_AFTER_RENAME = """
import os, runpy, signal, sys
target, real_replace = sys.argv.pop(1), os.replace
def replace(src, dst, *args, **kwargs):
    real_replace(src, dst, *args, **kwargs)
    if os.path.basename(os.fspath(dst)) == target:
        os.kill(os.getpid(), signal.SIGTERM)
os.replace = replace
sys.argv[0] = "rescore"
runpy.run_module("rescorer", run_name="__main__")
"""


@pytest.mark.parametrize("table, streamed", [("t.gz", False), ("-", True)], ids=["units", "stdin"])
def test_a_signal_just_after_the_output_is_renamed_into_place_changes_nothing(workspace, straight, table, streamed):
    """Issue 32 case 24: SIGTERM landing right after the rename exited 143 with "9 finished units ...
    kept: rerun with --resume" (or "no output was written"), though the output was complete. The
    rename and the run's knowing it is done are one step: the signal waits, then changes nothing."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", SIGNAL_AFTER_RENAME, "o.gz", "score", table, "--model", "m.pt",
                          "-o", "o.gz", *map(str, SCORING)], cwd=workspace, env=one_thread_env(),
                         input=(workspace / "t.gz").read_bytes() if streamed else None, capture_output=True,
                         timeout=300)
    stderr = run.stderr.decode()
    assert run.returncode == 0, stderr
    assert "interrupted" not in stderr and "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("lines in 4002, out 4000, 2 rejected to rej.txt")
    if streamed:  # batched otherwise than in units: the same lines, scores equal but for the last digits
        lines, want = (gzip.decompress(data).splitlines() for data in ((workspace / "o.gz").read_bytes(), straight[0]))
        assert [line.split(b" ||| ")[:2] for line in lines] == [line.split(b" ||| ")[:2] for line in want]
    else:
        assert (workspace / "o.gz").read_bytes() == straight[0]
    assert (workspace / "rej.txt").read_bytes() == straight[1]
    assert sorted(path.name for path in workspace.iterdir()) == ["m.pt", "o.gz", "rej.txt", "t.gz"]
