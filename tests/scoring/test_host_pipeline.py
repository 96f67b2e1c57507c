"""Host worker processes (`--host-workers N`) write what the one-process path writes, byte for
byte; a run killed while they work resumes to the same bytes; and a failure in a worker (a bad
line, a worker killed) ends the run as the one-process path ends: one line naming the file and
the line, no output."""

import contextlib
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
from concurrent.futures.process import BrokenProcessPool

import pytest
import torch

from rescorer.models.model_files import load_model
from rescorer.scoring.chunk_preparation import PreparationSettings
from rescorer.scoring.host_pipeline import _spawned_workers, default_host_workers
from rescorer.scoring.settings import ScoreSettings
from rescorer.scoring.table_rescoring import rescore_table
from tests.distributed_runs import assert_no_rescore_traceback, one_thread_env, rescore
from tests.helpers import RESCORE
from tests.scoring.pool_tasks import pid_after

UNIT, CHUNK = 500, 300  # several chunks per unit, the last one short
BAD_LINES = {777: b"only two ||| fields", 2501: b"x ||| y ||| not-a-number 1 1 1"}


def with_lines(example_table, bad_lines: dict, copies: int = 1) -> bytes:
    """The example table (`copies` times over) with `bad_lines` inserted at their line numbers, gzipped."""
    lines = gzip.decompress(example_table.read_bytes()).split(b"\n")[:-1] * copies
    for line_no, bad in sorted(bad_lines.items()):
        lines.insert(line_no - 1, bad)
    return gzip.compress(b"\n".join(lines) + b"\n")


@pytest.fixture(scope="module")
def table(tmp_path_factory, example_table):
    """4,002 lines: the example table and two bad lines."""
    path = tmp_path_factory.mktemp("table") / "t.gz"
    path.write_bytes(with_lines(example_table, BAD_LINES))
    return path


def scored(table, bundles, directory, workers: int, **settings) -> tuple[bytes, bytes]:
    """(output bytes, reject bytes) of one unit run; the same paths every time (the gzip header
    names the output)."""
    output, rejects = directory / "o.gz", directory / "rej.txt"
    rescore_table(table, output, bundles, ScoreSettings(
        force=True, host_workers=workers, unit_lines=UNIT, chunk_size=CHUNK, precision="fp32",
        reject_path=rejects, **settings))
    written = output.read_bytes(), rejects.read_bytes()
    output.unlink()
    rejects.unlink()
    return written


# (case, settings, models: "word" the tiny word model, "subword" a model over subword pieces)
CASES = [
    ("one model", {}, ["word"]),
    ("word penalty, per-word columns, log p", dict(unk_penalty=True, per_word=True, score_format="log"), ["word"]),
    ("two models of different shortlists, a column each", {}, ["word", "subword"]),
    ("an ensemble", dict(ensemble=True), ["word", "word"]),
]


@pytest.mark.parametrize("case, settings, models", CASES, ids=[case for case, _, _ in CASES])
def test_host_workers_write_the_one_process_bytes(tmp_path, table, tiny_bundle, subword_bundle, case, settings,
                                                  models):
    bundles = [{"word": tiny_bundle, "subword": subword_bundle}[model] for model in models]
    one_process = scored(table, bundles, tmp_path, 0, **settings)
    assert scored(table, bundles, tmp_path, 2, **settings) == one_process
    assert one_process[1] == b"\n".join(BAD_LINES.values()) + b"\n"
    assert len(gzip.decompress(one_process[0]).splitlines()) == 4000


def test_more_than_a_write_buffer_per_unit_gives_the_same_gzip_members(tmp_path, example_table, tiny_bundle):
    """Units of several MiB: the output is flushed to the compressor after the same lines."""
    big = tmp_path / "big.gz"
    big.write_bytes(with_lines(example_table, {}, copies=6))
    settings = dict(force=True, precision="fp32", unit_lines=20000)
    outputs = []
    for workers in (0, 1):
        rescore_table(big, tmp_path / "o.gz", tiny_bundle, ScoreSettings(host_workers=workers, **settings))
        outputs.append((tmp_path / "o.gz").read_bytes())
    assert len(gzip.decompress(outputs[0])) > 2 << 20
    assert outputs[1] == outputs[0]


