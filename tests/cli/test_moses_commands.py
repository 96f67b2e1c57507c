"""The `moses` click group: kebab-case subcommands, one-line errors with exit status 1."""

import functools
import importlib.metadata
import gzip
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from moses_integration.errors import MosesConfigError
from moses_integration.ini.moses_ini import MosesIni
from rescorer.cli.moses_commands import moses
from tests import helpers
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake
from tests.fake_moses.systems import expected_starts, small_system
from tests.helpers import first_lines

pytestmark = needs_fixtures


invoke = functools.partial(helpers.invoke, moses)


def test_subcommands_are_kebab_case():
    assert sorted(moses.commands) == ["ablation", "add-feature", "evaluate", "plot-scores",
                                      "preflight", "rerank", "rescore-nbest", "tune"]


def rescored_table(tmp_path: Path, extra: str = " 0.5 1", name: str = "phrase-table.rnn.gz") -> Path:
    out = tmp_path / name
    with gzip.open(FIXTURES / "model/phrase-table.gz", "rt") as src, gzip.open(out, "wt") as dst:
        for _ in range(3):
            fields = next(src).split(" ||| ")
            fields[2] += extra
            dst.write(" ||| ".join(fields))
    return out


def test_add_feature_then_preflight_passes(tmp_path):
    table = rescored_table(tmp_path)
    out = tmp_path / "moses.rnn.ini"
    result = invoke("add-feature", FIXTURES / "model/moses.ini", "--table", table, "-o", out,
                    "--base-dir", FIXTURES)
    assert result.exit_code == 0, result.output
    ini = MosesIni.read(out)
    assert ini.phrase_table().args["num-features"] == "6"
    assert ini.phrase_table().args["path"] == str(table.resolve())  # outside --base-dir
    starts = expected_starts(table, [0.2] * 4, ["rnn", "wp"])  # scaled to the table
    assert ini.weights("TranslationModel0") == [0.2] * 4 + starts and starts[0] > 0 > starts[1]
    assert f"(+2 column(s): rnn={starts[0]:g}, wp={starts[1]:g})" in result.output
    result = invoke("preflight", out, "--base-dir", FIXTURES, "--no-check-install",
                    "--dev", FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("extra, args, weights", [
    (" 0.5 1", ["--initial-weight", "0.2"], [0.2, 0.2]),
    (" 0.5 0.25 2.718282", ["--new-columns", "a,b,wp", "--initial-weight", "-0.1"], [-0.1] * 3),
])
def test_add_feature_options(tmp_path, extra, args, weights):
    out = tmp_path / "moses.rnn.ini"
    result = invoke("add-feature", FIXTURES / "model/moses.ini", "--table", rescored_table(tmp_path, extra),
                    "-o", out, *args)
    assert result.exit_code == 0, result.output
    assert MosesIni.read(out).weights("TranslationModel0") == [0.2] * 4 + weights


@pytest.mark.parametrize("args, message", [
    (["--initial-weight", "nan"], "Invalid value for '--initial-weight': expected a finite number, found nan"),
    (["--initial-weight", "x"], "Invalid value for '--initial-weight': expected a number, found x"),
    (["--new-columns", "a,wp,b"], "Invalid value for '--new-columns': --new-columns: expected the "
                                  "word-penalty column 'wp' last"),
])
def test_add_feature_usage_errors(tmp_path, args, message):
    result = invoke("add-feature", FIXTURES / "model/moses.ini", "--table", rescored_table(tmp_path),
                    "-o", tmp_path / "o.ini", *args, catch_exceptions=True)
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "o.ini").exists()


