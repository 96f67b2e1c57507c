"""Issue 7, "nothing lost, no traceback": every way a realistic user can hurt a run, as a table.

Each case runs the installed `rescore` in a fresh directory holding a small table, a tiny model,
a bad table, compressed copies, a FIFO and a file that must not be touched. It checks the exit
status, a fragment of the one-line message, that no traceback was printed, that the files
named stay byte for byte as they were, and that the files named do not exist afterwards.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import os
import shutil
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests import helpers
from tests.fake_moses import FIXTURES
from tests.helpers import FIXTURE_FILES, dead_pid, gz_lines

FAST = ["--preset", "tiny", "--max-updates", "6", "--valid-every", "3", "--valid-pairs", "20",
        "--checkpoint-every", "3"]
BAD_LINE = b"only two ||| fields"


rescore = functools.partial(helpers.rescore, text=False, timeout=300)  # messages as bytes


@pytest.fixture(scope="module")
def table_lines(example_table) -> list[bytes]:
    return gz_lines(example_table, 300)


@pytest.fixture()
def workspace(tmp_path, table_lines, tiny_model_path) -> Path:
    """t.gz and its bz2/xz/zst copies, m.pt, bad.gz (line 3 bad), precious files, links, a FIFO."""
    text = b"\n".join(table_lines) + b"\n"
    (tmp_path / "t.gz").write_bytes(gzip.compress(text))
    (tmp_path / "t.bz2").write_bytes(bz2.compress(text))
    (tmp_path / "t.xz").write_bytes(lzma.compress(text))
    try:
        import zstandard

        (tmp_path / "t.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    except ImportError:
        pass
    (tmp_path / "garbage.gz").write_bytes(gzip.compress(text) + b"this is not gzip\n")
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"\n".join(table_lines[:2] + [BAD_LINE] + table_lines[2:])
                                                    + b"\n"))
    unknown = b" ".join(b"zz%d" % i for i in range(100))
    (tmp_path / "unk.txt").write_bytes(table_lines[0] + b"\n" + b"la ||| " + unknown + b" ||| 1 1 1 1\n")
    shutil.copy(tiny_model_path, tmp_path / "m.pt")
    (tmp_path / "precious.txt").write_bytes(b"keep me\n")
    (tmp_path / "a-file").write_bytes(b"a file, not a directory\n")
    os.symlink(tmp_path / "t.gz", tmp_path / "link.gz")
    os.link(tmp_path / "t.gz", tmp_path / "hard.gz")
    (tmp_path / "mydir").mkdir()
    (tmp_path / "mydir" / "notes.txt").write_bytes(b"mine\n")
    os.mkfifo(tmp_path / "fifo")
    ini = (FIXTURES / "model/moses.ini").read_text()
    (tmp_path / "moses.ini").write_text(ini)
    (tmp_path / "badtoken.ini").write_text(ini.replace("num-features=4", "num-features=4 oops"))
    return tmp_path


PARTIAL = [".o.gz.partial/journal.json", ".o.gz.partial/unit-000000.gz", ".o.gz.partial/unit-000000.json"]

# (case, arguments, exit status, message fragment, files unchanged, files that must not exist)
CASES = [
    # ---- data loss ----------------------------------------------------------------------
    ("train -o the table", ["train", "t.gz", "-o", "t.gz", *FAST], 1,
     "t.gz: the model would overwrite the phrase table", ["t.gz"], ["t.gz.checkpoint", "t.gz.cache"]),
    ("train -o a symlink to the table", ["train", "t.gz", "-o", "link.gz", *FAST], 1,
     "the model would overwrite the phrase table", ["t.gz"], []),
    ("train -o a hard link to the table", ["train", "t.gz", "-o", "hard.gz", "--force", *FAST], 1,
     "the model would overwrite the phrase table", ["t.gz"], []),
    ("score -o the model", ["score", "t.gz", "--model", "m.pt", "-o", "m.pt", "--force"], 1,
     "m.pt: the output would overwrite the model", ["m.pt"], []),
    ("--reject the model", ["score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "m.pt"], 1,
     "m.pt: the reject file would overwrite the model", ["m.pt"], ["o.gz"]),
    ("--reject the output", ["score", "bad.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "o.gz",
                             "--force"], 1,
     "o.gz: given both as the output and as the reject file", [], ["o.gz"]),
    ("--reject exists", ["score", "bad.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "precious.txt"], 1,
     "precious.txt: the reject file exists; pass --force", ["precious.txt"], ["o.gz"]),
    ("train over an existing model", ["train", "t.gz", "-o", "precious.txt", *FAST], 1,
     "precious.txt: the model exists; pass --force to replace it", ["precious.txt"],
     ["precious.txt.checkpoint"]),
    ("run over an existing model", ["t.gz", "-o", "precious", *FAST], 1,
     "precious.model.pt: the model exists; pass --force", ["precious.model.pt"], ["precious"]),
    ("train over a checkpoint", ["train", "t.gz", "-o", "new.pt", *FAST], 1,
     "new.pt.checkpoint: the checkpoint exists; pass --force to replace it, or --resume",
     ["new.pt.checkpoint"], ["new.pt"]),
    ("--cache-dir a directory of yours", ["train", "t.gz", "-o", "new.pt", "--cache-dir", "mydir", *FAST], 1,
     "mydir: exists and is not a rescorer pair cache", ["mydir/notes.txt"], ["new.pt"]),
    ("--cache-dir holding the table", ["train", "t.gz", "-o", "new.pt", "--cache-dir", ".", *FAST], 1,
     "the pair cache directory holds the phrase table", ["t.gz"], ["new.pt"]),
    ("-o inside --cache-dir", ["train", "t.gz", "-o", "c/new.pt", "--cache-dir", "c", *FAST], 1,
     "the model would lie inside the pair cache directory", [], ["c"]),
    ("-o /dev/null --force streams", ["score", "t.gz", "--model", "m.pt", "-o", "/dev/null", "--force"], 0,
     "wrote /dev/null", ["t.gz"], []),
    # ---- found too late -------------------------------------------------------------------
    ("train on a bad line", ["train", "bad.gz", "-o", "new.pt", *FAST], 1,
     "bad.gz:3: too few fields", ["bad.gz"], ["new.pt", "new.pt.checkpoint", "new.pt.cache"]),
    ("run on a bad line", ["bad.gz", "-o", "o.gz", *FAST], 1,
     "bad.gz:3: too few fields", ["bad.gz"], ["o.gz", "o.model.pt", "o.model.pt.checkpoint"]),
    ("run --reject trains on the good lines", ["bad.gz", "-o", "o.gz", "--reject", "rej.txt", *FAST], 0,
     "lines in 301, out 300, 1 rejected to rej.txt", ["bad.gz"], []),
    ("train -o under a file", ["train", "t.gz", "-o", "a-file/m.pt", *FAST], 1,
     "a-file is a file, not a directory", ["a-file"], []),
    ("created directories removed on failure", ["train", "bad.gz", "-o", "new/sub/m.pt", *FAST], 1,
     "bad.gz:3: too few fields", [], ["new"]),
    ("training needs a regular file", ["train", "fifo", "-o", "new.pt", *FAST], 2,
     "training reads its input several times", [], ["new.pt"]),
    # ---- tracebacks -----------------------------------------------------------------------
    ("unk penalty beyond float32", ["score", "unk.txt", "--model", "m.pt", "-o", "o.txt",
                                    "--unk-penalty"], 0,
     "1 line with more than 88 unknown target words got the word penalty exp(88)", [], []),
    ("resume with another optimizer", ["train", "t.gz", "-o", "done.pt", "--resume", "--optimizer", "adadelta",
                                       *FAST], 1,
     "optimizer 'adam' (checkpoint) vs 'adadelta' (now)", ["done.pt", "done.pt.checkpoint"], []),
    ("resume with another preset and seed", ["train", "t.gz", "-o", "done.pt", "--resume", "--preset",
                                             "small", "--seed", "9", "--max-updates", "9"], 1,
     "model embed-dim 32 (checkpoint) vs 128 (now)", ["done.pt.checkpoint"], []),
    ("resume on another table", ["train", "bad.gz", "-o", "done.pt", "--resume", *FAST], 1,
     "table-name 't.gz' (checkpoint) vs 'bad.gz' (now)", ["done.pt.checkpoint"], []),
    # issue 32: the shortlists are the checkpoint's, and so is the kind of training data
    ("resume with another shortlist size", ["train", "t.gz", "-o", "done.pt", "--resume", "--shortlist-size",
                                            "10", *FAST], 1,
     "shortlist-size 2000 (checkpoint) vs 10 (now)", ["done.pt", "done.pt.checkpoint"], []),
    ("resume with a corpus instead of the table", ["train", "--parallel", "s.en", "s.fr", "-o", "done.pt",
                                                   "--resume", *FAST], 1,
     "trained on phrase table 't.gz' (checkpoint) vs parallel corpus 's.en', 's.fr' (now)",
     ["done.pt", "done.pt.checkpoint"], []),
    ("resume without a checkpoint", ["train", "t.gz", "-o", "none.pt", "--resume", *FAST], 1,
     "none.pt.checkpoint: no checkpoint to resume from", [], ["none.pt"]),
    ("pickle that runs code", ["score", "t.gz", "--model", "evil.pt", "-o", "o.gz"], 1,
     "evil.pt: refused for safety: the file would load posix.system", [], ["o.gz"]),
    ("top-targets on an unscored table", ["top-targets", "unk.txt", "--column", "7"], 1,
     "unk.txt:1: expected scores at columns 7 and 3 (counted from 1)", [], []),
    ("preflight on a bad token", ["moses", "preflight", "badtoken.ini", "--base-dir", str(FIXTURES),
                                  "--no-check-install", "--dev", "t.gz", "bad.gz"], 1,
     "badtoken.ini:21: expected key=value after PhraseDictionaryMemory, found 'oops'", ["badtoken.ini"], []),
    ("preflight on a corrupt KenLM file", ["moses", "preflight", "badlm.ini", "--base-dir", ".",
                                           "--no-check-install"], 1,
     "LM0", ["badlm.ini"], []),
    ("add-feature -o a directory", ["moses", "add-feature", "moses.ini", "--table", "t5.gz", "-o", "mydir",
                                    "--base-dir", str(FIXTURES)], 1,
     "mydir: the moses.ini output is a directory", ["mydir/notes.txt"], []),
    ("add-feature --initial-weight nan", ["moses", "add-feature", "moses.ini", "--table", "t5.gz", "-o",
                                          "out.ini", "--initial-weight", "nan"], 2,
     "expected a finite number, found nan", ["moses.ini"], ["out.ini"]),
    ("add-feature on miscounted weights", ["moses", "add-feature", "short.ini", "--table", "t5.gz", "-o",
                                           "out.ini", "--base-dir", str(FIXTURES)], 1,
     "expected 5 weights for TranslationModel0 (num-features=5 on line 21), found 4", ["short.ini"],
     ["out.ini"]),
    ("plot-scores -o the table", ["moses", "plot-scores", "t.gz", "-o", "t.gz", "--force"], 1,
     "t.gz: the figure would overwrite the rescored table", ["t.gz"], []),
    # ---- issue 19: what a hostile user still broke -------------------------------------------
    ("resume without the first run's --reject",
     ["score", "bad.gz", "--model", "m.pt", "-o", "o.gz", "--unit-lines", "100", "--resume"], 1,
     "(partial run) vs None (now)", PARTIAL, ["o.gz", "rej.txt"]),
    ("garbage between two gzip members", ["score", "between.gz", "--model", "m.pt", "-o", "o.gz"], 1,
     "between.gz: gzip stream is damaged: garbage at byte ", [], ["o.gz"]),
    ("a plain table whose first line starts with BZh", ["score", "bzh.txt", "--model", "m.pt", "-o", "o.txt"], 0,
     "lines in 21, out 21", ["bzh.txt"], []),
    ("every line bad, with --reject", ["score", "allbad.gz", "--model", "m.pt", "-o", "o.gz", "--reject", "rej.txt"],
     1, "allbad.gz: no good line in the phrase table: all 3 lines are bad, and no output or reject file was "
     "written (without --reject the first bad line is named)", [], ["o.gz", "rej.txt", ".o.gz.partial"]),
    ("every line bad, streamed with --reject", ["score", "allbad.gz", "--model", "m.pt", "-o", "-", "--reject",
                                                "rej.txt"], 1, "all 3 lines are bad, and no output or reject", [],
     ["rej.txt"]),
    ("every line bad, training with --reject", ["train", "allbad.gz", "-o", "x.pt", "--reject", "rej.txt", *FAST],
     1, "all 3 lines are bad, and no output or reject", [], ["rej.txt", "x.pt"]),
    ("a text file as the model", ["score", "t.gz", "--model", "precious.txt", "-o", "o.gz"], 1,
     "precious.txt: not a model file (a rescorer model is a PyTorch archive; this file begins b'keep')",
     ["precious.txt"], ["o.gz"]),
    ("plot-attention with a blank source", ["plot-attention", "m.pt", "--source", " ", "-o", "a.png"], 2,
     "--source '': a source phrase needs at least one word", [], ["a.png"]),
    ("generate with a beam too large", ["generate", "m.pt", "--source", "the lord", "--beam", "100000"], 2,
     "Invalid value for '--beam': 100000 is not in the range 0<=x<=1000", [], []),
    ("top-targets without a model or a column", ["top-targets", "t.gz"], 2,
     "say where the RNN's scores come from: --model MODEL scores the targets, or --column C", [], []),
    ("run --model with model settings", ["t.gz", "--model", "m.pt", "--arch", "luong", "--cell", "lstm",
                                         "-o", "o.gz"], 2,
     "--arch, --cell: with --model nothing is trained, and the model's own settings are used", [], ["o.gz"]),
    ("run --model with training settings", ["t.gz", "--model", "m.pt", "--batch-size", "8", "-o", "o.gz"], 2,
     "--batch-size: with --model nothing is trained", [], ["o.gz"]),
    # ---- resumable scoring (issue 9): a partial run left by a kill -9 (1 unit of 100 lines) ----
    ("leftover partial run", ["score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--unit-lines", "100"], 1,
     "o.gz: an interrupted run left 1 finished unit (100 lines) in .o.gz.partial; pass --resume to "
     "continue it, or --force to start over", PARTIAL, ["o.gz"]),
    ("resume with another score format", ["score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--unit-lines",
                                          "100", "--resume", "--score-format", "log"], 1,
     "o.gz: --resume: the partial run in .o.gz.partial was made with other inputs or settings: "
     "score-format 'prob' (partial run) vs 'log' (now)", PARTIAL, ["o.gz"]),
    ("resume with another model", ["score", "t.gz", "--model", "other.pt", "-o", "o.gz", "--unit-lines", "100",
                                   "--resume"], 1,
     "model 1 m.pt (partial run) differs from other.pt (now)", PARTIAL, ["o.gz"]),
    ("resume on a changed table", ["score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--unit-lines", "100",
                                   "--resume"], 1,
     "the table's bytes", PARTIAL, ["o.gz"]),
    ("resume to stdout", ["score", "t.gz", "--model", "m.pt", "-o", "-", "--resume"], 1,
     "--resume needs a regular file as the table and as the output", [], []),
    # ---- rough edges ----------------------------------------------------------------------
    ("bzip2 input", ["score", "t.bz2", "--model", "m.pt", "-o", "o.bz2.out"], 0, "lines in 300, out 300", [], []),
    ("xz input", ["score", "t.xz", "--model", "m.pt", "-o", "o.xz.out"], 0, "lines in 300, out 300", [], []),
    ("zstd input", ["score", "t.zst", "--model", "m.pt", "-o", "o.zst.out"], 0, "lines in 300, out 300", [], []),
    ("trailing garbage after gzip", ["score", "garbage.gz", "--model", "m.pt", "-o", "o.gz"], 0,
     "17 bytes of trailing garbage after the gzip data ignored, as gzip -d does; 300 lines read", [], []),
]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory, table_lines) -> Path:
    """done.pt, its checkpoint and cache, trained once on t.gz with FAST settings."""
    directory = tmp_path_factory.mktemp("trained")
    (directory / "t.gz").write_bytes(gzip.compress(b"\n".join(table_lines) + b"\n"))
    done = rescore("-q", "train", "t.gz", "-o", "done.pt", *FAST, cwd=directory)
    assert done.returncode == 0, done.stderr
    (directory / "t.gz").unlink()
    return directory


def _prepare(case: str, workspace: Path, trained_run: Path) -> None:
    """What some cases need beyond the common workspace."""
    if case.startswith("run over an existing model"):
        (workspace / "precious.model.pt").write_bytes(b"an older model\n")
    if case == "train over a checkpoint":
        (workspace / "new.pt.checkpoint").write_bytes(b"an interrupted run's checkpoint\n")
    if case.startswith("resume with") or case == "resume on another table":
        for path in trained_run.iterdir():
            (shutil.copytree if path.is_dir() else shutil.copy)(path, workspace / path.name)
    if case == "resume with a corpus instead of the table":
        (workspace / "s.en").write_text("a b\nc d\ne f\n")
        (workspace / "s.fr").write_text("x y\nz w\nv u\n")
    if case.startswith("every line bad"):
        (workspace / "allbad.gz").write_bytes(gzip.compress(b"a ||| b\nc ||| d\ne ||| f\n"))
    if case == "garbage between two gzip members":
        lines = gz_lines(workspace / "t.gz")
        (workspace / "between.gz").write_bytes(gzip.compress(b"\n".join(lines[:150]) + b"\n") + b"junk\n"
                                               + gzip.compress(b"\n".join(lines[150:]) + b"\n"))
    if case == "a plain table whose first line starts with BZh":
        lines = gz_lines(workspace / "t.gz")
        (workspace / "bzh.txt").write_bytes(b"BZh91AY ||| x ||| 1 1 1 1\n" + b"\n".join(lines[:20]) + b"\n")
    if case == "resume without the first run's --reject":
        killed = rescore("score", "bad.gz", "--model", "m.pt", "-o", "o.gz", "--unit-lines", "100",
                         "--reject", "rej.txt", cwd=workspace, env={**os.environ, "RESCORE_FAULT": "after-record:0"})
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        (workspace / ".rej.txt.lock").unlink()  # the kill's; only a run that writes rej.txt clears it
    if case.startswith(("leftover partial", "resume with another score", "resume with another model",
                        "resume on a changed")):
        killed = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", "--unit-lines", "100", cwd=workspace,
                         env={**os.environ, "RESCORE_FAULT": "after-record:0"})
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        shutil.copy(FIXTURE_FILES / "v1-model.pt", workspace / "other.pt")
        if case == "resume on a changed table":
            (workspace / "t.gz").write_bytes(gzip.compress(gzip.decompress((workspace / "t.gz").read_bytes())[:-40]))
    if case == "pickle that runs code":
        import pickle

        class Evil:
            def __reduce__(self):
                return os.system, ("touch pwned",)

        (workspace / "evil.pt").write_bytes(pickle.dumps(Evil()))
    if case == "preflight on a corrupt KenLM file":
        (workspace / "lm.bin").write_bytes(b"mmap lm http://kheafield.com/code format version 5\0\xff\xfe" * 9)
        ini = (workspace / "moses.ini").read_text().replace("path=lm/fr.binlm", f"path={workspace}/lm.bin")
        (workspace / "badlm.ini").write_text(ini.replace("path=model/phrase-table.gz",
                                                          f"path={FIXTURES}/model/phrase-table.gz"))
    if case.startswith("add-feature") or case.startswith("plot-scores"):
        with gzip.open(workspace / "t.gz", "rb") as src:
            lines = src.read().split(b"\n")[:3]
        # a fifth score on every line (add-feature reads the whole table to scale the new weight)
        (workspace / "t5.gz").write_bytes(gzip.compress(b"".join(
            b" ||| ".join(f[:2] + [f[2] + b" 0.5"] + f[3:]) + b"\n"
            for f in (line.split(b" ||| ") for line in lines))))
        ini = (workspace / "moses.ini").read_text()
        (workspace / "short.ini").write_text(ini.replace("TranslationModel0= 0.2 0.2 0.2 0.2",
                                                          "TranslationModel0= 0.2 0.2 0.2"))


@pytest.mark.parametrize("case, args, status, message, unchanged, absent", CASES, ids=[c[0] for c in CASES])
def test_failure_case(case, args, status, message, unchanged, absent, workspace, request):
    if case == "zstd input":
        pytest.importorskip("zstandard")
    if "KenLM" in case:
        pytest.importorskip("kenlm")
    needs_training = case.startswith("resume with") or case == "resume on another table"
    _prepare(case, workspace, request.getfixturevalue("trained_run") if needs_training else None)
    before = {name: (workspace / name).read_bytes() for name in unchanged}
    result = rescore(*args, cwd=workspace)
    stderr = result.stderr.decode("utf-8", "replace")
    print(f"CASE\t{case}\trescore {' '.join(map(str, args))}\t{result.returncode}\t"
          f"{stderr.strip().splitlines()[-1] if stderr.strip() else ''}")  # for the note (-rP)
    assert result.returncode == status, stderr
    assert message in stderr, stderr
    assert "Traceback" not in stderr
    if status == 1:  # one line, the last, says what is wrong
        assert stderr.strip().splitlines()[-1].startswith("Error: "), stderr
    for name, content in before.items():
        assert (workspace / name).read_bytes() == content, f"{name} changed"
    for name in absent:
        assert not (workspace / name).exists(), f"{name} exists"
    assert not list(workspace.glob("**/.*.tmp-*")), "temporary files left behind"
    assert not list(workspace.glob("**/.*.lock")), "lock files left behind"
    assert not (workspace / "pwned").exists()


def test_reject_file_is_atomic_and_only_made_when_needed(workspace):
    clean = rescore("score", "t.gz", "--model", "m.pt", "-o", "a.gz", "--reject", "rej.txt", cwd=workspace)
    assert clean.returncode == 0 and not (workspace / "rej.txt").exists()
    dirty = rescore("score", "bad.gz", "--model", "m.pt", "-o", "b.gz", "--reject", "rej.txt", cwd=workspace)
    assert dirty.returncode == 0
    assert (workspace / "rej.txt").read_bytes() == BAD_LINE + b"\n"
    # --force replaces an older reject file with this run's rejects: none, so none is left.
    again = rescore("score", "t.gz", "--model", "m.pt", "-o", "c.gz", "--reject", "rej.txt", "--force",
                    cwd=workspace)
    assert again.returncode == 0 and not (workspace / "rej.txt").exists()


def test_fifo_output_is_streamed_into_not_replaced(workspace):
    fifo = workspace / "fifo"
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    result = rescore("-q", "score", "t.gz", "--model", "m.pt", "-o", "fifo", "--force", cwd=workspace)
    out, _ = reader.communicate(timeout=60)
    assert result.returncode == 0, result.stderr
    assert len(out.decode("utf-8", "replace").splitlines()) == 300
    assert fifo.is_fifo()


def test_second_run_on_the_same_target_refuses(workspace):
    """A lock beside the target: the second run says who holds it; a stale lock is no obstacle."""
    import fcntl

    lock = workspace / ".o.gz.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        result = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", cwd=workspace)
    assert result.returncode == 1
    assert "o.gz: another rescore run (pid 4242) is writing the output" in result.stderr.decode()
    assert not (workspace / "o.gz").exists()
    # The holder is gone (as after kill -9): its lock file and temporary are no obstacle.
    (workspace / f".o.gz.tmp-{dead_pid()}-x1y2").write_bytes(b"half a table")
    result = rescore("score", "t.gz", "--model", "m.pt", "-o", "o.gz", cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "removed, a temporary left by an interrupted run" in result.stderr.decode()
    assert sorted(p.name for p in workspace.glob(".o.gz*")) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_as_the_reject_file_has_no_temporary(workspace):
    """A device is written into, never replaced: its failure mentions no temporary file."""
    result = rescore("score", "bad.gz", "--model", "m.pt", "-o", "-", "--reject", "/dev/full", cwd=workspace)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[-1] == "Error: /dev/full: no space left on device"


def test_a_plain_pickle_as_the_model_is_one_line(workspace):
    """torch warns about a foreign pickle protocol: the user gets the error alone."""
    import pickle

    (workspace / "plain.pt").write_bytes(pickle.dumps({"weights": [1, 2, 3]}, protocol=4))
    result = rescore("score", "t.gz", "--model", "plain.pt", "-o", "o.gz", cwd=workspace)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        "Error: plain.pt: not a readable model file, truncated or corrupt"]


@pytest.mark.parametrize("args", [["score", "t.gz", "--model", "m.pt", "-o", "-"],
                                  ["top-targets", "t.gz", "--model", "m.pt"],
                                  ["generate", "m.pt", "--source", "the lord"]])
def test_a_closed_stdout_is_one_line(workspace, args):
    command = " ".join(shlex.quote(str(arg)) for arg in [helpers.RESCORE, "-q", *args]) + " >&-"
    result = subprocess.run(["sh", "-c", command], cwd=workspace, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "Error: standard output is closed: nothing can be written there; give -o FILE"]


def test_stale_temporaries_are_matched_by_name_never_as_a_pattern(workspace):
    """-o 'a[b].gz' as a glob would take `.ab.gz.tmp-*`, the live temporary of another run writing
    ab.gz; only `.a[b].gz.tmp-PID-*` of a dead PID is a stale temporary of a[b].gz."""
    live = workspace / f".ab.gz.tmp-{os.getpid()}-live"  # a run writing ab.gz, still going
    mine_alive = workspace / f".a[b].gz.tmp-{os.getpid()}-xyz"  # its owner is alive: not stale
    stale = workspace / f".a[b].gz.tmp-{dead_pid()}-abc"
    for path in (live, mine_alive, stale):
        path.write_bytes(b"half a table")
    result = rescore("score", "t.gz", "--model", "m.pt", "-o", "a[b].gz", "--reject", "r[e].txt",
                     cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert live.exists() and mine_alive.exists() and not stale.exists()
    assert f"{stale.name}: removed, a temporary left by an interrupted run" in result.stderr.decode()
    assert (workspace / "a[b].gz").is_file()


def test_sigint_while_scoring_to_stdout_counts_whole_lines(workspace, table_lines):
    """The note says how many lines reached stdout, and stdout ends with a whole line."""
    big = workspace / "big.gz"
    big.write_bytes(gzip.compress(b"".join(b"\n".join(table_lines) + b"\n" for _ in range(200))))
    out = workspace / "stdout.txt"
    with open(out, "wb") as stdout:
        process = subprocess.Popen([helpers.RESCORE, "score", "big.gz", "--model", "m.pt", "-o", "-",
                                    "--chunk-size", "500"], cwd=workspace, stdout=stdout,
                                   stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while out.stat().st_size == 0 and process.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    data = out.read_bytes()
    lines = data.count(b"\n")
    assert data.endswith(b"\n") and 0 < lines < 60000
    last = stderr.decode().strip().splitlines()[-1]
    assert last == f"rescore: interrupted (SIGINT); {lines} whole lines had already been written to -"


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_during_training_keeps_the_checkpoint(workspace, signum, status):
    args = [helpers.RESCORE, "train", "t.gz", "-o", "sig.pt", "--preset", "tiny", "--max-updates", "100000",
            "--checkpoint-every", "5", "--valid-every", "50", "--valid-pairs", "20"]
    process = subprocess.Popen(args, cwd=workspace, stderr=subprocess.PIPE)
    checkpoint = workspace / "sig.pt.checkpoint"
    deadline = time.time() + 120
    while not checkpoint.exists() and time.time() < deadline:
        time.sleep(0.1)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    stderr = stderr.decode()
    assert process.returncode == status, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"rescore: interrupted ({signal.Signals(signum).name}); stopped at update "), last
    assert last.endswith("; sig.pt.checkpoint holds it and the pair cache sig.pt.cache is kept: "
                         "`rescore train t.gz -o sig.pt --resume` continues from there"), last
    assert "Traceback" not in stderr
    assert checkpoint.is_file() and (workspace / "sig.pt.cache").is_dir()
    assert not (workspace / "sig.pt").exists()
    assert not list(workspace.glob(".*.tmp-*")) and not list(workspace.glob(".*.lock"))
    resumed = rescore("-q", "train", "t.gz", "-o", "sig.pt", "--resume", "--max-updates", "12",
                      cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    assert (workspace / "sig.pt").is_file()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
def test_sigint_while_importing_torch_is_one_line(workspace):
    """SIGINT as soon as libtorch is mapped, i.e. in the middle of `import torch`."""
    process = subprocess.Popen([helpers.RESCORE, "score", "t.gz", "--model", "m.pt", "-o", "o.gz"],
                               cwd=workspace, stderr=subprocess.PIPE)
    maps = Path(f"/proc/{process.pid}/maps")
    deadline = time.time() + 60
    while time.time() < deadline and process.poll() is None:
        try:
            if "libtorch" in maps.read_text():
                break
        except OSError:
            pass
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    stderr = stderr.decode()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    # torch is imported while the CLI starts (the model options come from the registry of
    # architectures) or, later, inside the command: each has its one true line.
    assert stderr.strip().splitlines()[-1] in (
        "rescore: interrupted (SIGINT) while starting; nothing was written",
        "rescore: interrupted (SIGINT); no output was written (o.gz is as it was)",
        "rescore: interrupted (SIGINT); no output was written")
    assert not (workspace / "o.gz").exists() and not list(workspace.glob(".o.gz*"))


# ---- disk full: a real full file system (root only), and injected ENOSPC everywhere ------------

@pytest.fixture()
def full_disk(tmp_path):
    """A 64 KiB tmpfs (mounting needs root and a kernel that lets us)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mount
    subprocess.run(["umount", str(mount)])


