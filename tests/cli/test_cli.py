"""The installed `rescore` command end to end: exit codes, messages, outputs."""

import gzip
import os
import signal
import shutil
import subprocess

import pytest

from tests import helpers
from tests.helpers import first_lines, gz_lines, rescore

FAST_TRAINING = ["--preset", "tiny", "--max-updates", "20", "--valid-every", "10", "--valid-pairs", "100"]


@pytest.fixture(scope="module")
def small_table(example_table, tmp_path_factory):
    return first_lines(example_table, 600, tmp_path_factory.mktemp("table") / "pt.gz")


def test_main_job_trains_then_scores(small_table, tmp_path):
    out = tmp_path / "pt.rnn.gz"
    result = rescore(small_table, "-o", out, *FAST_TRAINING, "--unk-penalty")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pt.rnn.model.pt").is_file()
    lines, original = gz_lines(out), gz_lines(small_table)
    assert len(lines) == len(original) == 600
    assert [len(l.split(b" ||| ")[2].split()) for l in lines] == [6] * 600
    assert result.stderr.startswith("rescore ")
    assert "job:train" in result.stderr and "job:score" in result.stderr
    kept = [line for line in result.stderr.splitlines() if line.startswith("kept for more training")]
    assert len(kept) == 1 and f"{tmp_path / 'pt.rnn.model.pt.checkpoint'} (" in kept[0]
    assert kept[0].endswith(f"`rm -r {tmp_path / 'pt.rnn.model.pt.checkpoint'} "
                            f"{tmp_path / 'pt.rnn.model.pt.cache'}`")
    assert "lines in 600, out 600" in result.stderr
    assert "unigram" in result.stderr and "coverage" in result.stderr


def test_default_output_name_and_refusal_to_overwrite(small_table, tmp_path):
    table = tmp_path / "mine.gz"
    shutil.copy(small_table, table)
    assert rescore("-q", table, *FAST_TRAINING).returncode == 0
    assert (tmp_path / "mine.rnn.gz").is_file() and (tmp_path / "mine.rnn.model.pt").is_file()
    again = rescore("score", table, "--model", tmp_path / "mine.rnn.model.pt")
    assert again.returncode == 1
    assert "exists" in again.stderr and "--force" in again.stderr
    forced = rescore("-q", "score", table, "--model", tmp_path / "mine.rnn.model.pt", "--force")
    assert forced.returncode == 0 and forced.stderr == ""


def test_score_to_stdout_and_a_closed_pipe(tiny_model_path, small_table):
    result = rescore("-q", "score", small_table, "--model", tiny_model_path, "-o", "-")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 600
    piped = subprocess.run(f"'{helpers.RESCORE}' -q score '{small_table}' --model '{tiny_model_path}' -o - | head -2",
                           shell=True, capture_output=True, text=True)
    assert len(piped.stdout.splitlines()) == 2 and "Traceback" not in piped.stderr


@pytest.mark.parametrize("content, message", [
    (b"a ||| b ||| 0.5\nc ||| d\n", "bad.gz:2: too few fields"),
    (b"a ||| b ||| 0.5\n ||| d ||| 0.5\n", "bad.gz:2: empty source phrase"),
    (b"a ||| b ||| 0.5 0.5\nc ||| d ||| 0.5\n", "bad.gz:2:"),
    (b"a ||| b ||| half\n", "bad.gz:1: non-numeric score"),
    (b"", "empty"),
])
def test_bad_input_gives_one_line_and_no_output(tiny_model_path, tmp_path, content, message):
    table = tmp_path / "bad.gz"
    table.write_bytes(gzip.compress(content))
    result = rescore("-q", "score", table, "--model", tiny_model_path, "-o", tmp_path / "out.gz")
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "out.gz").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.gz"]


def test_truncated_gzip_is_reported(tiny_model_path, small_table, tmp_path):
    table = tmp_path / "cut.gz"
    table.write_bytes(small_table.read_bytes()[:-200])
    result = rescore("-q", "score", table, "--model", tiny_model_path, "-o", tmp_path / "out.gz")
    assert result.returncode == 1 and "cut.gz" in result.stderr and "truncated" in result.stderr
    assert not (tmp_path / "out.gz").exists()


