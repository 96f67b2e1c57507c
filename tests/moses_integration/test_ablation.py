"""Ablation with the stand-in Moses: systems from one rescored table, replicates with their own
seeds, warm starts from Baseline's tuned weights, scaled starting weights, decoder flags, the
test set filtered once, MERT iterations and curves in the results, resume without redoing."""

import gzip
import json
import struct
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from moses_integration.settings import AblationSettings
from moses_integration.study.ablation import run_ablation
from moses_integration.errors import MosesConfigError, MosesRunError, PreflightError
from moses_integration.evaluation.scores import EvalResult, evaluate_file
from moses_integration.study.score_plots import mert_curves_figure, plot_mert_curves, plot_rnn_vs_table
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.moses_install import find_moses
from moses_integration.tables.phrase_table import read_num_scores, select_score_columns
from moses_integration.evaluation.results_table import COLUMNS
from rescorer.errors import PhraseTableFormatError
from tests.fake_moses import FIXTURES, calls, install_fake_moses, needs_fixtures, set_fake
from tests.fake_moses.systems import expected_starts, model_score, penalty, small_system
from tests.helpers import FIXTURE_FILES

pytestmark = needs_fixtures

PNG = b"\x89PNG\r\n\x1a\n"
FLAGS = ("-search-algorithm", "1", "-s", "400")