@pytest.mark.parametrize("target", ["output", "reject", "model", "cache"])
def test_disk_full_is_one_line(workspace, full_disk, target):
    big = workspace / "big.txt"
    with gzip.open(workspace / "t.gz", "rb") as src:
        lines = src.read().split(b"\n")[:-1]
    big.write_bytes(b"".join(line + b"\n" + (BAD_LINE + b" x" * 400 + b"\n" if target == "reject" else b"")
                             for line in [b"%d %s" % (i, line) for i in range(20) for line in lines]))
    args = {
        "output": ["score", big, "--model", "m.pt", "-o", full_disk / "o.txt"],
        "reject": ["score", big, "--model", "m.pt", "-o", "o.txt", "--reject", full_disk / "rej.txt"],
        "model": ["train", big, "-o", full_disk / "m2.pt", *FAST],
        "cache": ["train", big, "-o", "m2.pt", "--cache-dir", full_disk / "c", *FAST],
    }[target]
    result = rescore(*args, cwd=workspace)
    stderr = result.stderr.decode()
    assert result.returncode == 1, stderr
    assert "no space left on device" in stderr and "Traceback" not in stderr
    assert list(full_disk.iterdir()) == []
    if target == "model":  # the checkpoint could not be written either: said so, nothing kept
        assert "m2.pt" in stderr.strip().splitlines()[-1]
    if target == "reject":
        assert not (workspace / "o.txt").exists()  # the output is not kept without its rejects