def test_reject_file_keeps_every_line(tiny_model_path, tmp_path):
    table = tmp_path / "t.txt"
    table.write_bytes(b"a ||| b ||| 0.5\nnot a pair\nc ||| d ||| 0.25\n")
    result = rescore("score", table, "--model", tiny_model_path, "-o", tmp_path / "o.txt",
                     "--reject", tmp_path / "rej.txt")
    assert result.returncode == 0, result.stderr
    assert "lines in 3, out 2, 1 rejected" in result.stderr
    assert (tmp_path / "rej.txt").read_bytes() == b"not a pair\n"


@pytest.mark.parametrize("args", [["score"], ["--no-such-option", "x.gz"], ["score", "x.gz", "--model"]])
def test_bad_usage_exits_2(args):
    assert rescore(*args).returncode == 2


def test_bad_model_file_is_one_line(small_table, tmp_path):
    fake = tmp_path / "model.pt"
    fake.write_bytes(b"not a model")
    result = rescore("score", small_table, "--model", fake, "-o", tmp_path / "o.gz")
    assert result.returncode == 1 and "model.pt: not a model file (a rescorer model is a PyTorch archive" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_and_version():
    result = rescore("--help")
    assert result.returncode == 0
    for command in ("train", "score", "moses"):
        assert command in result.stdout
    assert rescore("--version").stdout.startswith("rescore, version ")


def test_another_architecture_trains_and_several_models_score_in_one_pass(tiny_model_path, small_table, tmp_path):
    luong = tmp_path / "luong.pt"
    trained = rescore("train", small_table, "-o", luong, "--arch", "luong", "--attention", "local-p",
                      "--cell", "gru", *FAST_TRAINING)
    assert trained.returncode == 0, trained.stderr
    assert "arch:luong|preset:tiny|cell:gru|" in trained.stderr and "attention:local-p" in trained.stderr
    out = tmp_path / "two.gz"
    scored = rescore("score", small_table, "--model", tiny_model_path, "--model", luong, "-o", out,
                     "--unk-penalty", "--score-format", "log")
    assert scored.returncode == 0, scored.stderr
    assert f"model:{tiny_model_path.name}(cho2014),luong.pt(luong)|" in scored.stderr
    assert f"mean log p {tiny_model_path.name} -" in scored.stderr and ", luong.pt -" in scored.stderr
    lines, original = gz_lines(out), gz_lines(small_table)
    assert len(lines) == 600
    for new, old in zip(lines, original):  # RNN columns in the order given, then the word penalty
        assert new.split(b" ||| ")[2].split()[:-3] == old.split(b" ||| ")[2].split()


@pytest.mark.parametrize("args, message", [
    (["--decoder-layers", "2"], "--decoder-layers does not apply to --arch cho2014 (only to luong, transformer)"),
    (["--arch", "luong", "--attention-window", "2"], "--attention-window applies to --attention local-m or local-p only"),
    (["--arch", "rnnsearch", "--cell", "lstm", "--gru-form", "cudnn"], "--gru-form applies to --cell gru only"),
])
def test_a_setting_the_architecture_does_not_take_is_a_one_line_usage_error(small_table, tmp_path, args, message):
    result = rescore("train", small_table, "-o", tmp_path / "m.pt", *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {message}")
    assert not (tmp_path / "m.pt").exists()


def test_each_pass_over_the_table_has_its_own_progress(small_table, tmp_path):
    """Two passes over a 600-line table read 600 lines each, never '1.2k lines' in one bar."""
    result = rescore("train", small_table, "-o", tmp_path / "m.pt", *FAST_TRAINING)
    assert result.returncode == 0, result.stderr
    passes = [line for line in result.stderr.splitlines() if line.startswith("reading table")]
    assert passes[-1].startswith("reading table (encoding pairs): 600 lines")
    assert any(line.startswith("reading table (counting words): 600 lines") for line in passes)


def test_run_resume_with_more_training_scores_again_after_a_kill_during_scoring(small_table, tmp_path):
    """Killed while scoring, then `--resume --max-updates` larger: training goes on, so the units
    the older model scored are scored again (not refused, nor retrained from scratch by --force)."""
    out = tmp_path / "pt.rnn.gz"
    args = [small_table, "-o", out, "--preset", "tiny", "--valid-every", "10", "--valid-pairs", "100",
            "--unit-lines", "100"]
    killed = rescore(*args, "--max-updates", "20", env={**os.environ, "RESCORE_FAULT": "after-record:0"})
    assert killed.returncode == -signal.SIGKILL
    resumed = rescore(*args, "--max-updates", "30", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "its units were scored by the model before this run's training; scoring starts over" in resumed.stderr
    assert "trained on" in resumed.stderr and "30 updates" in resumed.stderr
    assert len(gz_lines(out)) == 600
