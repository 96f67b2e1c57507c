"""Every command that runs a model says torch's thread count in its settings signature
(`threads:N`, rescorer/cli/reporting.py): its numbers can depend on it, so a log must say it."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

import pytest
import torch

from rescorer.cli.main import main
from tests.helpers import REPO, first_lines, invoke

TEXT = b"".join(f"le {w} de la terre et {w} du ciel .\n".encode() for w in ("fils", "roi", "dieu") * 10)


@pytest.fixture()
def three_threads():
    """torch on 3 threads while the test runs (conftest's 1 afterwards): a count no default gives."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


@pytest.fixture()
def files(tmp_path, example_table, tiny_model_path):
    table = first_lines(example_table, 40, tmp_path / "t.gz")
    (tmp_path / "text.fr").write_bytes(TEXT)
    (tmp_path / "input.en").write_text("the lord\nand god said\n")
    (tmp_path / "in.nbest").write_text("0 ||| le fils de la terre ||| LM0= -10 ||| -1\n"
                                       "1 ||| le roi du ciel . ||| LM0= -9 ||| -1\n")
    return {"table": table, "model": tiny_model_path, "dir": tmp_path}


def commands(files) -> dict:
    d, table, model = files["dir"], files["table"], files["model"]
    return {
        "train": ["train", table, "-o", d / "m.pt", "--preset", "tiny", "--max-updates", "2", "--valid-pairs", "4"],
        "train --lm": ["train", "--lm", d / "text.fr", "-o", d / "lm.pt", "--preset", "tiny", "--max-updates", "2",
                       "--valid-pairs", "3", "--batch-size", "8"],
        "run": ["run", table, "-o", d / "run.gz", "--preset", "tiny", "--max-updates", "2", "--valid-pairs", "4"],
        "score": ["score", table, "--model", model, "-o", d / "o.gz"],
        "translate": ["translate", model, "--input", d / "input.en", "-o", d / "out.fr", "--beam", "2"],
        "generate": ["generate", model, "--source", "the lord", "--samples", "2", "--beam", "2"],
        "top-targets": ["top-targets", table, "--model", model, "--num-sources", "2", "--min-targets", "1"],
        "moses rescore-nbest": ["moses", "rescore-nbest", d / "in.nbest", "--input", d / "input.en", "--model",
                                model, "--mode", "sentence", "-o", d / "out.nbest"],
    }


@pytest.mark.parametrize("command", ["train", "train --lm", "run", "score", "translate", "generate", "top-targets",
                                     "moses rescore-nbest"])
def test_every_signature_says_the_thread_count(files, three_threads, command):
    result = invoke(main, *commands(files)[command], catch_exceptions=True)
    assert result.exit_code == 0, result.output
    signatures = [line for line in result.stderr.splitlines() if "|job:" in line]
    assert signatures, result.stderr
    for line in signatures:
        assert f"|threads:{three_threads}|torch:" in line, line
    if command == "run":  # the main job's two halves, each with its signature
        assert [line.split("|")[1] for line in signatures] == ["job:train", "job:score"]


def test_the_thread_count_is_torchs_from_omp_num_threads(files):
    """In a process of its own, as a user runs it: OMP_NUM_THREADS=2 is threads:2."""
    env = {**os.environ, "OMP_NUM_THREADS": "2", "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-m", "rescorer", "score", files["table"], "--model", files["model"],
                          "-o", files["dir"] / "o2.gz"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert any("|job:score|" in line and "|threads:2|torch:" in line for line in run.stderr.splitlines()), run.stderr
    assert len(gzip.open(files["dir"] / "o2.gz").read().splitlines()) == 40
