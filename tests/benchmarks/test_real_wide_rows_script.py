"""benchmarks/studies/proxy/real_wide_rows.sh with WEIGHTS: a replicate whose tuned weights an
earlier run committed is decoded with exactly those weights and not tuned again, and one without
them is still tuned, so a later run's rows stand beside an earlier run's Baseline."""

import gzip
import os
import re
import shutil
import subprocess
import sys

import pandas as pd

from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures
from tests.fake_moses.systems import reordering_slice
from tests.helpers import EXAMPLE_TABLE, REPO as ROOT

SCRIPT = ROOT / "benchmarks" / "studies" / "proxy" / "real_wide_rows.sh"
COMMITTED = ROOT / "benchmarks" / "studies" / "proxy" / "results" / "real-wide-replicates"


def bench_work(work):
    """WORK as bench_system leaves it (each of its steps then skipped): the dev thirds, a filtered
    table (here the bundled example's lines), its reordering slice, the tuned ini, the LM."""
    sys_dir = work / "sys"
    (sys_dir / "corpus").mkdir(parents=True)
    (sys_dir / "model").mkdir()
    (work / "filtered").mkdir()
    for name in ("dev.en", "dev.fr", "dev.ref-darby.fr"):
        with gzip.open(FIXTURES / "corpus" / f"{name}.gz", "rt", encoding="utf-8") as lines, \
                gzip.open(sys_dir / "corpus" / f"{name}.gz", "wt", encoding="utf-8") as out:
            out.writelines(line for i, line in enumerate(lines) if i % 2 == 0)
    shutil.copy(EXAMPLE_TABLE, sys_dir / "model" / "phrase-table.gz")
    (sys_dir / "model" / "reordering-table.wbe-msd-bidirectional-fe.gz").write_bytes(reordering_slice())
    shutil.copy(FIXTURES / "tuning" / "moses.ini", sys_dir / "model" / "moses.ini")
    (sys_dir / "lm").symlink_to(FIXTURES / "lm")


def decoded_weights(moses, work):
    """Each test decoding's [weight] section, by the ini the decoder was given."""
    found = {}
    for call in calls(moses, "moses"):
        argv = call["argv"]
        if "-show-weights" in argv or "-f" not in argv:
            continue
        ini = argv[argv.index("-f") + 1]
        text = open(ini).read() if os.path.isabs(ini) else open(os.path.join(call["cwd"], ini)).read()
        found[ini] = text[text.index("[weight]"):]
    return found