@pytest.fixture
def setup(tmp_path):
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    ini, rescored = small_system(tmp_path)
    config = AblationSettings(
        ini_path=ini, rescored_table=rescored,
        dev=(FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz"),
        test=(FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz"),
        out_dir=tmp_path / "ablation", base_dir=FIXTURES, replicates=2, threads=2, seed=100,
        num_samples=20, decoder_flags=FLAGS, max_iterations=3)  # 3 of the fixture's 11 runs
    return moses, config


def quiet(message):
    pass


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


def test_select_columns_names_a_bad_line_and_leaves_no_output(tmp_path):
    table = tmp_path / "pt.txt"
    table.write_bytes(b"a ||| b ||| 0.1 0.2 ||| 0-0\r\nc ||| d ||| 0.3 x ||| 0-0\r\n")
    out = tmp_path / "out.gz"
    with pytest.raises(PhraseTableFormatError, match=r"pt.txt:2: non-numeric score"):
        select_score_columns(table, out, [1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pt.txt"]
    table.write_bytes(b"a ||| b ||| 0.1 0.2 ||| 0-0\r\nc ||| d |||  0.3  0.4  ||| 0-0\r\n")
    assert select_score_columns(table, out, [1]) == 2
    assert gzip.open(out, "rb").read() == b"a ||| b ||| 0.2 ||| 0-0\r\nc ||| d |||  0.4  ||| 0-0\r\n"


def test_ablation_builds_tunes_evaluates_and_resumes(setup):
    moses, config = setup
    summary = run_ablation(config, moses, report=quiet)
    out = config.out_dir
    assert list(summary.columns) == COLUMNS
    assert list(summary.system) == ["Baseline", "+RNN", "+WP", "+RNN+WP"]
    assert list(summary.start) == ["ini", "warm", "warm", "warm"]
    assert list(pd.read_csv(out / "results.csv").columns) == COLUMNS
    real = evaluate_file(FIXTURES / "eval/test.hyp.fr.gz", [FIXTURES / "corpus/test.fr.gz"])
    assert summary.test_bleu_mean.tolist() == [real.bleu] * 4  # the stand-in's output is the real one
    assert summary.dev_bleu_mean.tolist() == pytest.approx([40.0332] * 4)  # run3.mert.log
    assert summary.p_bleu.isna().tolist() == [True, False, False, False]
    # one test per replicate; the stand-in decodes every system alike, and an output equal to
    # the baseline's gets p 1 (sacrebleu's own test would say 1/(trials + 1) = 1/21)
    assert summary.p_bleu_per_replicate.tolist() == [""] + ["1.0000, 1.0000"] * 3
    # each system's table and cold-start ini have exactly its columns, with scaled weights
    starts = expected_starts(config.rescored_table, [0.2] * 4, ["rnn", "wp"])
    assert starts[0] > 0 > starts[1]
    for slug, kept in [("rnn", [0]), ("wp", [1]), ("rnn-wp", [0, 1])]:
        ini = MosesIni.read(out / slug / "moses.ini")
        path = ini.phrase_table().args["path"]
        assert read_num_scores(path) == int(ini.phrase_table().args["num-features"]) == 4 + len(kept)
        assert ini.weights("TranslationModel0") == [0.2] * 4 + [starts[k] for k in kept]
    assert MosesIni.read(out / "rnn-wp/moses.ini").phrase_table().args["path"] == str(config.rescored_table)
    # 4 systems x 2 replicates, seeds 101 and 102 in every system, the decoder flags in each
    tuning = calls(moses.root, "mert-moses.pl")
    assert len(tuning) == 8
    seeds = sorted(a for c in tuning for a in c["argv"] if a.startswith("--mertmertargs"))
    assert seeds == ["--mertmertargs=-r 101 "] * 4 + ["--mertmertargs=-r 102 "] * 4
    assert all("--decoder-flags=-threads 2 -search-algorithm 1 -s 400" in c["argv"] for c in tuning)
    decoding = calls(moses.root, "moses")
    assert len(decoding) == 8 and all(c["argv"][-6:] == ["-threads", "2", *FLAGS] for c in decoding)
    # rerun: nothing is tuned, filtered or decoded again
    again = run_ablation(config, moses, report=quiet)
    assert len(calls(moses.root, "mert-moses.pl")) == 8 and len(calls(moses.root, "moses")) == 8
    assert len(calls(moses.root, "filter-model-given-input.pl")) == 1
    pd.testing.assert_frame_equal(again, summary)


def test_warm_start_carries_baselines_tuned_weights(setup):
    moses, config = setup
    config = replace(config, replicates=1)
    run_ablation(config, moses, report=quiet)
    out = config.out_dir
    tuned = MosesIni.read(out / "baseline/rep1/mert/moses.ini").all_weights()
    assert tuned["TranslationModel0"] == [0.095535, 0.0136674, 0.0610063, 0.0163307]  # run3.mert.log
    starts = expected_starts(config.rescored_table, tuned["TranslationModel0"], ["rnn", "wp"])
    for slug, kept in [("rnn", [0]), ("wp", [1]), ("rnn-wp", [0, 1])]:
        start = MosesIni.read(out / slug / "rep1/start.moses.ini").all_weights()
        assert start == {**tuned, "TranslationModel0": tuned["TranslationModel0"] + [starts[k] for k in kept]}
        [call] = [c for c in calls(moses.root, "mert-moses.pl") if f"/{slug}/rep1/" in c["argv"][3]]
        assert MosesIni.read(out / slug / "rep1/mert/input.moses.ini").all_weights() == start
        assert json.loads((out / slug / "rep1/result.json").read_text())["start"] == "warm"
    # the input ini of the Baseline run has the ini's own weights
    assert MosesIni.read(out / "baseline/rep1/mert/input.moses.ini").weights("TranslationModel0") == [0.2] * 4


def test_cold_start_and_initial_weight(setup):
    moses, config = setup
    config = replace(config, replicates=1, warm_start=False, initial_weight=0.05, systems=("+RNN+WP",))
    summary = run_ablation(config, moses, report=quiet)
    assert list(summary.start) == ["ini", "cold"]
    start = MosesIni.read(config.out_dir / "rnn-wp/rep1/mert/input.moses.ini")
    assert start.weights("TranslationModel0") == [0.2] * 4 + [0.05, 0.05]
    assert start.weights("LM0") == [0.5]


def test_test_set_is_filtered_once_for_every_system(setup):
    moses, config = setup
    config = replace(config, replicates=1)
    run_ablation(config, moses, report=quiet)
    out = config.out_dir
    [call] = calls(moses.root, "filter-model-given-input.pl")
    assert call["argv"][0] == str(out / "test-filtered/filtered")
    sources = {line.split(b" ||| ")[0] for line in gzip.open(out / "test-filtered/filtered/phrase-table.0-0.1.1.gz", "rb")}
    test_text = gzip.open(FIXTURES / "corpus/test.en.gz", "rb").read()
    assert sources and all(b" " + s + b" " in b" " + test_text.replace(b"\n", b" \n ") for s in sources)
    for slug, columns in [("baseline", 4), ("rnn", 5), ("wp", 5), ("rnn-wp", 6)]:
        ini = MosesIni.read(out / slug / "rep1/test.moses.ini")
        table = out / "test-filtered" / f"{slug}.phrase-table.gz"
        assert ini.phrase_table().args["path"] == str(table)
        assert ini.feature("LexicalReordering0").args["path"] == \
            str(out / "test-filtered/filtered/reordering-table.0-0.1")
        assert ini.weights("TranslationModel0") == \
            MosesIni.read(out / slug / "rep1/mert/moses.ini").weights("TranslationModel0")
        assert read_num_scores(table) == columns
        assert len(gzip.open(table, "rb").read().splitlines()) == \
            len(gzip.open(out / "test-filtered/filtered/phrase-table.0-0.1.1.gz", "rb").read().splitlines())
        [decoding] = [c for c in calls(moses.root, "moses") if c["argv"][1] == str(ini.origin)]


def test_results_show_mert_iterations_and_curves(setup):
    moses, config = setup
    run_ablation(config, moses, report=quiet)
    out = config.out_dir
    md = (out / "results.md").read_text()
    assert md.splitlines()[0] == ("| System | Start | Dev BLEU (MERT, n-best) | Test BLEU | Δ Test BLEU | p (BLEU) "
                                  "| p (BLEU, Holm) | Test chrF | p (chrF) | p (chrF, Holm) "
                                  "| p (BLEU) per replicate | New-column weights | MERT iterations |")
    assert md.count(" | 1.0000, 1.0000 | ") == 3  # p (BLEU) per replicate
    assert "Test BLEU and chrF against 1 reference(s)." in md
    assert "| +RNN | warm | 40.03 ± 0.00 | 38.27 ± 0.00 | +0.00 |" in md
    assert md.count("| 3 max, 3 max |") == 4
    assert "**8 of 8 MERT runs stopped at --max-iterations before MERT converged**" in md
    assert "| Baseline | 1 | ini | 3 | --max-iterations | 39.24 → 39.13 | 38.27 |" in md
    curves = pd.read_csv(out / "mert-curves.csv")
    assert len(curves) == 4 * 2 * 3
    assert curves[curves.replicate == 1].dev_bleu.round(2).tolist()[:3] == [39.24, 27.03, 39.13]
    assert (out / "mert-curves.png").read_bytes()[:8] == PNG
    runs = pd.read_csv(out / "replicates.csv")
    assert runs.iterations.tolist() == [3] * 8 and set(runs.stopped_by) == {"max-iterations"}


def test_two_references_tune_and_score_every_system(setup):
    """Darby beside Segond: mert-moses.pl gets both dev references (as ref0, ref1), test BLEU
    is scored against both (the fixture README's 46.56), and results.md says so."""
    moses, config = setup
    config = replace(config, replicates=1, systems=("+RNN",), dev_refs=(FIXTURES / "corpus/dev.ref-darby.fr.gz",),
                     test_refs=(FIXTURES / "corpus/test.ref-darby.fr.gz",))
    summary = run_ablation(config, moses, report=quiet)
    assert summary.test_bleu_mean.round(2).tolist() == [46.56, 46.56]
    found = [json.loads(line) for line in (moses.root / "references.jsonl").read_text().splitlines()]
    assert [[Path(path).name for path in refs] for refs in found] == [["dev.ref0", "dev.ref1"]] * 2
    md = (config.out_dir / "results.md").read_text()
    assert "Test BLEU and chrF against 2 reference(s)." in md
    runs = pd.read_csv(config.out_dir / "replicates.csv")
    assert runs.references.tolist() == [2, 2]


def test_new_column_weights_are_reported_mean_and_sd(setup):
    moses, config = setup
    config = replace(config, systems=("+RNN+WP",))
    summary = run_ablation(config, moses, report=quiet)
    tuned = [MosesIni.read(config.out_dir / "rnn-wp" / f"rep{r}" / "mert" / "moses.ini").weights(
        MosesIni.read(config.ini_path).phrase_table().name)[-2:] for r in (1, 2)]
    assert tuned[0] == tuned[1]  # the stand-in's tuned ini keeps a new column's starting weight
    [row] = summary[summary.system == "+RNN+WP"].new_column_weights.tolist()
    assert row == f"rnn {tuned[0][0]:.4f} ± 0.0000; wp {tuned[0][1]:.4f} ± 0.0000"
    assert summary.new_column_weights.tolist()[0] == ""  # Baseline adds no column
    assert f"| {row} |" in (config.out_dir / "results.md").read_text()


def test_converged_runs_are_reported_as_such(setup):
    moses, config = setup
    config = replace(config, replicates=1, systems=("+RNN",), max_iterations=None)
    set_fake(moses.root, converge_after=7)
    run_ablation(config, moses, report=quiet)
    md = (config.out_dir / "results.md").read_text()
    assert "| +RNN | warm | 40.12 | 38.27 | +0.00 |" in md and md.count(" | 7 |\n") == 2
    assert "runs stopped at --max-iterations" not in md
    assert "| +RNN | 1 | warm | 7 | convergence | 39.24 → 40.06 |" in md


def test_several_model_columns(tmp_path):
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    ini, rescored = small_system(tmp_path, 200, (model_score, lambda i: model_score(i + 5), penalty))
    config = AblationSettings(
        ini_path=ini, rescored_table=rescored, new_columns=("bible-a", "bible-b", "wp"),
        dev=(FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz"),
        test=(FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz"),
        out_dir=tmp_path / "ablation", base_dir=FIXTURES, replicates=1, threads=2, num_samples=20,
        plot=False, max_iterations=2)
    summary = run_ablation(config, moses, report=quiet)
    assert list(summary.system) == ["Baseline", "+bible-a", "+bible-b", "+RNN", "+WP", "+RNN+WP"]
    base = [line.split(b" ||| ")[2].split() for line in gzip.open(rescored, "rb").read().splitlines()]
    for slug, kept in [("bible-a", [4]), ("bible-b", [5]), ("rnn", [4, 5]), ("wp", [6]),
                       ("rnn-wp", [4, 5, 6])]:
        table = MosesIni.read(config.out_dir / slug / "moses.ini").phrase_table().args["path"]
        scores = [line.split(b" ||| ")[2].split() for line in gzip.open(table, "rb").read().splitlines()]
        assert scores == [s[:4] + [s[k] for k in kept] for s in base]
    # without names, three new columns are ambiguous
    config = replace(config, new_columns=None, out_dir=tmp_path / "other")
    with pytest.raises(MosesConfigError, match=r"pt.rescored.gz:1: expected 5 or 6 scores .* found 7; "
                                               r"name the new columns with --new-columns"):
        run_ablation(config, moses, report=quiet)


def test_a_combination_of_columns_is_a_system(tmp_path):
    """`--system +a+c`: a system with exactly those columns, cut, tuned and reported like the others."""
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    ini, rescored = small_system(tmp_path, 200, (model_score, lambda i: model_score(i + 5),
                                                 lambda i: model_score(i + 9), penalty))
    config = AblationSettings(
        ini_path=ini, rescored_table=rescored, new_columns=("a", "b", "c", "wp"), systems=("+a+c", "+c+WP"),
        dev=(FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz"),
        test=(FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz"),
        out_dir=tmp_path / "ablation", base_dir=FIXTURES, replicates=1, threads=2, num_samples=20,
        plot=False, max_iterations=2)
    summary = run_ablation(config, moses, report=quiet)
    assert list(summary.system) == ["Baseline", "+a+c", "+c+WP"]
    base = [line.split(b" ||| ")[2].split() for line in gzip.open(rescored, "rb").read().splitlines()]
    for slug, kept in [("a-c", [4, 6]), ("c-wp", [6, 7])]:
        tuned = MosesIni.read(config.out_dir / slug / "rep1" / "test.moses.ini")
        assert len(tuned.weights("TranslationModel0")) == 4 + len(kept)
        table = MosesIni.read(config.out_dir / slug / "moses.ini").phrase_table().args["path"]
        scores = [line.split(b" ||| ")[2].split() for line in gzip.open(table, "rb").read().splitlines()]
        assert scores == [s[:4] + [s[k] for k in kept] for s in base]
    result = json.loads((config.out_dir / "c-wp" / "rep1" / "result.json").read_text())
    assert sorted(result["new_weights"]) == ["c", "wp"]


def test_layout_that_takes_a_model_column_for_the_penalty_is_refused(tmp_path):
    moses = find_moses(install_fake_moses(tmp_path / "moses"))
    ini, rescored = small_system(tmp_path, 50, (model_score, model_score))
    config = AblationSettings(
        ini_path=ini, rescored_table=rescored, out_dir=tmp_path / "ablation", base_dir=FIXTURES,
        dev=(FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz"),
        test=(FIXTURES / "corpus/test.en.gz", FIXTURES / "corpus/test.fr.gz"))
    with pytest.raises(MosesConfigError, match=r"column 6 \(wp\) has values below 1 .* is it a model column\?"):
        run_ablation(config, moses, report=quiet)
    assert calls(moses.root) == []


def test_interrupted_replicate_is_continued(setup):
    moses, config = setup
    config = replace(config, systems=("Baseline",), replicates=1)
    set_fake(moses.root, stop_after=3)
    with pytest.raises(MosesRunError):
        run_ablation(config, moses, report=quiet)
    set_fake(moses.root, stop_after=None)
    run_ablation(config, moses, report=quiet)
    first, second = calls(moses.root, "mert-moses.pl")
    assert "--continue" not in first["argv"] and "--continue" in second["argv"]
    assert (config.out_dir / "baseline/rep1/result.json").is_file()


def test_a_rerun_on_a_changed_table_is_refused(setup):
    moses, config = setup
    config = replace(config, systems=("Baseline",), replicates=1)
    run_ablation(config, moses, report=quiet)
    config.rescored_table.write_bytes(gzip.compress(gzip.open(config.rescored_table).read()[:-200]))
    with pytest.raises(MosesConfigError, match=r"ablation holds an ablation of .*pt.rescored.gz as "
                                               r"it was then \(size \d+\), not of"):
        run_ablation(config, moses, report=quiet)


def test_a_half_tuned_run_keeps_its_start(setup):
    moses, config = setup
    config = replace(config, systems=("Baseline",), replicates=1)
    run_ablation(config, moses, report=quiet)
    config = replace(config, systems=("+RNN",))
    set_fake(moses.root, stop_after=2)
    with pytest.raises(MosesRunError):
        run_ablation(config, moses, report=quiet)
    set_fake(moses.root, stop_after=None)
    config = replace(config, warm_start=False)
    with pytest.raises(MosesConfigError, match=r"rnn/rep1: this run began with a warm start, "
                                               r"asked now for a cold one"):
        run_ablation(config, moses, report=quiet)


def test_figure_is_a_png(tmp_path):
    _, rescored = small_system(tmp_path, 50)
    result = plot_rnn_vs_table(rescored, 4, tmp_path / "fig3.png", sample_size=20)
    assert result.path.read_bytes()[:8] == PNG and result.num_pairs == 20


# The MERT curves of the real bible-en-fr ablation (200 dev verses, warm starts, at most 8
# iterations): six systems on one panel, whose 4-column legend was cut off on both sides.
REAL_CURVES = {  # from its mert-curves.csv, rounded
    "Baseline": ("ini", "convergence", [44.64, 45.09, 44.86, 45.8, 45.74, 45.89, 46.05, 46.03]),
    "+cho2014": ("warm", "convergence", [44.54, 45.99, 46.03, 46.1, 45.88, 46.1]),
    "+rnnsearch": ("warm", "max-iterations", [44.49, 45.85, 38.08, 45.11, 44.86, 45.19, 45.57, 45.3]),
    "+RNN": ("warm", "convergence", [43.6, 42.81, 46.1, 46.1]),
    "+WP": ("warm", "convergence", [45.97, 8.85, 40.72, 45.65, 46.01, 46.17]),
    "+RNN+WP": ("warm", "convergence", [43.56, 42.78, 46.08, 46.0, 46.05]),
}


@pytest.mark.parametrize("replicates", [1, 3])
def test_mert_curves_png_holds_its_whole_legend(replicates, tmp_path):
    results = {name: [EvalResult(39.0, 59.0, "", "", 400, "", start=start, stopped_by=stop,
                                 iterations=len(curve), dev_bleu_curve=curve)] * replicates
               for name, (start, stop, curve) in REAL_CURVES.items()}
    fig = mert_curves_figure(results)
    renderer = fig.canvas.get_renderer()
    [legend] = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        f"{name} ({start} start)" for name, (start, _, _) in REAL_CURVES.items()] + [
        "converged", "stopped by --max-iterations", "stop reason unknown"]
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:  # below every panel, its tick labels and axis title included
        assert box.y1 <= ax.get_tightbbox(renderer).y0
    png = plot_mert_curves(results, tmp_path / "curves.png").read_bytes()
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    panels = max(ax.get_tightbbox(renderer).y1 for ax in fig.axes) - box.y0
    assert width >= box.width and height >= panels  # nothing of it cut off


def test_mert_curves_tick_whole_iterations():
    """Three panels of 5-iteration runs (the real combination's replicate 2) were ticked 1.0,
    1.5, ... 5.0."""
    curve = [47.96, 48.21, 48.45, 48.83, 48.81]
    run = EvalResult(46.9, 61.1, "", "", 802, "", start="warm", stopped_by="convergence",
                     iterations=5, dev_bleu_curve=curve)
    fig = mert_curves_figure({"Baseline": [run] * 3, "+fwdpw+inv": [run] * 3})
    for ax in fig.axes:
        assert [t for t in ax.get_xticks() if 1 <= t <= 5] == [1, 2, 3, 4, 5]


def test_reranked_rows_join_the_table(setup):
    """--rerank-model: Baseline's replicates get a +rerank row each: its tuned system's n-best
    lists decoded (tables filtered per set), scored, tuned with seed + r, reranked and tested."""
    from moses_integration.nbest.sentence_models import SentenceFeatures
    from moses_integration.nbest.rnn_features import NbestModel, add_sentence_features

    moses, config = setup
    config = replace(config, systems=("Baseline", "+RNN"))
    scored = []

    def add_features(nbest, source, out):
        scored.append(nbest.name)
        fake = NbestModel("RNNfwd", lambda pairs: [-float(len(t.split())) for _, t in pairs])
        add_sentence_features(nbest, out, source, [fake], per_word=False)

    features = SentenceFeatures(add_features, ["RNNfwd"])
    # --rerank-system needs --rerank-model in the record; the features themselves are handed in
    config = replace(config, rerank_systems=("Baseline",), rerank_models=(FIXTURES / "model/moses.ini",))
    summary = run_ablation(config, moses, report=quiet, rerank=features)
    assert list(summary.system) == ["Baseline", "+RNN", "+rerank"]
    assert summary.start.tolist() == ["ini", "warm", "rerank"]
    assert scored == ["dev.decoder.nbest", "test.decoder.nbest"] * 2
    for replicate, seed in ((1, "101"), (2, "102")):
        rerank = config.out_dir / "baseline" / f"rep{replicate}" / "rerank"
        assert (rerank / f"seed{seed}" / "test.reranked").is_file()
        tuned = MosesIni.read(rerank.parent / "mert" / "moses.ini")
        assert MosesIni.read(rerank / "test.moses.ini").all_weights() == tuned.all_weights()
    mert = [c for c in calls(moses.root, "mert")]
    assert [c["argv"][c["argv"].index("-r") + 1] for c in mert] == ["101", "102"]
    assert summary.new_column_weights.tolist()[-1] == "RNNfwd 0.0000 ± 0.0000"
    md = (config.out_dir / "results.md").read_text()
    assert "rerank = the system named before '+rerank'" in md
    assert "**4 of 4 MERT runs stopped at --max-iterations" in md  # the reranked rows ran no MERT
    again = run_ablation(config, moses, report=quiet, rerank=features)
    assert len(calls(moses.root, "mert")) == 2 and scored == ["dev.decoder.nbest", "test.decoder.nbest"] * 2
    pd.testing.assert_frame_equal(again, summary)


def length_features(scored, sign=-1.0, name="RNNfwd"):
    """An add_features whose one model scores sign * the hypothesis' length; `scored` collects
    the lists it scored."""
    from moses_integration.nbest.rnn_features import NbestModel, add_sentence_features

    def add_features(nbest, source, out):
        scored.append(nbest.name)
        fake = NbestModel(name, lambda pairs: [sign * len(t.split()) for _, t in pairs])
        add_sentence_features(nbest, out, source, [fake], per_word=False)

    return add_features


def test_a_rerun_with_another_rerank_model_or_optimizer_redoes_the_reranking(setup, tmp_path):
    """Issue 32 case 3: the reranking steps record the models' contents and the optimizer: another
    model scores the (kept) decoded lists again, another optimizer tunes again."""
    from moses_integration.nbest.sentence_models import SentenceFeatures

    moses, config = setup
    config = replace(config, systems=("Baseline",), replicates=1)
    model_a, model_b = tmp_path / "a.pt", tmp_path / "b.pt"
    model_a.write_bytes(b"model A")
    model_b.write_bytes(b"model B")
    scored = []
    run_ablation(config, moses, report=quiet,
                 rerank=SentenceFeatures(length_features(scored), ["RNNfwd"], scored_with=[str(model_a)]))
    rerank = config.out_dir / "baseline" / "rep1" / "rerank"
    first = gzip.open(rerank / "test.nbest.gz", "rt").readline()
    assert first.split(" ||| ")[2].endswith(f"RNNfwd= -{len(first.split(' ||| ')[1].split())}")
    model_b_features = SentenceFeatures(length_features(scored, +1.0), ["RNNfwd"], scored_with=[str(model_b)])
    run_ablation(config, moses, report=quiet, rerank=model_b_features)
    assert scored == ["dev.decoder.nbest", "test.decoder.nbest"] * 2
    assert len(calls(moses.root, "moses")) == 1 + 2  # test decoding, then dev and test lists once
    again = gzip.open(rerank / "test.nbest.gz", "rt").readline()
    assert again.split(" ||| ")[2].endswith(f"RNNfwd= {len(again.split(' ||| ')[1].split())}")
    assert len(calls(moses.root, "mert")) == 2
    config = replace(config, rerank_optimizer="batch-mira")
    summary = run_ablation(config, moses, report=quiet, rerank=model_b_features)
    assert len(calls(moses.root, "kbmira")) == 1 and len(scored) == 4
    assert json.loads((rerank / "seed101" / "weights.json").read_text())["optimizer"] == "kbmira"
    assert json.loads((rerank / "result.json").read_text())["bleu"] == pytest.approx(summary.test_bleu_mean.tolist()[-1])
    config = replace(config, rerank_optimizer="pro")  # PRO runs in numpy: no Moses optimizer is called
    summary = run_ablation(config, moses, report=quiet, rerank=model_b_features)
    assert len(calls(moses.root, "kbmira")) == 1 and len(calls(moses.root, "mert")) == 2
    assert json.loads((rerank / "seed101" / "weights.json").read_text())["optimizer"] == "pro"
    assert json.loads((rerank / "result.json").read_text())["bleu"] == pytest.approx(summary.test_bleu_mean.tolist()[-1])


def test_a_failed_reranking_is_resumed(setup):
    """Issue 32 case 12: the reranking's record and the row's result are separate files, so a
    reranking that failed once is continued by the rerun (it was TypeError on every rerun)."""
    from moses_integration.nbest.sentence_models import SentenceFeatures

    moses, config = setup
    config = replace(config, systems=("Baseline",), replicates=1)
    scored = []
    working = length_features(scored)

    def failing(nbest, source, out):
        if nbest.name == "test.decoder.nbest":
            raise MosesRunError("the scorer failed")
        working(nbest, source, out)

    with pytest.raises(MosesRunError, match="the scorer failed"):
        run_ablation(config, moses, report=quiet, rerank=SentenceFeatures(failing, ["RNNfwd"]))
    summary = run_ablation(config, moses, report=quiet, rerank=SentenceFeatures(working, ["RNNfwd"]))
    assert list(summary.system) == ["Baseline", "+rerank"]
    assert scored == ["dev.decoder.nbest", "test.decoder.nbest"]  # dev's scored list was kept


def test_a_replicates_test_scores_are_redone_when_what_they_were_made_from_changed(setup):
    """evaluation.record.json: another --detokenize, or a result.json without its record (an older
    rescorer's), decodes and scores test again; the tuning run is reused, never redone."""
    moses, config = setup
    config = replace(config, systems=("Baseline",), replicates=1)
    first = run_ablation(config, moses, report=quiet)
    rep = config.out_dir / "baseline" / "rep1"
    config = replace(config, detokenize_lang="fr")
    said = []
    again = run_ablation(config, moses, report=said.append)
    assert len(calls(moses.root, "moses")) == 2 and len(calls(moses.root, "mert-moses.pl")) == 1
    assert "Baseline replicate 1: done earlier, skipped" not in said
    assert again.test_bleu_mean.tolist() != first.test_bleu_mean.tolist()  # detokenized, scored with 13a
    (rep / "evaluation.record.json").unlink()
    run_ablation(config, moses, report=quiet)
    assert len(calls(moses.root, "moses")) == 3 and len(calls(moses.root, "mert-moses.pl")) == 1
    said.clear()
    run_ablation(config, moses, report=said.append)
    assert "Baseline replicate 1: done earlier, skipped" in said and len(calls(moses.root, "moses")) == 3


def test_the_cslm_rows_of_the_papers_table_1(setup):
    """--lm: Baseline, +RNN and +RNN+WP reranked with the CSLM alone, as +CSLM, +CSLM+RNN and
    +CSLM+RNN+WP, each in its replicate's rerank-cslm/, beside the sentence models' +rerank rows."""
    from moses_integration.nbest.sentence_models import SentenceFeatures

    moses, config = setup
    config = replace(config, replicates=1, systems=("Baseline", "+RNN", "+RNN+WP"))
    scored, lm_scored = [], []
    # --rerank-system needs --rerank-model in the record; the features themselves are handed in
    config = replace(config, rerank_systems=("Baseline",), rerank_models=(FIXTURES / "model/moses.ini",))
    summary = run_ablation(config, moses, report=quiet, rerank=SentenceFeatures(length_features(scored), ["RNNfwd"]),
                           cslm=SentenceFeatures(length_features(lm_scored, +1.0, "CSLM"), ["CSLM"]))
    assert list(summary.system) == ["Baseline", "+RNN", "+RNN+WP", "+rerank", "+CSLM", "+CSLM+RNN", "+CSLM+RNN+WP"]
    assert summary.start.tolist()[3:] == ["rerank"] * 4
    assert lm_scored == ["dev.decoder.nbest", "test.decoder.nbest"] * 3
    for slug in ("baseline", "rnn", "rnn-wp"):
        assert (config.out_dir / slug / "rep1" / "rerank-cslm" / "seed101" / "test.reranked").is_file()
    assert all(weights.startswith("CSLM ") for weights in summary.new_column_weights.tolist()[4:])
    assert "+CSLM, +CSLM+RNN, +CSLM+RNN+WP: Baseline, +RNN and +RNN+WP reranked" in \
        (config.out_dir / "results.md").read_text()


# The decoding rows (--nplm): the NeuralLM line as `rescore moses add-feature --nplm` wrote it
# into the real study's ini that Moses (built --with-nplm) decoded with (studies/nplm-speed,
# moses.cslm.ini: its [feature] line and its [weight] line), for a 7-gram CSLM at that path.
REAL_NEURAL_LM_LINE = "NeuralLM factor=0 order=7 path=/work/studies/nplm-speed/cslm.nplm name=NeuralLM0"
REAL_NEURAL_LM_WEIGHT = "NeuralLM0= 0.1"
NPLM = FIXTURE_FILES / "nplm" / "tiny.nplm"  # written by NPLM's own trainer: ngram_size 5
DECODING_ROWS = [("+CSLM(dec)", "cslm-dec", "Baseline", "baseline"),
                 ("+CSLM(dec)+RNN", "cslm-dec-rnn", "+RNN", "rnn"),
                 ("+CSLM(dec)+RNN+WP", "cslm-dec-rnn-wp", "+RNN+WP", "rnn-wp")]


def decodings(moses):
    """The decoder's runs, its -show-weights probes left out."""
    return [c for c in calls(moses.root, "moses") if "-show-weights" not in c["argv"]]


def test_the_decoding_rows_of_the_papers_table_1(setup):
    """--nplm: Baseline, +RNN and +RNN+WP again with the CSLM as Moses' NeuralLM, each tuned from
    that system's tuned weights plus the NeuralLM's start, decoded on test with the line, and
    tested against Baseline with Holm's correction over all five systems compared."""
    moses, config = setup
    config = replace(config, replicates=1, systems=("+RNN", "+RNN+WP"), nplm_path=NPLM)
    summary = run_ablation(config, moses, report=quiet)
    out = config.out_dir
    assert list(summary.system) == ["Baseline", "+RNN", "+RNN+WP"] + [name for name, *_ in DECODING_ROWS]
    assert summary.start.tolist() == ["ini"] + ["warm"] * 5
    line = REAL_NEURAL_LM_LINE.replace("order=7", "order=5").replace(
        "/work/studies/nplm-speed/cslm.nplm", str(NPLM.resolve()))
    for name, slug, base_name, base in DECODING_ROWS:
        # the row's ini: the base system's, plus the feature line after the last feature and the
        # weight (the n-gram LM's, LM0= 0.5 in the fixture's ini) after the last weight
        system = (out / base / "moses.ini").read_text().splitlines()
        row = (out / slug / "moses.ini").read_text().splitlines()
        weight = REAL_NEURAL_LM_WEIGHT.replace("0.1", "0.5")
        assert [l for l in row if l not in (line, weight)] == system
        ini = MosesIni.read(out / slug / "moses.ini")
        assert row.index(line) == ini.section_lines("feature")[-1] and row.index(weight) == ini.section_lines("weight")[-1]
        # warm start: replicate 1 of the system it extends, tuned, and the NeuralLM at its tuned LM0 weight
        tuned = MosesIni.read(out / base / "rep1/mert/moses.ini").all_weights()
        start = MosesIni.read(out / slug / "rep1/start.moses.ini").all_weights()
        assert start == {**tuned, "NeuralLM0": tuned["LM0"]}
        assert MosesIni.read(out / slug / "rep1/mert/input.moses.ini").all_weights() == start
        # test decoding: the tuned row with the filtered tables of the system it extends and the line
        test_ini = MosesIni.read(out / slug / "rep1/test.moses.ini")
        assert test_ini.phrase_table().args["path"] == str(out / "test-filtered" / f"{base}.phrase-table.gz")
        assert line in test_ini.text().splitlines()
        [decoding] = [c for c in calls(moses.root, "moses") if c["argv"][1] == str(out / slug / "rep1/test.moses.ini")]
        result = json.loads((out / slug / "rep1/result.json").read_text())
        tuned_row = MosesIni.read(out / slug / "rep1/mert/moses.ini").weights("NeuralLM0")[0]
        assert result["start"] == "warm" and result["new_weights"]["NeuralLM0"] == tuned_row
        assert tuned_row == pytest.approx(tuned["LM0"][0], abs=1e-6)  # the stand-in's MERT keeps a new weight
    rnn = MosesIni.read(out / "cslm-dec-rnn/rep1/mert/moses.ini")
    assert summary.new_column_weights.tolist()[4] == f"rnn {rnn.weights('TranslationModel0')[4]:.4f}; " \
        f"NeuralLM0 {rnn.weights('NeuralLM0')[0]:.4f}"
    # the stand-in decodes every system alike: p 1 each, and Holm over the 5 compared keeps 1
    assert summary.p_bleu.tolist()[1:] == [1.0] * 5
    assert summary.p_bleu_holm.tolist()[1:] == [1.0] * 5
    md = (out / "results.md").read_text()
    assert "| +CSLM(dec)+RNN+WP | warm |" in md and "Holm–Bonferroni over the 5 systems" in md
    assert "+CSLM(dec), +CSLM(dec)+RNN, +CSLM(dec)+RNN+WP: Baseline, +RNN and +RNN+WP with the CSLM" in md
    # rerun: nothing tuned or decoded again (only the preflight's probe of the decoder runs)
    assert len(calls(moses.root, "mert-moses.pl")) == len(decodings(moses)) == 6
    said = []
    again = run_ablation(config, moses, report=said.append)
    assert len(calls(moses.root, "mert-moses.pl")) == len(decodings(moses)) == 6
    assert "+CSLM(dec)+RNN replicate 1: done earlier, skipped" in said
    pd.testing.assert_frame_equal(again, summary)


def test_the_decoding_rows_alone_reuse_the_finished_systems(setup):
    """`--system +CSLM(dec)+RNN` after the tuned systems: only that row is tuned; +RNN, whose
    tuned weights start it, and Baseline are reused; a half-done MERT run of the row continues."""
    moses, config = setup
    config = replace(config, replicates=1, systems=("+RNN", "+RNN+WP"))
    run_ablation(config, moses, report=quiet)
    assert len(calls(moses.root, "mert-moses.pl")) == 3
    config = replace(config, systems=("+CSLM(dec)+RNN",), nplm_path=NPLM)
    set_fake(moses.root, stop_after=2)
    with pytest.raises(MosesRunError):
        run_ablation(config, moses, report=quiet)
    set_fake(moses.root, stop_after=None)
    said = []
    summary = run_ablation(config, moses, report=said.append)
    assert list(summary.system) == ["Baseline", "+RNN", "+CSLM(dec)+RNN"]
    assert "Baseline replicate 1: done earlier, skipped" in said and "+RNN replicate 1: done earlier, skipped" in said
    first, second = calls(moses.root, "mert-moses.pl")[3:]
    assert first["argv"][3] == second["argv"][3] == str(config.out_dir / "cslm-dec-rnn/rep1/mert/input.moses.ini")
    assert "--continue" not in first["argv"] and "--continue" in second["argv"]
    assert not (config.out_dir / "cslm-dec").exists() and not (config.out_dir / "cslm-dec-rnn-wp").exists()


def test_a_moses_without_nplm_is_refused_before_any_tuning(setup):
    moses, config = setup
    config = replace(config, replicates=1, nplm_path=NPLM)
    set_fake(moses.root, without_nplm=True)
    with pytest.raises(PreflightError, match=r"cannot decode with an NPLM model: its bin/moses says 'Feature name "
                                             r"NeuralLM is not registered', so it was built without NPLM"):
        run_ablation(config, moses, report=quiet)
    assert calls(moses.root, "mert-moses.pl") == []
    [probe] = calls(moses.root, "moses")
    assert probe["argv"][:2] == ["-show-weights", "-f"]


def test_a_decoding_row_needs_the_nplm_model(setup):
    moses, config = setup
    config = replace(config, systems=("+CSLM(dec)",))
    with pytest.raises(MosesConfigError, match=r"system\(s\) \+CSLM\(dec\) decode with the CSLM as Moses' NeuralLM: "
                                               r"give its NPLM export with --nplm"):
        run_ablation(config, moses, report=quiet)
    config = replace(config, systems=(), nplm_path=config.rescored_table)  # not an NPLM file
    with pytest.raises(PreflightError, match=r"pt.rescored.gz: not an NPLM model file"):
        run_ablation(config, moses, report=quiet)
    assert calls(moses.root, "mert-moses.pl") == []
