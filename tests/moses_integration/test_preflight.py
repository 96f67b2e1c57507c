"""Preflight: each failure is one line naming the file, on the real bible-en-fr artifacts."""

import gzip
import sys
from pathlib import Path

import pytest

from moses_integration.errors import PreflightError
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.preflight import ParallelSet, require_preflight, run_preflight
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake
from tests.helpers import FIXTURE_FILES

pytestmark = needs_fixtures

DEV = ParallelSet("dev", FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz")
TEST = ParallelSet("test", FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz")


@pytest.fixture
def fake_moses(tmp_path):
    return install_fake_moses(tmp_path / "moses")


def write_ini(tmp_path: Path, old: str = "", new: str = "") -> Path:
    text = (FIXTURES / "model/moses.ini").read_text()
    assert old in text
    path = tmp_path / "moses.ini"
    path.write_text(text.replace(old, new) if old else text)
    return path


def test_real_system_passes(fake_moses):
    problems = run_preflight(FIXTURES / "model/moses.ini", FIXTURES, fake_moses, [DEV, TEST])
    assert problems == []


def test_real_tuned_ini_passes_without_install_check():
    assert run_preflight(FIXTURES / "tuning/moses.ini", FIXTURES, check_install=False) == []


def _scores_plus_one(tmp_path: Path) -> Path:
    src = FIXTURES / "model/phrase-table.gz"
    with gzip.open(src, "rt") as handle:
        lines = [next(handle) for _ in range(3)]
    out = tmp_path / "five.gz"
    with gzip.open(out, "wt") as handle:
        for line in lines:
            fields = line.split(" ||| ")
            fields[2] += " 0.5"
            handle.write(" ||| ".join(fields))
    return out


# (id, ini edit (old, new), data sets, expected single problem, with {tmp} and {fx} filled in)
CASES = [
    ("missing phrase table", ("path=model/phrase-table.gz", "path=model/nope.gz"), [],
     "{tmp}/moses.ini:21: TranslationModel0 path=model/nope.gz not found (relative paths "
     "resolve against --base-dir {fx}, like Moses' working directory)"),
    ("missing language model", ("path=lm/fr.binlm", "path=lm/fr.5.binlm"), [],
     "{tmp}/moses.ini:24: LM0 path=lm/fr.5.binlm not found"),
    ("num-features too high", ("num-features=4 path=model/phrase-table.gz",
                               "num-features=5 path=model/phrase-table.gz"), [],
     "{fx}/model/phrase-table.gz:1: expected 5 scores (num-features=5 in {tmp}/moses.ini:21), found 4"),
    ("lm order wrong", ("order=4", "order=5"), [],
     "{tmp}/moses.ini:24: LM0 order=5 but {fx}/lm/fr.binlm is a 4-gram model"),
    ("lm unreadable", ("path=lm/fr.binlm", "path=model/moses.ini"), [],
     "{tmp}/moses.ini:24: LM0 {fx}/model/moses.ini does not load with kenlm: Cannot read model"),
    ("dev lengths differ", None, [ParallelSet("dev", FIXTURES / "corpus/dev.en.gz",
                                              FIXTURES / "corpus/test.fr.gz")],
     "dev: {fx}/corpus/dev.en.gz has 842 lines but {fx}/corpus/test.fr.gz has 802; "
     "expected a line-aligned pair"),
    ("test reference missing", None, [ParallelSet("test", FIXTURES / "corpus/test.en.gz",
                                                  FIXTURES / "corpus/test.de.gz")],
     "test reference {fx}/corpus/test.de.gz not found"),
    ("old format", ("[feature]", "[ttable-file]"), [],
     "{tmp}/moses.ini:17: [ttable-file] is the pre-2013 moses.ini format"),
]


@pytest.mark.parametrize("edit, data, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_failure_is_one_line(edit, data, expected, tmp_path):
    if "{fx}/lm/" in expected or "kenlm" in expected:
        pytest.importorskip("kenlm", reason="the kenlm module checks the language model")
    ini = write_ini(tmp_path, *(edit or ()))
    problems = run_preflight(ini, FIXTURES, data=data, check_install=False)
    # num-features=5 against 4 weights is also reported by the [weight] check: one line each.
    assert len(problems) == (2 if "expected 5 scores" in expected else 1), problems
    assert problems[-1].startswith(expected.format(tmp=tmp_path, fx=FIXTURES))
    assert all("\n" not in problem for problem in problems)


def test_empty_file_and_hint_for_base_dir(tmp_path):
    empty = tmp_path / "empty.fr"
    empty.write_text("")
    problems = run_preflight(FIXTURES / "model/moses.ini", tmp_path, check_install=False,
                             data=[ParallelSet("dev", FIXTURES / "corpus/dev.en.gz", empty)])
    assert f"dev reference {empty} is empty" in problems
    assert problems[0].endswith(f"; it exists relative to {FIXTURES}: pass --base-dir {FIXTURES}")


def test_table_with_new_columns_needs_raised_num_features(tmp_path):
    table = _scores_plus_one(tmp_path)
    ini = write_ini(tmp_path, "path=model/phrase-table.gz", f"path={table}")
    assert run_preflight(ini, FIXTURES, check_install=False) == [
        f"{table}:1: expected 4 scores (num-features=4 in {ini}:21), found 5"]
    ini_obj = MosesIni.read(ini)
    ini_obj.add_score_columns(ini_obj.phrase_table(), str(table), 1, [0.2])
    ini_obj.write(ini)
    assert run_preflight(ini, FIXTURES, check_install=False) == []


MOSES_CASES = [
    ("no moses dir", None, {}, "Moses not found: give --moses-dir DIR or set MOSES_HOME"),
    ("moses dir missing", "nowhere", {}, "Moses directory {tmp}/nowhere (from --moses-dir) does not exist"),
    ("mert missing", "moses", {"binaries": ("moses", "extractor", "kbmira", "pro", "evaluator")},
     "Moses at {tmp}/moses (from --moses-dir) lacks bin/mert"),
    ("mert-moses.pl missing", "moses", {"scripts": ("training/filter-model-given-input.pl",)},
     "Moses at {tmp}/moses (from --moses-dir) lacks scripts/training/mert-moses.pl"),
]


@pytest.mark.parametrize("moses_dir, install, expected", [c[1:] for c in MOSES_CASES],
                         ids=[c[0] for c in MOSES_CASES])
def test_moses_installation_problems(moses_dir, install, expected, tmp_path, monkeypatch):
    monkeypatch.delenv("MOSES_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    if install:
        install_fake_moses(tmp_path / "moses", **install)
    problems = run_preflight(FIXTURES / "model/moses.ini", FIXTURES,
                             tmp_path / moses_dir if moses_dir else None)
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected.format(tmp=tmp_path))


def test_moses_home_and_path_are_used(tmp_path, monkeypatch):
    root = install_fake_moses(tmp_path / "moses")
    monkeypatch.setenv("MOSES_HOME", str(root))
    assert run_preflight(FIXTURES / "model/moses.ini", FIXTURES) == []
    monkeypatch.delenv("MOSES_HOME")
    monkeypatch.setenv("PATH", str(root / "bin"))
    assert run_preflight(FIXTURES / "model/moses.ini", FIXTURES) == []


def test_require_preflight_raises_one_line(tmp_path):
    ini = write_ini(tmp_path, "path=model/phrase-table.gz", "path=model/nope.gz")
    with pytest.raises(PreflightError) as info:
        require_preflight(ini, FIXTURES, check_install=False, data=[TEST])
    assert str(info.value).startswith(f"preflight failed: {ini}:21: TranslationModel0 path=")
    assert "\n" not in str(info.value)


NPLM = FIXTURE_FILES / "nplm" / "tiny.nplm"  # written by NPLM's own trainer: ngram_size 5
NEURAL_LM = "KENLM name=LM0 factor=0 path=lm/fr.binlm order=4\n"


def with_neural_lm(tmp_path: Path, order: int) -> Path:
    """The real ini with a NeuralLM line (`moses add-feature --nplm`'s) of that order and its weight."""
    ini = write_ini(tmp_path, NEURAL_LM, NEURAL_LM + f"NeuralLM factor=0 order={order} path={NPLM} name=NeuralLM0\n")
    ini.write_text(ini.read_text().replace("LM0= 0.5\n", "LM0= 0.5\nNeuralLM0= 0.1\n"))
    return ini


def test_a_neural_lm_line_is_checked_against_its_model_and_the_decoder(tmp_path, fake_moses):
    """An ini with a NeuralLM line passes with a Moses that has the feature; a model of another
    order, or a Moses built without NPLM, is one line each, before any decoding."""
    pytest.importorskip("kenlm", reason="the kenlm module checks the language model")
    assert run_preflight(with_neural_lm(tmp_path, 5), FIXTURES, fake_moses, [DEV, TEST]) == []
    [probe] = [c for c in calls(fake_moses, "moses")]
    assert probe["argv"][:2] == ["-show-weights", "-f"]  # Moses builds its features, loads no model
    ini = with_neural_lm(tmp_path, 7)
    assert run_preflight(ini, FIXTURES, check_install=False) == [
        f"{ini}:25: NeuralLM order=7 but {NPLM} is a 5-gram model (ngram_size 5)"]
    set_fake(fake_moses, without_nplm=True)
    assert run_preflight(with_neural_lm(tmp_path, 5), FIXTURES, fake_moses) == [
        f"Moses at {fake_moses} (from --moses-dir) cannot decode with an NPLM model: its bin/moses says 'Feature "
        "name NeuralLM is not registered', so it was built without NPLM (rebuild it with ./bjam --with-nplm=NPLM_DIR)"]


def test_a_model_to_add_is_checked_too(tmp_path, fake_moses):
    """neural_lms: the NPLM files a run adds (the ablation's --nplm), not in the ini yet."""
    assert run_preflight(FIXTURES / "model/moses.ini", FIXTURES, fake_moses, neural_lms=[NPLM]) == []
    assert run_preflight(FIXTURES / "model/moses.ini", FIXTURES, fake_moses,
                         neural_lms=[FIXTURES / "model/moses.ini"]) == [
        f"--nplm: {FIXTURES}/model/moses.ini:1: not an NPLM model file (expected \\config, found '#########################')"]
    set_fake(fake_moses, without_nplm=True)
    [problem] = run_preflight(FIXTURES / "model/moses.ini", FIXTURES, fake_moses, neural_lms=[NPLM])
    assert "cannot decode with an NPLM model" in problem


def test_without_kenlm_the_language_model_check_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "kenlm", None)  # as if it were not installed
    assert run_preflight(FIXTURES / "model/moses.ini", FIXTURES, check_install=False) == [
        "checking the language model needs kenlm, which is not installed: pip install 'kenlm' or 'rescorer[moses]'"]