def test_workers_do_not_import_the_main_script(tmp_path, monkeypatch, table, tiny_bundle):
    """multiprocessing has a spawned process import the main script; `rescore`'s imports torch."""
    marker, script = tmp_path / "imported", tmp_path / "script.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    scored(table, [tiny_bundle], tmp_path, 1)
    assert not marker.exists()
    assert main.__file__ == str(script) and main.__spec__ is None


@pytest.fixture()
def workspace(tmp_path, table, tiny_model_path):
    shutil.copy(table, tmp_path / "t.gz")
    shutil.copy(tiny_model_path, tmp_path / "m.pt")
    return tmp_path


SCORING = ["--unk-penalty", "--unit-lines", UNIT, "--chunk-size", CHUNK]


def run(workspace, workers: int, *extra, env=None):
    return rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", *SCORING, "--host-workers", workers, *extra,
                   cwd=workspace, env=env)


@pytest.mark.parametrize("fault", ["mid-unit:3", "host-worker:2"])
def test_a_run_killed_with_its_host_workers_resumes_to_the_uninterrupted_bytes(workspace, fault):
    straight = run(workspace, 0, "--reject", "rej.txt")
    assert straight.returncode == 0, straight.stderr
    expected = (workspace / "o.gz").read_bytes(), (workspace / "rej.txt").read_bytes()
    (workspace / "o.gz").unlink()
    (workspace / "rej.txt").unlink()
    # mid-unit: the rank is killed (kill -9) while its workers work: they end with it (or
    # `rescore` would wait for them, as they hold its stderr). host-worker: a worker is killed.
    killed = run(workspace, 2, "--reject", "rej.txt", env=one_thread_env(RESCORE_FAULT=fault))
    assert not (workspace / "o.gz").exists() and not (workspace / "rej.txt").exists()
    if fault.startswith("mid-unit"):
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    else:
        assert killed.returncode == 1, killed.stderr
        assert_no_rescore_traceback(killed.stderr)
        last = killed.stderr.strip().splitlines()[-1]
        assert re.fullmatch(r"Error: a host worker process ended unexpectedly \(killed, or out of memory\?\); "
                            r"rerun with fewer --host-workers, or 0 to read and write in this process"
                            r"(; \d finished units? \(\d+ lines\) (is|are) kept in \S+: rerun with --resume to "
                            r"continue)?",
                            last), last
    resumed = run(workspace, 2, "--reject", "rej.txt", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert ((workspace / "o.gz").read_bytes(), (workspace / "rej.txt").read_bytes()) == expected
    assert sorted(path.name for path in workspace.iterdir()) == ["m.pt", "o.gz", "rej.txt", "t.gz"]


def test_when_a_worker_dies_the_pool_ends_the_busy_one_and_shuts_down():
    """One worker killed while the other works, with results queued behind it that no one will
    read: the pool terminates the other (SIGTERM) and shuts down. A worker that ignored SIGTERM
    finished its work, blocked handing back a result, and the run waited forever (a CI run)."""
    executor = _spawned_workers(2, PreparationSettings("t.gz", [], None, False))
    pids: set = set()
    deadline = time.monotonic() + 120
    while len(pids) < 2 and time.monotonic() < deadline:  # both workers started, initializer run
        pids |= {future.result() for future in [executor.submit(pid_after, 0.3) for _ in range(2)]}
    assert len(pids) == 2
    busy = [executor.submit(pid_after, 2) for _ in range(2)]
    queued = [executor.submit(bytes, 8 << 20) for _ in range(3)]  # far more than a pipe holds
    time.sleep(0.5)  # both workers are in their pid_after(2)
    killed, survivor = sorted(pids)
    os.kill(killed, signal.SIGKILL)
    shutdown = threading.Thread(target=executor.shutdown, daemon=True)
    shutdown.start()
    shutdown.join(timeout=60)
    hung = shutdown.is_alive()
    with contextlib.suppress(ProcessLookupError):
        os.kill(survivor, signal.SIGKILL)  # so that a failing run does not leave it behind
    assert not hung, "the pool's shutdown waited on its surviving worker"
    for future in busy + queued:
        with pytest.raises(BrokenProcessPool):
            future.result(timeout=0)


def test_sigterm_to_the_process_group_is_an_interrupt_that_resumes(tmp_path, example_table, tiny_model_path):
    """torchrun and Slurm send SIGTERM to the whole group, the host workers too: the run still
    ends as interrupted (exit 143), keeps its finished units, and resumes to the straight bytes."""
    (tmp_path / "t.gz").write_bytes(with_lines(example_table, BAD_LINES, copies=6))  # 48 units
    shutil.copy(tiny_model_path, tmp_path / "m.pt")
    straight = run(tmp_path, 2, "--reject", "rej.txt")
    assert straight.returncode == 0, straight.stderr
    expected = (tmp_path / "o.gz").read_bytes(), (tmp_path / "rej.txt").read_bytes()
    (tmp_path / "o.gz").unlink()
    (tmp_path / "rej.txt").unlink()
    command = [RESCORE, "score", "t.gz", "--model", "m.pt", "-o", "o.gz", *map(str, SCORING), "--host-workers",
               "2", "--reject", "rej.txt"]
    process = subprocess.Popen(command, cwd=tmp_path, env=one_thread_env(), start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    records = tmp_path / ".o.gz.partial"
    while process.poll() is None and len(list(records.glob("unit-*.json"))) < 2:
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGTERM)
    stderr = process.communicate(timeout=120)[1]
    assert process.returncode == 143, stderr
    assert_no_rescore_traceback(stderr)
    last = stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"rescore: interrupted \(SIGTERM\); \d+ finished units \(\d+ lines\) are kept in "
                        r"\S*\.o\.gz\.partial: rerun with --resume to continue", last), last
    resumed = run(tmp_path, 2, "--reject", "rej.txt", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert ((tmp_path / "o.gz").read_bytes(), (tmp_path / "rej.txt").read_bytes()) == expected


def test_a_bad_line_found_by_a_worker_is_the_one_process_error(workspace):
    """Without --reject, line 777 ends the run in unit 1: one line naming it, unit 0 kept."""
    errors = []
    for workers in (0, 2):
        failed = run(workspace, workers, "--force")
        assert failed.returncode == 1, failed.stderr
        assert_no_rescore_traceback(failed.stderr)
        assert not (workspace / "o.gz").exists()
        errors.append(failed.stderr.strip().splitlines()[-1])
    assert errors[1] == errors[0]
    assert errors[0].startswith("Error: t.gz:777: too few fields (expected at least 3 ' ||| ' fields, found 2); "
                                "1 finished unit (500 lines) is kept in"), errors[0]


@pytest.mark.parametrize("device, cores, local_ranks, workers", [
    ("cuda", 16, None, 14),  # one process: the cores less the model's and the reader's and writer's
    ("cuda", 16, "4", 2),  # four torchrun ranks share the host
    ("cuda", 2, None, 1),
    ("cpu", 16, None, 0),  # the model needs the cores
])
def test_default_host_workers(monkeypatch, device, cores, local_ranks, workers):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    if local_ranks is None:
        monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    else:
        monkeypatch.setenv("LOCAL_WORLD_SIZE", local_ranks)
    assert default_host_workers(device) == workers


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_host_workers_write_the_one_process_bytes_and_the_cpu_scores(tmp_path, table, tiny_model_path):
    cuda = load_model(tiny_model_path, torch.device("cuda"))
    settings = dict(score_format="log")
    one_process = scored(table, [cuda], tmp_path, 0, **settings)
    assert scored(table, [cuda], tmp_path, 2, **settings) == one_process
    cpu = scored(table, [load_model(tiny_model_path, torch.device("cpu"))], tmp_path, 0, **settings)
    cuda_lines, cpu_lines = (gzip.decompress(output).splitlines() for output in (one_process[0], cpu[0]))
    assert len(cuda_lines) == len(cpu_lines) == 4000
    for on_cuda, on_cpu in zip(cuda_lines, cpu_lines):
        cuda_fields, cpu_fields = on_cuda.split(b" ||| "), on_cpu.split(b" ||| ")
        assert cuda_fields[:2] + cuda_fields[3:] == cpu_fields[:2] + cpu_fields[3:]
        cuda_scores, cpu_scores = cuda_fields[2].split(), cpu_fields[2].split()
        assert cuda_scores[:-1] == cpu_scores[:-1]
        assert abs(float(cuda_scores[-1]) - float(cpu_scores[-1])) < 1e-4
