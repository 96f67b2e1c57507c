"""SIGINT or SIGTERM during training writes a checkpoint between two updates (far from the next
--checkpoint-every), says in one line where it is and how to resume, and exits 130 or 143; the
resumed run continues from that update and ends with the weights of a run never interrupted.
Phrase models, sentence models (--parallel) and the CSLM (--lm) share the trainer's loop."""

from __future__ import annotations

import gzip
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.model_files import read_model_file
from tests.helpers import EXAMPLE_TABLE, REPO

# --checkpoint-every keeps its default (1000): only the interrupt writes a checkpoint this early
FAST = ["--preset", "tiny", "--valid-every", "10", "--valid-pairs", "20", "--seed", "3", "--max-epochs", "100000"]


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """400 lines of the example table, and their two sides as a parallel corpus and a text."""
    directory = tmp_path_factory.mktemp("sources")
    lines = gzip.decompress(EXAMPLE_TABLE.read_bytes()).split(b"\n")[:400]
    (directory / "t.gz").write_bytes(gzip.compress(b"\n".join(lines) + b"\n", mtime=0))
    for side, name in ((0, "src.txt"), (1, "tgt.txt")):
        (directory / name).write_bytes(b"".join(line.split(b" ||| ")[side] + b"\n" for line in lines))
    return directory


KINDS = {  # what each kind trains on, and the command line that resumes it
    "phrase": (["t.gz"], "rescore train t.gz -o m.pt --resume"),
    "parallel": (["--parallel", "src.txt", "tgt.txt"], "rescore train --parallel src.txt tgt.txt -o m.pt --resume"),
    "lm": (["--lm", "tgt.txt"], "rescore train --lm tgt.txt -o m.pt --resume"),
}


def rescore(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rescorer", *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(), timeout=300)


def _env() -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}


def interrupted(args: list, signum: int, cwd: Path) -> tuple[int, str]:
    """Run `rescore train ARGS`, send `signum` once it has said its training speed (20 updates
    in), and return its exit status and stderr."""
    process = subprocess.Popen([sys.executable, "-m", "rescorer", "train", *args], cwd=cwd, env=_env(),
                               stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stderr], daemon=True)
    reader.start()
    said, deadline = [], time.time() + 240
    while time.time() < deadline:
        try:
            said.append(lines.get(timeout=1))
        except queue.Empty:
            continue
        if said[-1].startswith("training speed"):
            break
    assert said and said[-1].startswith("training speed"), "".join(said)
    process.send_signal(signum)
    process.wait(timeout=120)
    reader.join(timeout=10)
    while not lines.empty():
        said.append(lines.get())
    return process.returncode, "".join(said)


def weights(path: Path) -> dict:
    return read_model_file(path)["weights"]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_checkpoints_between_updates_and_resume_continues_from_it(sources, tmp_path, kind, signum):
    for name in ("t.gz", "src.txt", "tgt.txt"):
        (tmp_path / name).write_bytes((sources / name).read_bytes())
    source, resume_command = KINDS[kind]
    status, stderr = interrupted([*source, "-o", "m.pt", *FAST, "--max-updates", "100000"], signum, tmp_path)
    assert status == 128 + signum, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    found = re.fullmatch(rf"rescore: interrupted \({signal.Signals(signum).name}\); stopped at update (\d+); "
                         rf"m\.pt\.checkpoint holds it"
                         rf"({' and the pair cache m.pt.cache is kept' if kind != 'lm' else ''}): "
                         rf"`{re.escape(resume_command)}` continues from there", last)
    assert found, last
    stopped = int(found.group(1))
    assert 20 < stopped < 1000  # past the speed estimate, long before the first periodic checkpoint
    checkpoint = read_model_file(checkpoint_path_for(tmp_path / "m.pt"))  # a whole file, that loads
    assert checkpoint["training"]["state"]["updates"] == stopped
    assert "optimizer" in checkpoint and not (tmp_path / "m.pt").exists()
    assert not list(tmp_path.glob(".*.tmp-*")) and not list(tmp_path.glob(".*.lock"))

    total = str(stopped + 5)
    resumed = rescore("train", *source, "-o", "m.pt", "--resume", "--max-updates", total, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{total} updates (5 in this run), stopped: reached {total} updates" in resumed.stderr
    straight = rescore("train", *source, "-o", "straight.pt", *FAST, "--max-updates", total, cwd=tmp_path)
    assert straight.returncode == 0, straight.stderr
    resumed_weights, straight_weights = weights(tmp_path / "m.pt"), weights(tmp_path / "straight.pt")
    assert resumed_weights.keys() == straight_weights.keys()
    for name, tensor in straight_weights.items():  # the update was whole: the resumed run is the same run
        assert torch.equal(resumed_weights[name], tensor), name
