"""Filtering the test set's tables once: the stand-in filter against the real filtered model,
reuse of a finished filtering, and the test ini that reads the filtered files."""

import gzip
import itertools
import shutil
import subprocess

import pytest

from moses_integration.errors import MosesRunError
from moses_integration.tables.filtering import filter_for_test, filtered_ini, system_tables
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.moses_install import find_moses
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures
from tests.fake_moses.systems import small_system

pytestmark = needs_fixtures

REORDERING = "model/reordering-table.wbe-msd-bidirectional-fe.gz"


def head(path, num_lines):
    with gzip.open(path, "rb") as lines:
        return list(itertools.islice(lines, num_lines))


def test_stand_in_filter_reproduces_the_real_filtered_model(tmp_path):
    """The fixture's tuning/filtered/ is what the real script made of model/moses.ini and the dev
    set; on the first 60,000 lines of the real tables the stand-in keeps exactly its lines."""
    root = install_fake_moses(tmp_path / "moses")
    system = tmp_path / "system"
    (system / "model").mkdir(parents=True)
    (system / "corpus").mkdir()
    table = head(FIXTURES / "model/phrase-table.gz", 60000)
    (system / "model/phrase-table.gz").write_bytes(gzip.compress(b"".join(table)))
    (system / REORDERING).write_bytes(gzip.compress(b"".join(head(FIXTURES / REORDERING, 60000))))
    shutil.copyfile(FIXTURES / "model/moses.ini", system / "model/moses.ini")
    (system / "corpus/dev.en").write_bytes(gzip.open(FIXTURES / "corpus/dev.en.gz").read())
    subprocess.run([str(root / "scripts/training/filter-model-given-input.pl"), "./filtered",
                    "model/moses.ini", "corpus/dev.en"], cwd=system, check=True)
    out = system / "filtered"
    # the real ini, its paths made absolute by the real script (the fixture's were shortened)
    assert (out / "moses.ini").read_text() == \
        (FIXTURES / "tuning/filtered/moses.ini").read_text().replace("tuning/filtered/", f"{out}/")
    real = set(gzip.open(FIXTURES / "tuning/filtered/phrase-table.0-0.1.1.gz", "rb").read().splitlines(True))
    kept = gzip.open(out / "phrase-table.0-0.1.1.gz", "rb").read().splitlines(True)
    assert kept == [line for line in table if line in real] and len(kept) == 9017
    reordering = (out / "reordering-table.wbe-msd-bidirectional-fe.0-0.1").read_bytes().splitlines(True)
    # the two real tables list the same pairs in the same order: so do the filtered ones
    assert [line.split(b" ||| ")[:2] for line in reordering] == [line.split(b" ||| ")[:2] for line in kept]
    assert (out / "info").read_text() == f"{system}/model/moses.ini\n{system}/corpus/dev.en\n"


@pytest.fixture
def filtered_setup(tmp_path):
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    ini_path, rescored = small_system(tmp_path)
    ini = MosesIni.read(ini_path)
    ini.set_score_columns(ini.phrase_table(), str(rescored), [0.2] * 6)
    return moses, ini, tmp_path / "test-filtered"


def test_filter_once_then_reuse(filtered_setup):
    moses, ini, work = filtered_setup
    filtered = filter_for_test(moses, ini, "TranslationModel0", FIXTURES / "corpus/test.en.gz", work)
    assert filtered.table_path == work / "filtered/phrase-table.0-0.1.1.gz"
    assert filtered.other_paths == {"LexicalReordering0": str(work / "filtered/reordering-table.0-0.1")}
    assert (work / "test.src").read_bytes() == gzip.open(FIXTURES / "corpus/test.en.gz").read()
    again = filter_for_test(moses, ini, "TranslationModel0", FIXTURES / "corpus/test.en.gz", work)
    assert again == filtered and len(calls(moses.root, "filter-model-given-input.pl")) == 1
    tables = system_tables(filtered, {"baseline": [0, 1, 2, 3], "wp": [0, 1, 2, 3, 5]}, work)
    full = gzip.open(filtered.table_path, "rb").read().splitlines()
    for slug, keep in [("baseline", [0, 1, 2, 3]), ("wp", [0, 1, 2, 3, 5])]:
        lines = gzip.open(tables[slug], "rb").read().splitlines()
        assert [line.split(b" ||| ")[2].split() for line in lines] == \
            [[line.split(b" ||| ")[2].split()[k] for k in keep] for line in full]


def test_a_killed_filtering_is_redone_and_a_failure_is_one_line(filtered_setup):
    moses, ini, work = filtered_setup
    (work / "filtered").mkdir(parents=True)  # no info: the real script would refuse it
    filter_for_test(moses, ini, "TranslationModel0", FIXTURES / "corpus/test.en.gz", work)
    assert (work / "filtered/info").is_file()
    shutil.rmtree(work)
    (moses.root / "scripts/training/filter-model-given-input.pl").write_text("#!/bin/sh\nexit 3\n")
    with pytest.raises(MosesRunError, match=r"filter-model-given-input.pl exited with status 3 "
                                            r"filtering the test set's tables; see .*filter.log"):
        filter_for_test(moses, ini, "TranslationModel0", FIXTURES / "corpus/test.en.gz", work)


def test_filtered_ini_changes_only_paths(filtered_setup):
    moses, ini, work = filtered_setup
    filtered = filter_for_test(moses, ini, "TranslationModel0", FIXTURES / "corpus/test.en.gz", work)
    tuned = MosesIni.read(FIXTURES / "tuning/moses.ini")
    out = filtered_ini(tuned, "TranslationModel0", work / "rnn.phrase-table.gz", filtered)
    changed = [(a, b) for a, b in zip(tuned.lines, out.lines) if a != b]
    assert len(out.lines) == len(tuned.lines) and len(changed) == 2
    assert out.phrase_table().args["path"] == str(work / "rnn.phrase-table.gz")
    assert out.feature("LexicalReordering0").args["path"] == str(work / "filtered/reordering-table.0-0.1")
    assert out.all_weights() == tuned.all_weights()