@pytest.mark.parametrize("name", ["phrase-table.rnn.gz", "pt.rnn.gz"])  # a 6-character prefix too
def test_add_feature_with_compact_table_runs_process_phrase_table_min(tmp_path, name):
    root = install_fake_moses(tmp_path / "moses")
    ini = tmp_path / "compact.ini"
    ini.write_text((FIXTURES / "model/moses.ini").read_text().replace(
        "PhraseDictionaryMemory name=TranslationModel0 num-features=4 path=model/phrase-table.gz",
        "PhraseDictionaryCompact name=TranslationModel0 num-features=4 path=model/phrase-table.minphr"))
    table = rescored_table(tmp_path, name=name)
    result = invoke("add-feature", ini, "--table", table, "-o", tmp_path / "out.ini",
                    "--moses-dir", root, "--threads", "2", "--base-dir", tmp_path,
                    "--initial-weight", "0.2")
    assert result.exit_code == 0, result.output
    from tests.fake_moses import calls
    [call] = calls(root, "processPhraseTableMin")
    minphr = tmp_path / name.replace(".gz", ".minphr")
    assert call["argv"] == ["-in", str(table), "-out", str(minphr), "-nscores", "6", "-threads", "2"]
    assert minphr.is_file()  # where Moses will look for it
    assert f"TranslationModel0 num-features=6 path={minphr.name} input-factor" in (tmp_path / "out.ini").read_text()


@pytest.mark.parametrize("args, message", [
    (["add-feature", FIXTURES / "model/moses.ini", "--table", FIXTURES / "tuning/filtered/phrase-table.0-0.1.1.gz",
      "-o", "{tmp}/x.ini"],
     "Error: {fx}/tuning/filtered/phrase-table.0-0.1.1.gz:1: expected more than 4 scores "
     "(num-features=4 in {fx}/model/moses.ini:21), found 4: is it the rescored table?"),
    (["preflight", FIXTURES / "model/moses.ini", "--base-dir", "{tmp}", "--no-check-install"],
     "Error: preflight: 3 problem(s)"),
    (["tune", "{tmp}/none.ini", "--dev", "a", "b", "--work-dir", "{tmp}/w", "--moses-dir", "{tmp}/none"],
     "Error: Moses directory {tmp}/none (from --moses-dir) does not exist"),
])
def test_errors_are_one_line_exit_1(args, message, tmp_path):
    args = [str(a).format(tmp=tmp_path) for a in args]
    result = invoke(*args, catch_exceptions=True)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == message.format(tmp=tmp_path, fx=FIXTURES)
    assert "Traceback" not in result.output


def test_tune_prints_progress_and_the_tuned_ini(tmp_path):
    root = install_fake_moses(tmp_path / "moses")
    result = invoke("tune", FIXTURES / "model/moses.ini", "--dev", FIXTURES / "corpus/dev.en.gz",
                    FIXTURES / "corpus/dev.fr.gz", "--work-dir", tmp_path / "w", "--moses-dir", root,
                    "--base-dir", FIXTURES, "--seed", "5", "--max-iterations", "3", catch_exceptions=True)
    assert result.exit_code == 0, result.output
    assert "iteration 1: dev BLEU 40.04" in result.output
    assert result.output.splitlines()[-1] == str(tmp_path / "w" / "moses.ini")


