"""Tuning: mert-moses.pl's argument list, seeds, decoder flags, --continue, why it stopped, and
dev BLEU from the real logs and outputs."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from moses_integration.errors import MosesConfigError, MosesRunError
from moses_integration.settings import TuningSettings
from moses_integration.tuning.mert_moses import (build_mert_argv, check_tuned_weights, read_finished_step,
                                    read_iteration_bleu, tune)
from moses_integration.tuning.dev_curve import dev_bleu_curve, read_stop_reason
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.moses_install import find_moses
from moses_integration.line_files import read_lines
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake

pytestmark = needs_fixtures


def test_bleu_of_every_real_iteration_matches_the_drivers_log():
    """runN.mert.log's `Best point: ... => BLEU` equals mert-moses.pl's own `(N) BEST at N` line."""
    log = (FIXTURES / "tuning/mert-moses.log").read_text(errors="replace")
    expected = {int(m.group(1)): 100 * float(m.group(2))
                for m in re.finditer(r"^\((\d+)\) BEST at \d+: .* => (\S+) at ", log, re.M)}
    assert sorted(expected) == list(range(1, 12))
    assert {n: read_iteration_bleu(FIXTURES / "tuning", n) for n in expected} == expected
    assert read_iteration_bleu(FIXTURES / "tuning", 11) == pytest.approx(40.0271)
    assert read_iteration_bleu(FIXTURES / "tuning", 12) is None
    assert read_finished_step(FIXTURES / "tuning") == 11


@pytest.fixture
def moses(tmp_path):
    return find_moses(install_fake_moses(tmp_path / "moses"))


def config(tmp_path, **kwargs) -> TuningSettings:
    settings = dict(ini_path=FIXTURES / "model/moses.ini", dev=(FIXTURES / "corpus/dev.en.gz",
                    FIXTURES / "corpus/dev.fr.gz"), work_dir=tmp_path / "work", base_dir=FIXTURES, threads=2)
    settings.update(kwargs)
    return TuningSettings(**settings)


ARGV_CASES = [
    ("mert with seed", dict(seed=7), False,
     ["--mertmertargs=-r 7 "]),
    ("mira with seed", dict(seed=7, optimizer="batch-mira"), False,
     ["--batch-mira-args=-r 7 ", "--batch-mira", "--return-best-dev"]),
    ("no seed, resume, max iterations", dict(max_iterations=3), True,
     ["--maximum-iterations=3", "--continue"]),
]
FLAGS = "--decoder-flags=-threads 2"


@pytest.mark.parametrize("kwargs, resume, tail", [c[1:] for c in ARGV_CASES], ids=[c[0] for c in ARGV_CASES])
def test_argv_is_a_list_with_absolute_paths(kwargs, resume, tail, moses, tmp_path):
    cfg = config(tmp_path, **kwargs)
    argv = build_mert_argv(moses, cfg, Path("/abs/in.ini"), Path("/abs/dev.src"),
                           Path("/abs/dev.ref"), resume)
    root = moses.root
    assert argv == [
        f"{root}/scripts/training/mert-moses.pl", "/abs/dev.src", "/abs/dev.ref",
        f"{root}/bin/moses", "/abs/in.ini", f"--working-dir={tmp_path}/work",
        f"--mertdir={root}/bin", f"--rootdir={root}/scripts", FLAGS, "--threads=2", "--nbest=100"] + tail


def test_decoder_flags_follow_the_threads(moses, tmp_path):
    cfg = config(tmp_path, decoder_flags=("-search-algorithm", "1", "-s", "400"))
    argv = build_mert_argv(moses, cfg, Path("/in.ini"), Path("/d.src"), Path("/d.ref"), False)
    assert "--decoder-flags=-threads 2 -search-algorithm 1 -s 400" in argv


def test_tune_runs_the_script_and_reads_the_result(moses, tmp_path):
    seen = []
    result = tune(moses, config(tmp_path, seed=11), progress=lambda i, b: seen.append((i, b)),
                  poll_seconds=0.05)
    work = tmp_path / "work"
    assert result.ini_path == work / "moses.ini"
    assert result.iterations == 11 and result.stopped_by == "convergence"
    assert result.dev_bleu == pytest.approx(40.0271)
    assert [i for i, _ in seen] == list(range(1, 12))
    assert seen[0][1] == pytest.approx(40.0371)
    [call] = calls(moses.root, "mert-moses.pl")
    assert call["argv"][:4] == [str(work / "dev.src"), str(work / "dev.ref"),
                                str(moses.root / "bin/moses"), str(work / "input.moses.ini")]
    assert "--mertmertargs=-r 11 " in call["argv"] and "--continue" not in call["argv"]
    assert call["cwd"] == str(FIXTURES)
    # the decoder runs in the working directory: the ini it gets has absolute paths
    assert f"path={FIXTURES}/lm/fr.binlm" in (work / "input.moses.ini").read_text()
    assert (work / "dev.src").read_bytes().count(b"\n") == 842
    assert "run 11 end" in (work / "mert-moses.log").read_text()


def test_two_references_reach_mert_moses_as_a_prefix(moses, tmp_path):
    """mert-moses.pl takes a file, or a prefix whose files PREFIX0, PREFIX1, ... it finds itself
    (the stand-in applies the real script's rule and logs what it found)."""
    darby = FIXTURES / "corpus/dev.ref-darby.fr.gz"
    tune(moses, config(tmp_path, dev_refs=(darby,)), poll_seconds=0.05)
    work = tmp_path / "work"
    [call] = calls(moses.root, "mert-moses.pl")
    assert call["argv"][1] == str(work / "dev.ref") and not (work / "dev.ref").exists()
    [found] = [json.loads(line) for line in (moses.root / "references.jsonl").read_text().splitlines()]
    assert found == [str(work / "dev.ref0"), str(work / "dev.ref1")]
    assert read_lines(work / "dev.ref0") == read_lines(FIXTURES / "corpus/dev.fr.gz")
    assert read_lines(work / "dev.ref1") == read_lines(FIXTURES / darby)


def test_a_single_reference_stays_a_file(moses, tmp_path):
    tune(moses, config(tmp_path), poll_seconds=0.05)
    [found] = [json.loads(line) for line in (moses.root / "references.jsonl").read_text().splitlines()]
    assert found == [str(tmp_path / "work" / "dev.ref")]


def test_the_stand_in_refuses_a_missing_prefix_as_mert_moses_does(moses, tmp_path):
    result = subprocess.run([str(moses.script("training/mert-moses.pl")), "dev.en", str(tmp_path / "none"),
                             "moses", "moses.ini"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode != 0
    assert f"Reference translations not found: {tmp_path / 'none'} (interpreted as " in result.stderr


def test_interrupted_run_is_continued_then_skipped(moses, tmp_path):
    set_fake(moses.root, stop_after=4)
    with pytest.raises(MosesRunError, match=r"status 137 after 4 finished iteration\(s\) without "
                                            r"writing moses.ini; see .*mert-moses.log"):
        tune(moses, config(tmp_path), poll_seconds=0.05)
    set_fake(moses.root, stop_after=None)
    seen = []
    result = tune(moses, config(tmp_path), progress=lambda i, b: seen.append(i), poll_seconds=0.05)
    assert [i for i in seen] == list(range(5, 12))
    first, second = calls(moses.root, "mert-moses.pl")
    assert "--continue" not in first["argv"] and second["argv"][-1] == "--continue"
    assert result.iterations == 11
    tune(moses, config(tmp_path), poll_seconds=0.05)  # finished: not run again
    assert len(calls(moses.root, "mert-moses.pl")) == 2


def test_a_run_is_continued_or_reused_only_with_what_it_began_with(moses, tmp_path):
    """tuning.record.json: another seed or dev set, or a moses.ini changed since the run wrote it,
    is refused (redoing would drop hours of MERT); a run with no record is refused the same way."""
    set_fake(moses.root, stop_after=2)
    with pytest.raises(MosesRunError):
        tune(moses, config(tmp_path, seed=1, max_iterations=3), poll_seconds=0.05)
    set_fake(moses.root, stop_after=None)
    with pytest.raises(MosesConfigError, match=r"work: its setting seed changed since the tuning run was made; "
                                               r"rerun with what it began with, or delete .*work to tune again"):
        tune(moses, config(tmp_path, seed=2, max_iterations=3), poll_seconds=0.05)
    with pytest.raises(MosesConfigError, match=r"work: its dev source changed since the tuning run was made"):
        tune(moses, config(tmp_path, seed=1, max_iterations=3, dev=(FIXTURES / "corpus/test.en.gz",
                                                                    FIXTURES / "corpus/dev.fr.gz")), poll_seconds=0.05)
    assert len(calls(moses.root, "mert-moses.pl")) == 1
    tune(moses, config(tmp_path, seed=1, max_iterations=3), poll_seconds=0.05)  # the same: continued
    assert calls(moses.root, "mert-moses.pl")[-1]["argv"][-1] == "--continue"
    tuned = tmp_path / "work" / "moses.ini"
    tuned.write_text(tuned.read_text().replace("# BLEU", "# edited BLEU"))
    with pytest.raises(MosesConfigError, match=r"moses.ini is not the file the tuning run wrote"):
        tune(moses, config(tmp_path, seed=1, max_iterations=3), poll_seconds=0.05)
    (tmp_path / "work" / "tuning.record.json").unlink()
    with pytest.raises(MosesConfigError, match=r"no readable record of what the tuning run was made from"):
        tune(moses, config(tmp_path, seed=1, max_iterations=3), poll_seconds=0.05)
    assert len(calls(moses.root, "mert-moses.pl")) == 2


def test_tuned_weights_sanity():
    tuned = MosesIni.read(FIXTURES / "tuning/moses.ini")
    assert check_tuned_weights(tuned) == []
    tuned.append_weights("TranslationModel0", [0.2])
    [warning] = check_tuned_weights(tuned, "TranslationModel0", [4], [0.2])
    assert warning.startswith(f"{FIXTURES}/tuning/moses.ini: TranslationModel0 column 5 weight is "
                              "still its initial value 0.2")
    assert check_tuned_weights(tuned, "TranslationModel0", [4], [0.3]) == []
    for name, values in tuned.all_weights().items():
        tuned.set_weights(name, [0.0] * len(values))
    assert "all tuned weights are near zero" in check_tuned_weights(tuned)[0]


def test_dev_bleu_of_each_iterations_output_matches_the_readme():
    """The fixture README's multi-bleu of each iteration's 1-best output (runN.out)."""
    curve = dev_bleu_curve(FIXTURES / "tuning", 12, [FIXTURES / "corpus/dev.fr.gz"])
    assert [None if b is None else round(b, 2) for b in curve] == [
        39.24, 27.03, 39.13, 39.51, 40.03, 40.01, 40.06, 40.06, 40.07, 40.05, 39.85, None]


STOP_LOGS = [
    ("converged", b"run 7 end\nNone of the weights changed more than 1e-05. Stopping.\n", "convergence"),
    ("at the limit", b"run 8 end\nMaximum number of iterations exceeded - stopping\n", "max-iterations"),
    ("resumed, then converged", b"Maximum number of iterations exceeded - stopping\n"
                                b"Last finished step is 8\nNone of the weights changed more than 1e-05. "
                                b"Stopping.\n", "convergence"),
    ("killed", b"run 3 start\nKilled\n", "unknown"),
]


@pytest.mark.parametrize("log, reason", [c[1:] for c in STOP_LOGS], ids=[c[0] for c in STOP_LOGS])
def test_stop_reason(log, reason, tmp_path):
    (tmp_path / "mert-moses.log").write_bytes(log)
    assert read_stop_reason(tmp_path) == reason


def test_the_real_run_has_no_stop_message():
    """It was stopped by hand after iteration 11 (fixture README)."""
    assert read_stop_reason(FIXTURES / "tuning") == "unknown"
    assert read_stop_reason(FIXTURES / "corpus") == "unknown"  # no log at all


# finished_step.txt as mert-moses.pl leaves it: stopped by --maximum-iterations, it marks run
# max + 1 finished (an iteration it never ran), as it did at 8 on the real bible-en-fr ablation.
STOPS = [
    ("limit", 3, None, 3, "max-iterations", 4),
    ("converged", None, 6, 6, "convergence", 6),
    ("converged at the limit", 6, 6, 6, "convergence", 6),
]


@pytest.mark.parametrize("max_iterations, converge_after, iterations, reason, finished_step",
                         [c[1:] for c in STOPS], ids=[c[0] for c in STOPS])
def test_tune_says_why_it_stopped(max_iterations, converge_after, iterations, reason,
                                  finished_step, moses, tmp_path):
    set_fake(moses.root, converge_after=converge_after)
    reported = []
    result = tune(moses, config(tmp_path, max_iterations=max_iterations),
                  progress=lambda i, bleu: reported.append(i), poll_seconds=0.05)
    assert (result.iterations, result.stopped_by) == (iterations, reason)
    assert reported == list(range(1, iterations + 1))
    assert result.dev_bleu == read_iteration_bleu(FIXTURES / "tuning", iterations)
    assert read_finished_step(tmp_path / "work") == finished_step
    again = tune(moses, config(tmp_path, max_iterations=max_iterations), poll_seconds=0.05)
    assert again.iterations == iterations  # a tuned run found again counts the same


def test_stand_in_writes_the_tuned_ini_as_mert_moses_does(moses, tmp_path):
    """create_config: the fixture's tuned ini (written by hand from iteration 11, its feature
    lines copied from the filtered ini) up to its header and those lines' trailing spaces."""
    result = tune(moses, config(tmp_path), poll_seconds=0.05)
    made = result.ini_path.read_text().splitlines()
    real = (FIXTURES / "tuning/moses.ini").read_text().splitlines()
    assert made[0] == real[0][:len(made[0])] == "# MERT optimized configuration"
    assert made[2] == "# BLEU 0.400271 on dev " + str(tmp_path / "work/dev.src")
    # tune() gives mert-moses.pl the ini with absolute paths; the fixture's are relative
    assert [line.rstrip().replace(f"{FIXTURES}/", "") for line in made[5:]] == \
        [line.rstrip() for line in real[5:]]


def test_decoder_flags_reach_the_tuned_ini(moses, tmp_path):
    result = tune(moses, config(tmp_path, decoder_flags=("-search-algorithm", "1", "-s", "400"),
                                max_iterations=2), poll_seconds=0.05)
    text = result.ini_path.read_text()
    assert "\n[s]\n400\n\n[search-algorithm]\n1\n\n[threads]\n2\n[weight]\n" in text
