"""Scoring on two ranks (torchrun, gloo, CPU): the same table as one rank, byte for byte; a rank
that dies fails the job in one line and --resume continues with any number of ranks; a bad line
is reported with its line number in the whole file; every gzip reader (zcat, Python, zlib's
gzread, which Moses uses) reads the multi-member output as the same lines."""

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.distributed_runs import assert_no_rescore_traceback, one_thread_env, our_lines, rescore, torchrun

UNIT = 300  # 14 units of the 4,000-line slice (plus the bad lines), dealt out to 2 ranks
BAD_LINES = {777: b"only two ||| fields", 2345: b"x ||| y ||| 1 1 1"}  # units 2 and 7 (ranks 0 and 1)
SCORING = ["--unk-penalty", "--unit-lines", UNIT, "--chunk-size", 128]


def write_table(directory: Path, example_table: Path, bad_lines: dict) -> None:
    lines = gzip.decompress(example_table.read_bytes()).split(b"\n")[:-1]
    for line_no, bad in sorted(bad_lines.items()):
        lines.insert(line_no - 1, bad)
    (directory / "t.gz").write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))


@pytest.fixture(scope="module")
def one_rank(tmp_path_factory, example_table, tiny_model_path):
    """One process: its output, its rejects and its summary."""
    directory = tmp_path_factory.mktemp("one")
    write_table(directory, example_table, BAD_LINES)
    result = rescore("score", "t.gz", "--model", tiny_model_path, "-o", "o.gz", "--reject", "rej.txt",
                     *SCORING, cwd=directory)
    assert result.returncode == 0, result.stderr
    return (directory / "o.gz").read_bytes(), (directory / "rej.txt").read_bytes(), result.stderr


@pytest.fixture()
def workspace(tmp_path, example_table, tiny_model_path):
    write_table(tmp_path, example_table, BAD_LINES)
    shutil.copy(tiny_model_path, tmp_path / "m.pt")
    return tmp_path


def summary_without_speed(stderr: str) -> str:
    line = next(line for line in stderr.splitlines() if line.startswith("lines in "))
    return line.split("; ")[0:3]


def test_two_ranks_write_the_table_one_rank_writes(workspace, one_rank):
    result = torchrun("score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "rej.txt", *SCORING,
                      cwd=workspace)
    assert result.returncode == 0, result.stderr
    output, rejects, summary = one_rank
    assert (workspace / "o.gz").read_bytes() == output  # the same members, hence the same lines
    assert len(gzip.decompress(output).split(b"\n")) == 4001
    assert (workspace / "rej.txt").read_bytes() == rejects == b"\n".join(BAD_LINES.values()) + b"\n"
    assert summary_without_speed(result.stderr) == summary_without_speed(summary)
    assert "lines in 4002, out 4000, 2 rejected to rej.txt" in result.stderr
    assert "|ranks:2|" in result.stderr and result.stderr.count("lines in ") == 1  # rank 0 reports
    assert sorted(path.name for path in workspace.iterdir()) == ["m.pt", "o.gz", "rej.txt", "t.gz"]


@pytest.mark.parametrize("resume_ranks", [2, 1])
def test_a_rank_killed_mid_run_then_resume_with_any_number_of_ranks(workspace, one_rank, resume_ranks):
    killed = torchrun("score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "rej.txt", *SCORING,
                      cwd=workspace, env=one_thread_env(RESCORE_FAULT="mid-unit:9:1"))
    assert killed.returncode != 0
    assert_no_rescore_traceback(killed.stderr)
    ours = our_lines(killed.stderr)
    assert len(ours) == 1, killed.stderr  # rank 0's, and nothing from the other
    assert ".o.gz.partial: rerun with --resume to continue" in ours[0], ours
    assert not (workspace / "o.gz").exists()
    finished = sorted(int(p.stem[5:]) for p in (workspace / ".o.gz.partial").glob("unit-*.json"))
    assert 7 in finished and 9 not in finished  # rank 1's unit before; never the one it died in
    args = ("score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "rej.txt", *SCORING, "--resume")
    resumed = torchrun(*args, cwd=workspace) if resume_ranks == 2 else rescore(*args, cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert (workspace / "o.gz").read_bytes() == one_rank[0]
    assert (workspace / "rej.txt").read_bytes() == one_rank[1]
    assert "lines were done by the interrupted run" in resumed.stderr


def test_a_bad_line_is_reported_once_with_its_line_number_in_the_whole_file(workspace):
    result = torchrun("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, cwd=workspace)
    assert result.returncode != 0
    assert_no_rescore_traceback(result.stderr)
    ours = our_lines(result.stderr)
    assert len(ours) == 1, result.stderr
    # line 777 is in rank 0's unit 2, line 2345 in rank 1's unit 7: whichever rank finds its bad
    # line first fails the job, with that line's number in the whole file
    assert ours[0].startswith(("Error: t.gz:777: too few fields (expected at least 3 ' ||| ' fields, found 2)",
                               "Error: t.gz:2345: wrong number of scores (expected 5 like the first good")), ours
    assert not (workspace / "o.gz").exists()


def test_only_rank_1_sees_its_bad_line(workspace, example_table):
    write_table(workspace, example_table, {2345: BAD_LINES[2345]})
    result = torchrun("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, cwd=workspace)
    ours = our_lines(result.stderr)
    assert result.returncode != 0 and len(ours) == 1, result.stderr
    assert ours[0].startswith("Error: t.gz:2345: wrong number of scores"), ours


C_READER = r"""
#include <stdio.h>
#include <zlib.h>
/* Reads a gzip file the way Moses' InputFileStream does (gzopen/gzread through zlib). */
int main(int argc, char **argv) {
    char line[1 << 16];
    gzFile file = gzopen(argv[1], "rb");
    if (!file) return 2;
    while (gzgets(file, line, sizeof line)) fputs(line, stdout);
    return gzclose(file) == Z_OK ? 0 : 3;
}
"""


@pytest.fixture(scope="module")
def zlib_reader(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    directory = tmp_path_factory.mktemp("zlib")
    (directory / "read.c").write_text(C_READER)
    built = subprocess.run([compiler, "-O1", "-o", str(directory / "read"), str(directory / "read.c"), "-lz"],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot build against zlib: {built.stderr.strip()[:200]}")
    return directory / "read"


def test_moses_zcat_and_python_read_every_line_of_the_multi_member_output(tmp_path, one_rank, zlib_reader):
    output = tmp_path / "o.gz"
    output.write_bytes(one_rank[0])
    assert output.read_bytes().count(b"\x1f\x8b\x08") >= 14  # one member per unit
    python = gzip.decompress(output.read_bytes())
    zcat = subprocess.run(["zcat", str(output)], capture_output=True, check=True).stdout
    moses = subprocess.run([str(zlib_reader), str(output)], capture_output=True, check=True).stdout
    assert python.split(b"\n") == zcat.split(b"\n") == moses.split(b"\n")
    assert len(python.split(b"\n")) == 4001
