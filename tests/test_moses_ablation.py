"""Ablation with the stand-in Moses: four systems from one rescored table, replicates with
their own seeds, results table, resume without redoing finished replicates."""

import gzip
import math
from pathlib import Path

import pandas as pd
import pytest

from fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake
from moses_integration.ablation import AblationConfig, plan_systems, run_ablation
from moses_integration.errors import MosesConfigError, MosesRunError
from moses_integration.evaluation import evaluate_file
from moses_integration.figure import plot_rnn_vs_direct
from moses_integration.moses_install import find_moses
from moses_integration.moses_ini import MosesIni
from moses_integration.phrase_table import read_num_scores, select_score_columns
from moses_integration.preflight import ParallelSet
from moses_integration.results_table import COLUMNS

pytestmark = needs_fixtures


def small_system(tmp_path: Path, num_lines: int = 300) -> tuple:
    """The real model/moses.ini on the first lines of the real table, plus a rescored copy
    in the layout `rescore score --unk-penalty` writes: two more scores, exp(log p), exp(count)."""
    base, rescored = tmp_path / "pt.gz", tmp_path / "pt.rescored.gz"
    with gzip.open(FIXTURES / "model/phrase-table.gz", "rb") as src, \
            gzip.open(base, "wb") as out_base, gzip.open(rescored, "wb") as out_resc:
        for i in range(num_lines):
            line = next(src)
            out_base.write(line)
            fields = line.split(b" ||| ")
            fields[2] += f" {math.exp(-(i % 17) - 1):.6g} {math.exp(i % 2):.6g}".encode()
            out_resc.write(b" ||| ".join(fields))
    ini = MosesIni.read(FIXTURES / "model/moses.ini")
    ini.make_paths_absolute(FIXTURES)
    ini.set_feature_arg(ini.phrase_table(), "path", str(base))
    ini.write(tmp_path / "moses.ini")
    return tmp_path / "moses.ini", rescored


@pytest.fixture
def setup(tmp_path):
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    ini, rescored = small_system(tmp_path)
    config = AblationConfig(
        ini_path=ini, rescored_table=rescored,
        dev=ParallelSet("dev", FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz"),
        test=ParallelSet("test", FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz"),
        out_dir=tmp_path / "ablation", base_dir=FIXTURES, replicates=2, threads=2, seed=100,
        num_samples=20)
    return moses, config


def test_select_columns_keeps_other_fields(tmp_path):
    _, rescored = small_system(tmp_path, 5)
    out = tmp_path / "wp.gz"
    assert select_score_columns(rescored, out, [0, 1, 2, 3, 5]) == 5
    original = gzip.open(rescored, "rb").read().splitlines()
    kept = gzip.open(out, "rb").read().splitlines()
    assert len(kept) == len(original)
    for before, after in zip(original, kept):  # lengths asserted equal above
        b, a = before.split(b" ||| "), after.split(b" ||| ")
        assert a[:2] + a[3:] == b[:2] + b[3:]
        assert a[2].split() == [b[2].split()[i] for i in (0, 1, 2, 3, 5)]


PLANS = [(4, 6, None, ["Baseline", "+RNN", "+WP", "+RNN+WP"]),
         (4, 5, None, ["Baseline", "+RNN"]),
         (4, 6, ["+WP"], ["Baseline", "+WP"])]


@pytest.mark.parametrize("num_base, num_rescored, wanted, names", PLANS)
def test_plan_systems(num_base, num_rescored, wanted, names):
    assert [s.name for s in plan_systems(num_base, num_rescored, wanted)] == names


@pytest.mark.parametrize("num_rescored, wanted, message", [
    (4, None, "t.gz:1: expected 5 or 6 scores"),
    (5, ["+WP"], "t.gz has no word-penalty column (rescore with --unk-penalty)"),
    (6, ["+XYZ"], "unknown system(s) ['+XYZ']"),
])
def test_plan_systems_errors(num_rescored, wanted, message):
    with pytest.raises(MosesConfigError) as info:
        plan_systems(4, num_rescored, wanted, "t.gz")
    assert str(info.value).startswith(message)


def test_ablation_builds_tunes_evaluates_and_resumes(setup):
    moses, config = setup
    summary = run_ablation(config, moses, report=lambda message: None)
    out = config.out_dir
    assert list(summary.columns) == COLUMNS
    assert list(summary.system) == ["Baseline", "+RNN", "+WP", "+RNN+WP"]
    assert list(pd.read_csv(out / "results.csv").columns) == COLUMNS
    real = evaluate_file(FIXTURES / "eval/test.hyp.fr.gz", FIXTURES / "corpus/test.fr.gz")
    assert summary.test_bleu_mean.tolist() == [real.bleu] * 4  # the stand-in's output is the real one
    assert summary.dev_bleu_mean.tolist() == pytest.approx([40.0271] * 4)
    assert summary.delta_test_bleu.tolist() == [0.0] * 4
    assert summary.p_bleu.isna().tolist() == [True, False, False, False]
    md = (out / "results.md").read_text()
    assert md.splitlines()[0] == "| System | Dev BLEU | Test BLEU | Δ Test BLEU | p (BLEU) | Test chrF | p (chrF) |"
    assert "| +RNN+WP | 40.03 ± 0.00 | 38.27 ± 0.00 | +0.00 |" in md
    # each system's table and ini have exactly its columns
    for slug, columns in [("rnn", 5), ("wp", 5), ("rnn-wp", 6)]:
        assert read_num_scores(out / "tables" / f"{slug}.phrase-table.gz") == columns
        ini = MosesIni.read(out / slug / "moses.ini")
        table = ini.phrase_table()
        assert table.args["num-features"] == str(columns)
        assert table.args["path"] == str(out / "tables" / f"{slug}.phrase-table.gz")
        assert ini.weights("TranslationModel0") == [0.2] * columns
    # 4 systems x 2 replicates, seeds 101 and 102 in every system
    tuning = calls(moses.root, "mert-moses.pl")
    assert len(tuning) == 8
    seeds = sorted(a for c in tuning for a in c["argv"] if a.startswith("--mertmertargs"))
    assert seeds == ["--mertmertargs=-r 101 "] * 4 + ["--mertmertargs=-r 102 "] * 4
    assert len(calls(moses.root, "moses")) == 8
    # rerun: nothing is tuned or decoded again
    again = run_ablation(config, moses, report=lambda message: None)
    assert len(calls(moses.root, "mert-moses.pl")) == 8 and len(calls(moses.root, "moses")) == 8
    pd.testing.assert_frame_equal(again, summary)


def test_interrupted_replicate_is_continued(setup):
    moses, config = setup
    config.systems, config.replicates = ["Baseline"], 1
    set_fake(moses.root, stop_after=3)
    with pytest.raises(MosesRunError):
        run_ablation(config, moses, report=lambda message: None)
    set_fake(moses.root, stop_after=None)
    run_ablation(config, moses, report=lambda message: None)
    first, second = calls(moses.root, "mert-moses.pl")
    assert "--continue" not in first["argv"] and "--continue" in second["argv"]
    assert (config.out_dir / "baseline/rep1/result.json").is_file()


def test_figure_is_a_png(tmp_path):
    _, rescored = small_system(tmp_path, 50)
    out = plot_rnn_vs_direct(rescored, 4, tmp_path / "fig3.png", sample_size=20)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
