"""Tuning: mert-moses.pl's argument list, seeds, --continue, and dev BLEU from the real logs."""

import re
from pathlib import Path

import pytest

from fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake
from moses_integration.errors import MosesRunError
from moses_integration.mert import (TuningConfig, build_mert_argv, check_tuned_weights,
                                    read_finished_step, read_iteration_bleu, tune)
from moses_integration.moses_install import find_moses
from moses_integration.moses_ini import MosesIni

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


def config(tmp_path, **kwargs) -> TuningConfig:
    settings = dict(ini_path=Path("model/moses.ini"), dev_src=Path("corpus/dev.en.gz"),
                    dev_ref=Path("corpus/dev.fr.gz"), work_dir=tmp_path / "work",
                    base_dir=FIXTURES, threads=2, poll=None)
    settings.pop("poll")
    settings.update(kwargs)
    return TuningConfig(**settings)


ARGV_CASES = [
    ("mert with seed", dict(seed=7), False,
     ["--mertmertargs=-r 7 "]),
    ("mira with seed", dict(seed=7, batch_mira=True), False,
     ["--batch-mira-args=-r 7 ", "--batch-mira"]),
    ("no seed, resume, max iterations", dict(max_iterations=3), True,
     ["--maximum-iterations=3", "--continue"]),
]


@pytest.mark.parametrize("kwargs, resume, tail", [c[1:] for c in ARGV_CASES], ids=[c[0] for c in ARGV_CASES])
def test_argv_is_a_list_with_absolute_paths(kwargs, resume, tail, moses, tmp_path):
    cfg = config(tmp_path, **kwargs)
    argv = build_mert_argv(moses, cfg, Path("/abs/in.ini"), Path("/abs/dev.src"),
                           Path("/abs/dev.ref"), resume)
    root = moses.root
    assert argv == [
        f"{root}/scripts/training/mert-moses.pl", "/abs/dev.src", "/abs/dev.ref",
        f"{root}/bin/moses", "/abs/in.ini", f"--working-dir={tmp_path}/work",
        f"--mertdir={root}/bin", f"--rootdir={root}/scripts", "--decoder-flags=-threads 2",
        "--nbest=100"] + tail


def test_tune_runs_the_script_and_reads_the_result(moses, tmp_path):
    seen = []
    result = tune(moses, config(tmp_path, seed=11), progress=lambda i, b: seen.append((i, b)),
                  poll_seconds=0.05)
    work = tmp_path / "work"
    assert result.ini_path == work / "moses.ini"
    assert result.iterations == 11
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