@needs_fixtures
def test_verbose_shows_each_moses_command_line_and_quiet_hides_progress(tmp_path):
    root = install_fake_moses(tmp_path / "moses")
    args = ["tune", FIXTURES / "model/moses.ini", "--dev", FIXTURES / "corpus/dev.en.gz",
            FIXTURES / "corpus/dev.fr.gz", "--moses-dir", root, "--base-dir", FIXTURES, "--max-iterations", "1"]
    verbose = helpers.rescore("moses", *args, "--work-dir", tmp_path / "v", "-v")
    quiet = helpers.rescore("moses", *args, "--work-dir", tmp_path / "q", "-q")
    assert verbose.returncode == quiet.returncode == 0, verbose.stderr + quiet.stderr
    assert any(line.startswith("running: ") and "mert-moses.pl" in line for line in verbose.stderr.splitlines())
    assert "iteration 1" in verbose.stderr and "running: " not in quiet.stderr and "iteration" not in quiet.stderr
    assert quiet.stdout.strip() == str(tmp_path / "q" / "moses.ini")


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_tune_ends_mert_moses_and_its_decoder(signum, tmp_path):
    """Interrupting rescore (a scheduler's SIGTERM, kill -INT) once left mert-moses.pl and Moses
    running orphaned, decoding into the working directory a rerun would share."""
    root = install_fake_moses(tmp_path / "moses")
    set_fake(root, hang_after=1)
    work = tmp_path / "w"
    process = subprocess.Popen([
        helpers.RESCORE, "moses", "tune", str(FIXTURES / "model/moses.ini"),
        "--dev", str(FIXTURES / "corpus/dev.en.gz"), str(FIXTURES / "corpus/dev.fr.gz"),
        "--work-dir", str(work), "--moses-dir", str(root), "--base-dir", str(FIXTURES)],
        stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not (work / "hanging.json").is_file() and time.time() < deadline:
        time.sleep(0.1)
    pids = json.loads((work / "hanging.json").read_text())
    assert _running(pids["script"]) and _running(pids["decoder"])
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, stderr
    assert stderr.decode().strip().splitlines()[-1].startswith(
        f"rescore: interrupted ({signal.Signals(signum).name})")
    deadline = time.time() + 10
    while (_running(pids["script"]) or _running(pids["decoder"])) and time.time() < deadline:
        time.sleep(0.1)
    left = [name for name, pid in pids.items() if _running(pid)]
    for name in left:  # leave no orphans behind, even when failing
        os.kill(pids[name], signal.SIGKILL)
    assert left == []


class FakeScorer:
    """The in-process scorer (moses_integration.scorer.RnnScorer) faked by its contract: every
    model forward, log p minus the target's length, tables written with two more columns."""

    def __init__(self, device="auto", precision="auto"):
        self.device, self.loaded, self.tables = device, [], []

    def direction(self, model_path):
        self.loaded.append(model_path)
        return "forward"

    def score_pairs(self, model_path, pairs):
        return np.array([-float(len(t.split())) for _, t in pairs])

    def reads_utf8_only(self, model_path):
        return False  # a word model

    def known_share(self, model_path, sentences):
        return 1.0  # every word in its vocabulary

    def pieces_per_word(self, model_path, sentences):
        return None  # a word model

    def score_table(self, table_in, table_out, model_paths, unk_penalty=False):
        self.tables.append((table_in, table_out, list(model_paths), unk_penalty))
        Path(table_out).write_text("x ||| y ||| 1 1 1 1 0.5 0.25 1\n")
        return f"wrote {table_out}"


def fake_scorer(monkeypatch) -> list:
    """Every scorer the commands build, faked; returns them."""
    from rescorer.cli import moses_runs

    built = []

    def rnn_scorer(device="auto", precision="auto"):
        built.append(FakeScorer(device, precision))
        return built[-1]

    monkeypatch.setattr(moses_runs, "rnn_scorer", rnn_scorer)
    return built


def test_rescore_nbest_uses_the_in_process_scorer(tmp_path, monkeypatch):
    """rescorer.scoring.rnn_scorer is the library's side; faked here by its contract."""
    built = fake_scorer(monkeypatch)
    model = tmp_path / "model.pt"
    model.write_bytes(b"")
    nbest = tmp_path / "in.nbest"
    first_lines(FIXTURES / "tuning/run11.best100.out.gz", 5, nbest)
    result = invoke("rescore-nbest", nbest, "--input", FIXTURES / "corpus/dev.en.gz",
                    "--model", model, "-o", tmp_path / "out.nbest.gz", "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert [scorer.device for scorer in built] == ["cpu"]
    lines = gzip.open(tmp_path / "out.nbest.gz", "rt").read().splitlines()
    assert len(lines) == 5 and all(" RNN0= -" in line for line in lines)


@pytest.mark.parametrize("quiet", [False, True])
def test_messages_follow_rescore_quiet(quiet, tmp_path):
    from rescorer.cli.main import main

    args = ["-q"] * quiet + ["moses", "add-feature", FIXTURES / "model/moses.ini", "--table",
                             rescored_table(tmp_path), "-o", tmp_path / "out.ini", "--base-dir", FIXTURES]
    result = helpers.invoke(main, *args)
    assert result.exit_code == 0, result.output
    assert (result.output == "") == quiet
    assert ("num-features=6 (+2 column(s): rnn=" in result.output) != quiet


def ablation_args(tmp_path, root, *extra):
    ini, rescored = small_system(tmp_path, 200)
    return ["ablation", ini, "--rescored-table", rescored, "--dev", FIXTURES / "corpus/dev.en.gz",
            FIXTURES / "corpus/dev.fr.gz", "--test", FIXTURES / "corpus/test.en.gz",
            FIXTURES / "corpus/test.fr.gz", "--out-dir", tmp_path / "out", "--moses-dir", root,
            "--base-dir", FIXTURES, "--replicates", "1", "--max-iterations", "2", *extra]


def test_ablation_command(tmp_path):
    root = install_fake_moses(tmp_path / "moses")
    result = invoke(*ablation_args(tmp_path, root, "--system", "+RNN", "--decoder-flags",
                                   "-search-algorithm 1 -s 400", "--threads", "2"))
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    assert result.output.endswith((out / "results.md").read_text())
    assert "| +RNN | warm |" in result.output and "| 2 max |" in result.output
    assert "start:warm|initial-weight:scaled|decoder-flags:-search-algorithm 1 -s 400" in result.output
    assert "|device:-|precision:-|threads:" in result.output  # no model scores: the table is rescored already
    for name in ("mert-curves.png", "fig3-rnn-vs-direct.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"
    assert all(c["argv"][-4:] == ["-search-algorithm", "1", "-s", "400"] for c in calls(root, "moses"))


@pytest.mark.parametrize("extra, status, message", [
    (["--decoder-flags", "-f x.ini"], 2,
     "Invalid value for '--decoder-flags': --decoder-flags: -f cannot be used here"),
    (["--initial-weight", "inf"], 2, "expected a finite number, found inf"),
    (["--system", "+LSTM"], 1, "Error: unknown system(s) ['+LSTM']; expected some of "
                               "['Baseline', '+RNN', '+WP', '+RNN+WP']"),
    (["--new-columns", "rnn"], 1, "pt.rescored.gz:1: expected 5 scores (the 4 of num-features plus "
                                  "rnn), found 6"),
])
def test_ablation_usage_errors(tmp_path, extra, status, message):
    root = install_fake_moses(tmp_path / "moses")
    result = invoke(*ablation_args(tmp_path, root, *extra), catch_exceptions=True)
    assert result.exit_code == status, result.output
    assert message in result.output and "Traceback" not in result.output
    assert calls(root, "mert-moses.pl") == []


def fake_sentence_features(monkeypatch, tmp_path):
    """--rerank-model's scorer faked by its contract: minus the length, every model forward."""
    fake_scorer(monkeypatch)
    model = tmp_path / "fwd.pt"
    model.write_bytes(b"")
    return model


def test_ablation_reranks_baseline_and_the_chosen_system(tmp_path, monkeypatch):
    """With --system, the reranked rows are Baseline's and that system's (a combination such as
    +fwdpw+inv is what a user reranks), not a fixed +RNN the ablation may not build."""
    root = install_fake_moses(tmp_path / "moses")
    model = fake_sentence_features(monkeypatch, tmp_path)
    result = invoke(*ablation_args(tmp_path, root, "--system", "+WP", "--rerank-model", model))
    assert result.exit_code == 0, result.output
    rows = [line.split(" | ")[0] for line in result.output.splitlines() if line.startswith("| +")]
    assert rows[:3] == ["| +WP", "| +rerank", "| +WP+rerank"] and "| +RNN+rerank" not in rows
    assert (tmp_path / "out/wp/rep1/rerank/result.json").is_file()


def test_ablation_refuses_to_rerank_a_system_it_does_not_build(tmp_path, monkeypatch):
    root = install_fake_moses(tmp_path / "moses")
    model = fake_sentence_features(monkeypatch, tmp_path)
    result = invoke(*ablation_args(tmp_path, root, "--system", "+WP", "--rerank-model", model,
                                   "--rerank-system", "+RNN"), catch_exceptions=True)
    assert result.exit_code == 1, result.output
    assert "cannot rerank +RNN: not a system of this ablation (its systems: Baseline, +WP)" in result.output
    assert calls(root, "mert-moses.pl") == [] and "Traceback" not in result.output


def test_ablation_with_the_cslm_in_decoding(tmp_path):
    """--nplm adds the decoding rows; `--system +CSLM(dec)` asks for Baseline's alone; a Moses
    built without NPLM is one line, exit 1, before any tuning."""
    root = install_fake_moses(tmp_path / "moses")
    nplm = helpers.FIXTURE_FILES / "nplm" / "tiny.nplm"
    set_fake(root, without_nplm=True)
    refused = invoke(*ablation_args(tmp_path, root, "--nplm", nplm), catch_exceptions=True)
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert "its bin/moses says 'Feature name NeuralLM is not registered', so it was built without NPLM" in refused.output
    assert calls(root, "mert-moses.pl") == []
    set_fake(root, without_nplm=False)
    result = invoke(*ablation_args(tmp_path, root, "--nplm", nplm, "--system", "+CSLM(dec)", "--no-plot"))
    assert result.exit_code == 0, result.output
    table = (tmp_path / "out" / "results.md").read_text().split("\n\n")[0].splitlines()
    assert [line.split(" | ")[:2] for line in table[2:]] == [["| Baseline", "ini"], ["| +CSLM(dec)", "warm"]]
    assert f"nplm:{nplm}" in result.output


def test_rerank_system_needs_a_rerank_model(tmp_path):
    root = install_fake_moses(tmp_path / "moses")
    result = invoke(*ablation_args(tmp_path, root, "--rerank-system", "+RNN"), catch_exceptions=True)
    assert result.exit_code == 2 and "--rerank-system needs --rerank-model" in result.output


def test_ablation_scores_with_several_models_once(tmp_path):
    """`--model a.pt --model b.pt`: one table scored with both by the scorer handed in, kept
    for reruns, refused for other models."""
    from moses_integration.tables.rescored_table import rescored_table

    scorer, said = FakeScorer(), []
    out = tmp_path / "tables/rescored.gz"
    assert rescored_table(scorer, Path("pt.gz"), [Path("a.pt"), Path("b.pt")], out, report=said.append) == out
    assert scorer.tables == [(Path("pt.gz"), out, [Path("a.pt"), Path("b.pt")], True)]
    assert said == [f"wrote {out}"]
    assert json.loads((tmp_path / "tables/rescored.gz.models.json").read_text()) == {
        "models": [str(Path("a.pt").resolve()), str(Path("b.pt").resolve())], "unk_penalty": True}
    assert rescored_table(scorer, Path("pt.gz"), [Path("a.pt"), Path("b.pt")], out) == out  # kept
    assert len(scorer.tables) == 1
    with pytest.raises(MosesConfigError, match=r"rescored.gz was scored with .*a.pt.*b.pt.*, not "
                                               r"\[.*c.pt'\]; use another --out-dir"):
        rescored_table(scorer, Path("pt.gz"), [Path("c.pt")], out)


def test_moses_home_without_moses_is_refused_before_any_directory_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv("MOSES_HOME", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    dev = [FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz"]
    test = [FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz"]
    runs = {"work": ["tune", FIXTURES / "model/moses.ini", "--dev", *dev, "--work-dir", tmp_path / "work"],
            "eval": ["evaluate", "--system", f"a={FIXTURES / 'model/moses.ini'}", "--test", *test,
                     "--out-dir", tmp_path / "eval"],
            "abl": ["ablation", FIXTURES / "model/moses.ini", "--rescored-table", rescored_table(tmp_path),
                    "--dev", *dev, "--test", *test, "--out-dir", tmp_path / "abl"]}
    for directory, args in runs.items():
        result = invoke(*args, catch_exceptions=True)
        assert result.exit_code == 1, result.output
        assert f"Moses at {tmp_path / 'empty'} (from $MOSES_HOME) lacks bin/moses" in result.output
        assert not (tmp_path / directory).exists()


def test_a_second_run_on_a_moses_work_directory_is_refused(tmp_path):
    import fcntl

    root = install_fake_moses(tmp_path / "moses")
    (tmp_path / "w").mkdir()
    with open(tmp_path / ".w.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        result = invoke("tune", FIXTURES / "model/moses.ini", "--dev", FIXTURES / "corpus/dev.en.gz",
                        FIXTURES / "corpus/dev.fr.gz", "--work-dir", tmp_path / "w", "--moses-dir", root,
                        "--base-dir", FIXTURES, catch_exceptions=True)
    assert result.exit_code == 1, result.output
    assert (f"{tmp_path / 'w'}: another rescore run (pid 4242) is writing the mert-moses.pl working "
            f"directory; wait for it to end") in result.output
    from tests.fake_moses import calls
    assert calls(root, "mert-moses.pl") == []


def test_rescore_nbest_reports_as_score_does(tmp_path, tiny_model_path):
    """Issue 45: `moses rescore-nbest` ran silent (78 s without a line on a 49,979-line list). It
    now says its settings signature first, shows a progress bar on stderr, and ends with a
    summary; -q silences all three."""
    source = first_lines(FIXTURES / "corpus/dev.en.gz", 3, tmp_path / "dev.en")
    with gzip.open(FIXTURES / "tuning/run11.best100.out.gz", "rb") as handle:
        lines = [line for line in handle if int(line.split(b" ||| ")[0]) < 3]
    nbest = tmp_path / "dev.nbest"
    nbest.write_bytes(b"".join(lines))
    out = tmp_path / "out.nbest"
    run = helpers.rescore("moses", "rescore-nbest", nbest, "--input", source, "--model", tiny_model_path, "-o", out,
                          "--precision", "fp32", "--device", "cpu")
    assert run.returncode == 0, run.stderr
    said = run.stderr.strip().splitlines()
    assert said[0].startswith("rescore ") and "|job:moses rescore-nbest|" in said[0]
    assert f"|nbest:{nbest}|input:{source}|models:{tiny_model_path}|features:RNN0|mode:auto|" in said[0]
    assert "|precision:fp32|" in said[0] and said[0].endswith(f"|torch:{importlib.metadata.version('torch')}")
    bars = [line for line in said if line.startswith("scoring the n-best list: ")]
    assert bars and f"{len(lines)}/{len(lines)}" in bars[-1] and "lines" in bars[-1]
    assert said[-1].startswith(f"lines in {len(lines)}, out {len(lines)} (3 sentences); added RNN0= of whole "
                               f"hypotheses; mean RNN0 -") and said[-1].endswith(f" lines/s; wrote {out}")
    assert len(out.read_bytes().splitlines()) == len(lines)
    quiet = helpers.rescore("moses", "rescore-nbest", nbest, "--input", source, "--model", tiny_model_path, "-o",
                            out, "--precision", "fp32", "--device", "cpu", "--force", "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""


@pytest.mark.parametrize("output", ["file", "stdout"])
def test_rescore_nbest_refuses_a_bad_last_line_in_one_line_writing_nothing(tmp_path, tiny_model_path, output):
    """Issue 45: every field of every line is checked before anything is written, even to stdout:
    a bad last line gives one line naming the file and the line, exit 1, no traceback."""
    source = first_lines(FIXTURES / "corpus/dev.en.gz", 3, tmp_path / "dev.en")
    with gzip.open(FIXTURES / "nbest/dev.nbest200.gz", "rb") as handle:
        lines = [line for line in handle if int(line.split(b" ||| ")[0]) < 3]
    lines[-1] = lines[-1].replace(b"Distortion0= -4", b"Distortion0= nan", 1)
    nbest = tmp_path / "dev.nbest"
    nbest.write_bytes(b"".join(lines))
    out = tmp_path / "out.nbest"
    run = helpers.rescore("moses", "rescore-nbest", nbest, "--input", source, "--model", tiny_model_path,
                          "-o", out if output == "file" else "-", "--device", "cpu", text=False)
    stderr = run.stderr.decode()
    assert run.returncode == 1 and "Traceback" not in stderr, stderr
    assert stderr.splitlines()[-1] == (f"Error: {nbest}:{len(lines)}: bad features field (Distortion0= nan is not a "
                                       f"finite number)")
    assert run.stdout == b"" and sorted(path.name for path in tmp_path.iterdir()) == ["dev.en", "dev.nbest"]