@needs_fixtures
def test_committed_weights_are_decoded_and_a_replicate_without_them_is_tuned(tmp_path):
    moses = install_fake_moses(tmp_path / "moses")
    work, out, given = tmp_path / "work", tmp_path / "out", tmp_path / "given"
    bench_work(work)
    given.mkdir()
    shutil.copy(COMMITTED / "baseline-retuned.weights.txt", given)  # seed 1's, committed; seed 2 has none
    shutil.copy(COMMITTED / "baseline-retuned.mert-best-points.txt", given)
    env = {**os.environ, "MOSES_HOME": str(moses), "SEEDS": "1 2", "WEIGHTS": str(given),
           "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["bash", str(SCRIPT), str(FIXTURES), str(work), str(out), "baseline-retuned"],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    tunings = calls(moses, "mert-moses.pl")
    assert len(tunings) == 1 and any("-r 2 " in arg for arg in tunings[0]["argv"])  # seed 2 alone tuned
    committed = (COMMITTED / "baseline-retuned.weights.txt").read_text()
    assert (out / "baseline-retuned.weights.txt").read_text() == committed
    assert (out / "baseline-retuned.mert-best-points.txt").read_text() == \
        (COMMITTED / "baseline-retuned.mert-best-points.txt").read_text()
    assert committed in decoded_weights(moses, work).values()  # the test was decoded with them
    seed1 = (work / "baseline-retuned.weights.ini").read_text()
    assert seed1.replace(committed, "") == \
        (work / "baseline-retuned.ini").read_text().split("[weight]")[0]  # the row's ini otherwise
    assert (out / "baseline-retuned.seed2.weights.txt").read_text() != committed
    for name in ("baseline-retuned.hyp", "baseline-retuned.seed2.hyp"):  # each test output kept
        assert gzip.decompress((out / "decoding" / f"{name}.gz").read_bytes()) == (work / "decoding" / name).read_bytes()
    written = pd.read_csv(out / "results.tsv", sep="\t", na_values="-").set_index("system")
    assert written.loc["Baseline (retuned)", "replicates"] == 2
    assert "tuned weights from" in run.stderr


@needs_fixtures
def test_a_main_jobs_column_is_retuned_beside_the_committed_baseline(tmp_path, tiny_model_path):
    """main_job_real_rows.sh: the model's per-word column (NAME), its log p (NAME+raw), or its log
    p and word penalty (NAME+wp), cut onto the filtered table, MERT for those rows alone (3 seeds each), Baseline
    retuned decoded from its committed weights, every test output kept gzipped in OUT, and no
    machine path in the scoring logs."""
    moses = install_fake_moses(tmp_path / "moses")
    bench, jobs, out = tmp_path / "bench", tmp_path / "jobs", tmp_path / "out"
    bench_work(bench)
    (jobs / "tiny" / "job").mkdir(parents=True)
    shutil.copy(tiny_model_path, jobs / "tiny" / "job" / "out.model.pt")
    env = {**os.environ, "MOSES_HOME": str(moses),
           "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    script = SCRIPT.parent / "main_job_real_rows.sh"
    run = subprocess.run(["bash", str(script), str(FIXTURES), str(bench), str(jobs), str(out), "tiny", "tiny+wp", "tiny+raw"],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    tuned = [call["argv"][3] for call in calls(moses, "mert-moses.pl")]
    assert len(tuned) == 9 and sum("tuning-baseline+tinypw" in ini for ini in tuned) == 3
    assert sum("tuning-baseline+tiny+wp" in ini for ini in tuned) == 3
    assert sum(re.search(r"tuning-baseline\+tiny(\.seed\d)?/", ini) is not None for ini in tuned) == 3
    scored = [line.split(b" ||| ")[2].split() for line in gzip.open(bench / "tiny.scored.gz").read().splitlines()]
    row = [line.split(b" ||| ")[2].split() for line in gzip.open(bench / "tinypw.phrase-table.gz").read().splitlines()]
    assert len(scored) == len(row) == 4000 and all(len(scores) == 6 for scores in scored)
    assert all(mine == scores[:4] + [scores[5]] for mine, scores in zip(row, scored))  # the per-word one
    assert any(scores[4] != scores[5] for scores in scored)
    with_penalty = [line.split(b" ||| ")[2].split() for line in gzip.open(bench / "tiny.wp.scored.gz").read().splitlines()]
    row = [line.split(b" ||| ")[2].split() for line in gzip.open(bench / "tiny+wp.phrase-table.gz").read().splitlines()]
    assert all(mine == scores[:5] + [scores[6]] for mine, scores in zip(row, with_penalty))  # log p, then the penalty
    assert with_penalty[0][:6] == scored[0] and len(with_penalty[0]) == 7
    raw = [line.split(b" ||| ")[2].split() for line in gzip.open(bench / "tiny.phrase-table.gz").read().splitlines()]
    assert all(mine == scores[:5] for mine, scores in zip(raw, scored))  # log p alone
    assert sorted(path.name for path in (out / "decoding").iterdir()) == [
        "baseline+tiny+wp.hyp.gz", "baseline+tiny+wp.seed2.hyp.gz", "baseline+tiny+wp.seed3.hyp.gz",
        "baseline+tiny.hyp.gz", "baseline+tiny.seed2.hyp.gz", "baseline+tiny.seed3.hyp.gz",
        "baseline+tinypw.hyp.gz", "baseline+tinypw.seed2.hyp.gz", "baseline+tinypw.seed3.hyp.gz",
        "baseline-retuned.hyp.gz", "baseline-retuned.seed2.hyp.gz", "baseline-retuned.seed3.hyp.gz"]
    assert gzip.decompress((out / "decoding" / "baseline-retuned.hyp.gz").read_bytes()) == \
        (bench / "decoding" / "baseline-retuned.hyp").read_bytes()
    for seed in ("", ".seed2", ".seed3"):
        name = f"baseline-retuned{seed}.weights.txt"
        assert (out / name).read_text() == (COMMITTED / name).read_text()
    written = pd.read_csv(out / "results.tsv", sep="\t", na_values="-").set_index("system")
    assert written.loc["+tinypw", "replicates"] == 3 and written.loc["Baseline (retuned)", "replicates"] == 3
    assert written.loc["+tiny+WP", "replicates"] == 3 and written.loc["+tiny", "replicates"] == 3
    for log in ("tiny.scored.log", "tiny.wp.scored.log"):
        assert str(tmp_path) not in (out / log).read_text()


@needs_fixtures
def test_the_inverse_main_jobs_column_joins_the_forward_one(tmp_path, tiny_model_path, example_table):
    """main_job_real_rows.sh's NAME+inv and NAME+inv+wp: the forward model's log p, then the
    inverse main job NAME-inverse's log p(f|e) (then the forward model's word penalty), cut from
    one scoring of both models, each row tuned beside the committed Baseline (one seed here)."""
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.trainer import TrainSettings

    moses = install_fake_moses(tmp_path / "moses")
    bench, jobs, out = tmp_path / "bench", tmp_path / "jobs", tmp_path / "out"
    bench_work(bench)
    for name in ("tiny", "tiny-inverse"):
        (jobs / name / "job").mkdir(parents=True)
    shutil.copy(tiny_model_path, jobs / "tiny" / "job" / "out.model.pt")
    train_on_table(example_table, jobs / "tiny-inverse" / "job" / "out.model.pt", preset="tiny",
                   settings=TrainSettings(max_updates=30, valid_every=30, valid_pairs=200, seed=3, direction="inverse"))
    env = {**os.environ, "MOSES_HOME": str(moses), "SEEDS": "1",
           "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    script = SCRIPT.parent / "main_job_real_rows.sh"
    run = subprocess.run(["bash", str(script), str(FIXTURES), str(bench), str(jobs), str(out), "tiny+inv+wp", "tiny+inv"],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    tuned = [call["argv"][3] for call in calls(moses, "mert-moses.pl")]
    assert len(tuned) == 2 and sum("tuning-baseline+tiny+inv+wp" in ini for ini in tuned) == 1

    def scores(path):
        return [line.split(b" ||| ")[2].split() for line in gzip.open(path).read().splitlines()]

    both = scores(bench / "tiny.inv.scored.gz")  # 4 scores, fwd, inv, fwd per word, inv per word, penalty
    assert len(both) == 4000 and all(len(line) == 9 for line in both)
    assert any(line[4] != line[5] for line in both)  # two models, not one twice
    assert all(mine == line[:6] + [line[8]] for mine, line in zip(scores(bench / "tiny+inv+wp.phrase-table.gz"), both))
    assert all(mine == line[:6] for mine, line in zip(scores(bench / "tiny+inv.phrase-table.gz"), both))
    assert not (bench / "tiny.scored.gz").exists()  # one scoring for both rows
    alone = subprocess.run(["rescore", "score", str(bench / "sys" / "model" / "phrase-table.gz"), "--model",
                            str(tiny_model_path), "--unk-penalty", "--precision", "fp32", "-o", "-", "-q"],
                           env=env, capture_output=True, check=True).stdout
    assert [line.split(b" ||| ")[2].split() for line in alone.splitlines()] == [line[:5] + [line[8]] for line in both]
    ini = (bench / "baseline+tiny+inv+wp.ini").read_text()
    assert "num-features=7" in ini  # the table's 4, then tiny, inv and wp
    written = pd.read_csv(out / "results.tsv", sep="\t", na_values="-").set_index("system")
    assert written.loc["+tiny+inv+WP", "replicates"] == 1 and written.loc["+tiny+inv", "replicates"] == 1
    assert str(tmp_path) not in (out / "tiny.inv.scored.log").read_text()