def test_injected_enospc_in_the_output_removes_the_temporary(tmp_path, monkeypatch):
    """The same without root: a writer whose disk fills after a few bytes."""
    import errno

    from rescorer.errors import RescorerError
    from rescorer.io import atomic_output as table_output

    class FullDisk:
        def __init__(self, file, *args, **kwargs):
            self.file = file

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def close(self):
            pass

    monkeypatch.setattr(table_output, "gzip_writer", FullDisk)
    with pytest.raises(RescorerError, match=r"out.gz: no space left on device; nothing was written"):
        with table_output.AtomicOutput(tmp_path / "out.gz") as out:
            for _ in range(200_000):
                out.write_line(b"a ||| b ||| 0.5")
    assert list(tmp_path.iterdir()) == []


def test_injected_enospc_in_the_pair_cache_and_the_model(tmp_path, monkeypatch, example_table):
    import errno

    from rescorer.data import pair_cache
    from rescorer.errors import RescorerError
    from rescorer.models import model_files as checkpoint
    from rescorer.training.pipeline import PairEncoding, build_vocabularies, encode_table

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    vocabularies = build_vocabularies(example_table, 100)
    monkeypatch.setattr(pair_cache._SideWriter, "flush", full)
    with pytest.raises(RescorerError, match="cache: cannot write the pair cache \\(no space left on device\\)"):
        encode_table(example_table, PairEncoding(vocabularies.src_vocab, vocabularies.tgt_vocab), tmp_path / "cache")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(checkpoint.torch, "save", full)
    from rescorer.models import ModelSettings
    from rescorer.models.model_files import ModelBundle, save_model
    from rescorer.training.pipeline import new_model

    bundle = ModelBundle(new_model(ModelSettings.make(preset="tiny"), vocabularies.src_vocab,
                                   vocabularies.tgt_vocab),
                         vocabularies.src_vocab, vocabularies.tgt_vocab)
    with pytest.raises(RescorerError, match="m.pt: cannot write the model file \\(no space left on device\\)"):
        save_model(bundle, tmp_path / "m.pt")
    assert list(tmp_path.iterdir()) == []
