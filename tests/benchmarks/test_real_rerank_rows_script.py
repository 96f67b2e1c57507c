"""benchmarks/studies/proxy/real_rerank_rows.sh: each replicate of Baseline retuned reranks the
lists its own committed weights decode, with mert seeded by the replicate, the lists decoded once
for every row, and the rows tested against Baseline retuned's outputs."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import torch

from rescorer.models.lm_files import LmBundle, lm_vocabulary, save_lm
from rescorer.models.ngram_lm import NgramLM, NgramLmConfig

from tests.benchmarks.test_real_wide_rows_script import COMMITTED, bench_work
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures
from tests.helpers import REPO as ROOT

SCRIPT = ROOT / "benchmarks" / "studies" / "proxy" / "real_rerank_rows.sh"


def nbest_decodings(moses) -> list:
    """(the ini's [weight] section, the list's path) of every decoding that wrote an n-best list."""
    found = []
    for call in calls(moses, "moses"):
        argv = call["argv"]
        if "-n-best-list" in argv:
            ini = os.path.join(call["cwd"], argv[argv.index("-f") + 1])
            text = open(ini).read()
            found.append((text[text.index("[weight]"):], argv[argv.index("-n-best-list") + 1]))
    return found


def small_cslm(path):
    """A CSLM over the fixture's French dev words, written to `path`."""
    with gzip.open(FIXTURES / "corpus" / "dev.fr.gz", "rt") as handle:
        words = sorted({word for line in handle for word in line.split()})
    torch.manual_seed(1)
    vocabulary = lm_vocabulary(words)
    model = NgramLM(NgramLmConfig(len(vocabulary), order=3, embedding_size=6, hidden_sizes=(10, 8)))
    save_lm(LmBundle(model.eval(), vocabulary), path)
    return path


def differing_lines(first, second) -> int:
    left, right = first.read_text().splitlines(), second.read_text().splitlines()
    return sum(a.rstrip(" ") != b.rstrip(" ") for a, b in zip(left, right))


@needs_fixtures
def test_each_replicate_reranks_its_own_lists_once_decoded(tmp_path, tiny_model_path):
    moses = install_fake_moses(tmp_path / "moses")
    work, out = tmp_path / "work", tmp_path / "out"
    bench_work(work)
    shutil.copy(tiny_model_path, tmp_path / "second.pt")
    env = {**os.environ, "MOSES_HOME": str(moses), "SEEDS": "1 2", "NBEST": "3",
           "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    cslm = small_cslm(tmp_path / "cslm.pt")
    run = subprocess.run(["bash", str(SCRIPT), str(FIXTURES), str(work), str(out), f"one={tiny_model_path}",
                          f"two={tiny_model_path},{tmp_path / 'second.pt'}", f"lm=lm:{cslm}"],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert calls(moses, "mert-moses.pl") == []  # Baseline retuned is not tuned again
    decoded = nbest_decodings(moses)
    assert len(decoded) == 4  # dev and test, once per replicate, though three rows rerank them
    for seed, run_name in ((1, "baseline-retuned"), (2, "baseline-retuned.seed2")):
        weights = (COMMITTED / f"{run_name}.weights.txt").read_text()
        assert [path for section, path in decoded if section == weights] != []  # decoded with its weights
        for name, models in (("one", 1), ("two", 2), ("lm", 0)):
            reranked = work / "rerank" / run_name / name / f"seed{seed}" / "test.reranked"
            row = f"baseline+{name}{run_name[len('baseline-retuned'):]}.hyp.gz"
            assert gzip.decompress((out / "decoding" / row).read_bytes()) == reranked.read_bytes()
            tuned = json.loads((out / "rerank" / f"{run_name}.{name}.weights.json").read_text())["weights"]
            assert ("RNNfwd2_0" in tuned) == (models == 2) and ("RNNfwdPerWord_0" in tuned) == (models > 0)
            assert ("CSLM_0" in tuned) == (name == "lm")  # lm:FILE is the CSLM, passed as --lm
        merts = [call["argv"] for call in calls(moses, "mert")
                 if f"/{run_name}/" in call["cwd"] + "/"]
        assert merts and all(argv[argv.index("-r") + 1] == str(seed) for argv in merts)
    first_best = pd.read_csv(out / "first-best.tsv", sep="\t").set_index("replicate")
    for run_name in ("baseline-retuned", "baseline-retuned.seed2"):
        lists = work / "rerank" / run_name / "one"
        assert first_best.loc[run_name].iloc[1] == differing_lines(lists / "test.1best",
                                                                    work / "decoding" / f"{run_name}.hyp")
    results = pd.read_csv(out / "results.tsv", sep="\t", na_values="-").set_index("system")
    assert (results.loc[["+one", "+two", "+lm"], "replicates"] == 2).all()
    for path in out.rglob("*"):
        if path.is_file() and path.suffix != ".gz":
            assert str(tmp_path) not in path.read_text(), path
    assert "reranked with two" in (out / "times.tsv").read_text()


@needs_fixtures
def test_a_row_name_that_would_break_the_tables_is_refused(tmp_path):
    run = subprocess.run(["bash", str(SCRIPT), str(FIXTURES), str(tmp_path / "w"), str(tmp_path / "o"),
                          "a+b=model.pt"], env={**os.environ, "MOSES_HOME": str(tmp_path)},
                         capture_output=True, text=True)
    assert run.returncode == 2 and "a+b=model.pt: expected NAME=MODEL" in run.stderr


@needs_fixtures
def test_another_tuned_system_reranks_its_own_replicates(tmp_path):
    """SYSTEMS: a baseline+NAME system (here +tiny, one more column) decodes its lists from its
    committed weights in WEIGHTS, as Table 1's +CSLM+RNN reranks +RNN's, and its reranked row is
    SYSTEM+NAME beside Baseline retuned's baseline+NAME, both tested against Baseline retuned."""
    moses = install_fake_moses(tmp_path / "moses")
    work, out, given = tmp_path / "work", tmp_path / "out", tmp_path / "given"
    bench_work(work)
    with gzip.open(work / "sys" / "model" / "phrase-table.gz", "rt", encoding="utf-8") as table, \
            gzip.open(work / "tiny.phrase-table.gz", "wt", encoding="utf-8") as extended:
        for line in table:  # the filtered table with one more column: 0.5 on every pair
            fields = line.split(" ||| ")
            extended.write(" ||| ".join([*fields[:2], fields[2] + " 0.5", *fields[3:]]))
    given.mkdir()
    tuned = (COMMITTED / "baseline-retuned.weights.txt").read_text()
    (given / "baseline+tiny.weights.txt").write_text(
        re.sub(r"^(TranslationModel0=.*)$", r"\1 0.0123", tuned, flags=re.M))
    env = {**os.environ, "MOSES_HOME": str(moses), "SEEDS": "1", "NBEST": "3", "WEIGHTS": str(given),
           "SYSTEMS": "baseline-retuned baseline+tiny",
           "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    cslm = small_cslm(tmp_path / "cslm.pt")
    run = subprocess.run(["bash", str(SCRIPT), str(FIXTURES), str(work), str(out), f"lm=lm:{cslm}"],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert calls(moses, "mert-moses.pl") == []  # neither system is tuned again
    sections = [section for section, _ in nbest_decodings(moses)]
    assert len(sections) == 4 and sum("0.0123" in section for section in sections) == 2  # +tiny's own lists
    for row, run_name in (("baseline+lm", "baseline-retuned"), ("baseline+tiny+lm", "baseline+tiny")):
        reranked = work / "rerank" / run_name / "lm" / "seed1" / "test.reranked"
        assert gzip.decompress((out / "decoding" / f"{row}.hyp.gz").read_bytes()) == reranked.read_bytes()
        assert "CSLM_0" in json.loads((out / "rerank" / f"{run_name}.lm.weights.json").read_text())["weights"]
    assert (out / "baseline+tiny.weights.txt").read_text() == (given / "baseline+tiny.weights.txt").read_text()
    results = pd.read_csv(out / "results.tsv", sep="\t", na_values="-").set_index("system")
    assert set(results.index) == {"Baseline", "Baseline (retuned)", "+lm", "+tiny", "+tiny+lm"}
    assert not pd.isna(results.loc["+tiny+lm", "delta_bleu_vs_retuned"])
    assert list(pd.read_csv(out / "first-best.tsv", sep="\t").replicate) == ["baseline-retuned", "baseline+tiny"]
    assert "baseline+tiny: reranked with lm" in (out / "times.tsv").read_text()


@needs_fixtures
def test_a_system_without_its_table_is_refused(tmp_path):
    work = tmp_path / "w"
    bench_work(work)
    run = subprocess.run(["bash", str(SCRIPT), str(FIXTURES), str(work), str(tmp_path / "o"), "a=model.pt"],
                         env={**os.environ, "MOSES_HOME": str(tmp_path), "SYSTEMS": "baseline+rnn"},
                         capture_output=True, text=True)
    assert run.returncode == 2 and "baseline+rnn: not baseline-retuned, or a baseline+NAME without" in run.stderr
