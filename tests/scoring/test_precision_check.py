"""`--precision auto` when scoring: bf16 only where the CPU has native bf16 (or on CUDA) AND a
check of each model on the table's first pairs keeps bf16 near fp32; fp32 otherwise, saying why
in one line. The CPU's flags and the check's scores are mocked, so the cases run on any CPU."""

import gzip
import logging
import math

import numpy as np
import pytest
import torch

from moses_integration.nbest.rnn_features import NbestModel, rescore_nbest
from moses_integration.scorer import pair_scorer
from rescorer.cli.main import main
from rescorer.errors import RescorerError
from rescorer.models.model_files import load_model
from rescorer.runtime.cpu_features import CpuFeatures
from rescorer.scoring import precision_check, units
from rescorer.scoring.batch_scoring import score_encoded
from rescorer.scoring.precision_check import (MAX_MEAN_DELTA, MIN_SAMPLE_PAIRS, NoSample, check_bf16,
                                              choose_precision, compare, table_sample)
from rescorer.scoring.rnn_scorer import InProcessScorer
from tests.helpers import FIXTURE_FILES, first_lines, invoke

MODEL = FIXTURE_FILES / "v1-model.pt"
CPU, CUDA = torch.device("cpu"), torch.device("cuda")
BF16_CPU = CpuFeatures("Test CPU", frozenset({"avx2", "avx512f", "avx512_bf16"}))
AVX2_CPU = CpuFeatures("Old CPU", frozenset({"avx2"}))
# two sources with two targets each, one with one: (src, tgt) as a table has them
PAIRS = [("a", "x"), ("a", "y"), ("b", "x"), ("b", "z"), ("c", "x")]
FP32 = np.array([-1.0, -2.0, -3.0, -2.5, -4.0])


def fake_scores(bf16_moved_by):
    """A `score` for the check: FP32's scores, moved by `bf16_moved_by` (an array) under bf16;
    it records the precisions it was asked for."""
    asked = []

    def score(bundle, src, tgt, precision):
        asked.append(precision)
        assert len(src) == len(tgt) == len(PAIRS)
        return FP32 + (bf16_moved_by if precision == "bf16" else 0.0)

    score.asked = asked
    return score


def refuse(*args):
    raise AssertionError("the check ran")


@pytest.fixture(scope="module")
def bundle():
    return load_model(MODEL)


@pytest.fixture()
def toy_samples_checked(monkeypatch):
    """The check's bounds on the 5-pair toy sample PAIRS: the minimum sample, which would leave it
    unchecked, has tests of its own (test_a_sample_under_the_minimum_...)."""
    monkeypatch.setattr(precision_check, "MIN_SAMPLE_PAIRS", len(PAIRS))


def test_the_figures_are_the_mean_shift_and_the_best_targets_kept():
    check = compare("m.pt", FP32, FP32 + np.array([0.01, -0.01, 0.0, -0.6, 0.02]), [src for src, _ in PAIRS])
    assert check.pairs == 5 and check.sources == 2  # c has one target: nothing to rank
    assert math.isclose(check.mean_delta, 0.64 / 5)
    assert check.best_kept == 0.5  # a keeps x; b's best goes from z (-2.5) to x (-3.0)
    assert not check.passed
    assert "m.pt: mean |delta log p| 0.128 over 5 pairs (bound 0.02), best target kept for 50.0% of 2 " \
           "sources (bound 99%)" == check.describe()


@pytest.mark.usefixtures("toy_samples_checked")
def test_auto_is_bf16_where_the_cpu_has_the_flags_and_the_check_passes(bundle):
    score = fake_scores(np.full(5, 0.005))
    choice = choose_precision("auto", CPU, [("m.pt", bundle)], lambda: PAIRS, features=BF16_CPU, score=score)
    assert choice.precision == "bf16" and sorted(score.asked) == ["bf16", "fp32"]
    assert choice.line.startswith("precision auto: bf16, native on this CPU (avx512_bf16) and within the bounds")
    assert "m.pt: mean |delta log p| 0.005 over 5 pairs (bound 0.02), best target kept for 100.0% of 2 " \
           "sources" in choice.line and "\n" not in choice.line


@pytest.mark.parametrize("moved, figure", [
    (np.full(5, 0.03), "mean |delta log p| 0.03 over 5 pairs"),  # too far on average, ranking kept
    (np.array([0.0, 0.0, 0.0, -0.6, 0.0]), "best target kept for 50.0% of 2 sources"),  # b's best changes
    (np.full(5, np.nan), "mean |delta log p| nan"),  # bf16 overflowed
])
@pytest.mark.usefixtures("toy_samples_checked")
def test_a_failed_check_gives_fp32_and_one_line_with_the_figures(bundle, moved, figure):
    choice = choose_precision("auto", CPU, [("m.pt", bundle)], lambda: PAIRS, features=BF16_CPU,
                              score=fake_scores(moved))
    assert choice.precision == "fp32"
    assert choice.line.startswith("precision auto: fp32, as bf16 (native on this CPU (avx512_bf16)) moved the "
                                  "scores") and figure in choice.line and "\n" not in choice.line


@pytest.mark.usefixtures("toy_samples_checked")
def test_every_model_must_pass(bundle):
    score = fake_scores(np.full(5, 0.005))
    far = fake_scores(np.full(5, 0.5))
    calls = iter([score, score, far, far])  # the first model's fp32 and bf16, then the second's

    def either(*args):
        return next(calls)(*args)

    choice = choose_precision("auto", CPU, [("near.pt", bundle), ("far.pt", bundle)], lambda: PAIRS,
                              features=BF16_CPU, score=either)
    assert choice.precision == "fp32" and [check.passed for check in choice.checks] == [True, False]
    assert "near.pt: mean |delta log p| 0.005" in choice.line and "far.pt: mean |delta log p| 0.5" in choice.line


@pytest.mark.parametrize("features", [AVX2_CPU, None], ids=["avx2-only", "no-cpuinfo"])
def test_without_the_flags_auto_is_fp32_and_nothing_is_checked(bundle, features):
    choice = choose_precision("auto", CPU, [("m.pt", bundle)], refuse, features=features, score=refuse)
    assert choice == precision_check.PrecisionChoice("fp32")


@pytest.mark.parametrize("asked", ["fp32", "bf16", "int8"])
@pytest.mark.parametrize("features", [BF16_CPU, AVX2_CPU], ids=["bf16-cpu", "avx2-only"])
def test_an_explicit_precision_is_never_checked(bundle, asked, features):
    choice = choose_precision(asked, CPU, [("m.pt", bundle)], refuse, features=features, score=refuse)
    assert choice == precision_check.PrecisionChoice(asked)


@pytest.mark.usefixtures("toy_samples_checked")
def test_cuda_decides_auto_by_the_same_check(bundle):
    """No GPU needed: the device is only named, and the check's scores are mocked."""
    passing = choose_precision("auto", CUDA, [("m.pt", bundle)], lambda: PAIRS, features=None,
                               score=fake_scores(np.full(5, 0.001)))
    assert passing.precision == "bf16" and passing.line.startswith("precision auto: bf16, native on CUDA")
    failing = choose_precision("auto", CUDA, [("m.pt", bundle)], lambda: PAIRS, features=None,
                               score=fake_scores(np.full(5, 0.045)))
    assert failing.precision == "fp32" and "mean |delta log p| 0.045" in failing.line
    assert choose_precision("fp32", CUDA, [("m.pt", bundle)], refuse, score=refuse).precision == "fp32"
    with pytest.raises(RescorerError, match="int8 runs on the CPU only"):
        choose_precision("int8", CUDA, [("m.pt", bundle)], refuse, score=refuse)


def test_a_table_that_gives_no_sample_is_scored_in_fp32_saying_why(bundle):
    def stream():
        raise NoSample("stdin can be read only once")

    choice = choose_precision("auto", CPU, [("m.pt", bundle)], stream, features=BF16_CPU, score=refuse)
    assert choice.precision == "fp32"
    assert choice.line == ("precision auto: fp32, unchecked (0 pairs sampled): stdin can be read only once; "
                           "--precision bf16 scores in bf16 without the check")


def sample_of(size):
    """`size` pairs, two targets per source."""
    return [(f"source{i // 2}", f"target{i % 2}") for i in range(size)]


@pytest.mark.parametrize("size", [1, 9, MIN_SAMPLE_PAIRS - 1])
def test_a_sample_under_the_minimum_stays_fp32_unchecked_and_says_how_many_pairs(bundle, size):
    """Issue 45: auto took bf16 on the 9 pairs of a small n-best list, where the same model got fp32
    on a 2,000-pair sample. Below MIN_SAMPLE_PAIRS nothing is scored for the check."""
    choice = choose_precision("auto", CPU, [("m.pt", bundle)], lambda: sample_of(size), features=BF16_CPU,
                              score=refuse)
    pairs = "1 pair" if size == 1 else f"{size} pairs"
    assert choice == precision_check.PrecisionChoice(
        "fp32", f"precision auto: fp32, unchecked: {pairs} to check, fewer than the {MIN_SAMPLE_PAIRS} the check "
                f"needs to tell bf16's error from noise (bf16 is native on this CPU (avx512_bf16)); --precision bf16 "
                f"scores in bf16 without the check")


@pytest.mark.parametrize("moved, precision, said", [
    (0.0, "bf16", "precision auto: bf16, native on this CPU (avx512_bf16) and within the bounds on the first "
                  f"{MIN_SAMPLE_PAIRS} pairs to score: m.pt: mean |delta log p| 0 over {MIN_SAMPLE_PAIRS} pairs"),
    (0.5, "fp32", "precision auto: fp32, as bf16 (native on this CPU (avx512_bf16)) moved the scores of the first "
                  f"{MIN_SAMPLE_PAIRS} pairs to score too far: m.pt: mean |delta log p| 0.5 over {MIN_SAMPLE_PAIRS} "
                  "pairs"),
])
def test_a_sample_of_the_minimum_is_checked_and_the_line_says_its_size(bundle, moved, precision, said):
    def score(bundle, src, tgt, precision):
        return np.zeros(len(src)) - (moved if precision == "bf16" else 0.0)

    choice = choose_precision("auto", CPU, [("m.pt", bundle)], lambda: sample_of(MIN_SAMPLE_PAIRS),
                              features=BF16_CPU, score=score)
    assert choice.precision == precision and choice.line.startswith(said), choice.line


def test_the_sample_is_the_tables_first_good_pairs(tmp_path, example_table):
    table = first_lines(example_table, 30, tmp_path / "t.gz")
    lines = gzip.decompress(table.read_bytes()).split(b"\n")
    (tmp_path / "bad.txt").write_bytes(b"\n".join([b"not a line", *lines]))
    sample = table_sample(tmp_path / "bad.txt", size=20)
    assert len(sample) == 20 and sample == table_sample(table, size=20)  # the bad line skipped
    assert sample[0] == tuple(part.strip().decode() for part in lines[0].split(b"|||")[:2])
    assert len(table_sample(table)) == 30  # all, when the table is shorter than the sample
    with pytest.raises(NoSample, match="stdin can be read only once"):
        table_sample("-")


def test_the_real_check_on_a_trained_model_passes(bundle, example_table):
    """bf16 autocast itself (emulated where the CPU has no bf16 units): a trained model's scores
    of the example table's first pairs move by far less than the bound."""
    check = check_bf16(bundle, "v1-model.pt", table_sample(example_table, size=300))
    assert check.pairs == 300 and check.sources > 10 and check.passed
    assert 0 < check.mean_delta < MAX_MEAN_DELTA / 4


# The commands: `rescore score`, `rescore TABLE --model` and the Moses wing's scorer.

def bf16_cpu(monkeypatch):
    monkeypatch.setattr(precision_check, "cpu_features", lambda: BF16_CPU)


def bf16_moved(monkeypatch, by: float) -> list:
    """The check's bf16 scores moved by `by` (the scoring itself is untouched); returns the
    precisions the check scored in, one per call."""
    real = precision_check.score_encoded
    asked = []

    def score_encoded(model, src, tgt, token_budget, precision):
        asked.append(precision)
        return real(model, src, tgt, token_budget, precision) + (by if precision == "bf16" else 0.0)

    monkeypatch.setattr(precision_check, "score_encoded", score_encoded)
    return asked


def score(table, out, *options):
    result = invoke(main, "score", table, "--model", MODEL, "-o", out, "--device", "cpu", *options)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def table_and_outputs(tmp_path_factory, example_table):
    """1,200 lines of the example table, and its bytes scored with --precision fp32 and bf16."""
    directory = tmp_path_factory.mktemp("explicit")
    table = first_lines(example_table, 1200, directory / "t.gz")
    outputs = {}
    for precision in ("fp32", "bf16"):
        signature = score(table, directory / f"{precision}.gz", "--precision", precision)
        assert f"|precision:{precision}|" in signature and "precision auto" not in signature
        outputs[precision] = gzip.decompress((directory / f"{precision}.gz").read_bytes())
    assert outputs["fp32"] != outputs["bf16"]
    return table, outputs


@pytest.mark.parametrize("command", ["score", "run"])
def test_score_and_run_take_bf16_where_it_passes(monkeypatch, tmp_path, table_and_outputs, command):
    table, outputs = table_and_outputs
    bf16_cpu(monkeypatch)
    result = invoke(main, command, table, "--model", MODEL, "-o", tmp_path / "o.gz", "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert "precision auto: bf16, native on this CPU (avx512_bf16)" in result.output
    assert "v1-model.pt: mean |delta log p| " in result.output and "over 1200 pairs" in result.output
    assert "|precision:bf16|" in result.output
    assert gzip.decompress((tmp_path / "o.gz").read_bytes()) == outputs["bf16"]


def test_a_failed_check_scores_the_fp32_bytes(monkeypatch, tmp_path, table_and_outputs):
    table, outputs = table_and_outputs
    bf16_cpu(monkeypatch)
    bf16_moved(monkeypatch, 0.05)
    output = score(table, tmp_path / "o.gz")
    assert "precision auto: fp32, as bf16 (native on this CPU (avx512_bf16)) moved the scores" in output
    assert "|precision:fp32|" in output
    assert gzip.decompress((tmp_path / "o.gz").read_bytes()) == outputs["fp32"]


def test_without_the_flags_the_fp32_bytes_come_with_no_check_and_no_line(monkeypatch, tmp_path,
                                                                         table_and_outputs):
    table, outputs = table_and_outputs
    monkeypatch.setattr(precision_check, "cpu_features", lambda: AVX2_CPU)
    asked = bf16_moved(monkeypatch, 0.0)
    output = score(table, tmp_path / "o.gz")
    assert asked == [] and "precision auto" not in output and "|precision:fp32|" in output
    assert gzip.decompress((tmp_path / "o.gz").read_bytes()) == outputs["fp32"]


def test_a_resumed_run_keeps_the_precision_its_units_were_scored_in(monkeypatch, tmp_path, table_and_outputs):
    """The first run chose bf16 and stopped after unit 0; the check would now fail, but the
    resume scores the rest in bf16 too (no check), so the table is the bf16 table throughout."""
    table, outputs = table_and_outputs
    bf16_cpu(monkeypatch)
    real_fault = units.injected_fault

    def fail_after_unit_0(point, unit=0):
        if (point, unit) == ("after-record", 0):
            raise RescorerError("stopped after unit 0")
        real_fault(point, unit)

    monkeypatch.setattr(units, "injected_fault", fail_after_unit_0)
    first = invoke(main, "score", table, "--model", MODEL, "-o", tmp_path / "o.gz", "--device", "cpu",
                   "--unit-lines", 500)
    assert first.exit_code != 0 and "precision auto: bf16" in first.output
    assert "1 finished unit (500 lines) is kept" in first.output
    assert units.recorded_precision(tmp_path / "o.gz") == "bf16"
    monkeypatch.setattr(units, "injected_fault", real_fault)
    asked = bf16_moved(monkeypatch, 0.05)  # a check now would choose fp32

    refused = invoke(main, "score", table, "--model", MODEL, "-o", tmp_path / "o.gz", "--device", "cpu",
                     "--unit-lines", 500, "--resume", "--precision", "fp32")
    assert refused.exit_code != 0 and "precision 'bf16' (partial run) vs 'fp32' (now)" in refused.output
    resumed = score(table, tmp_path / "o.gz", "--unit-lines", 500, "--resume")
    assert asked == []
    assert "precision auto: bf16, as the interrupted run chose for the units it finished (no check)" in resumed
    assert "|precision:bf16|" in resumed and "500 lines were done by the interrupted run" in resumed
    score(table, tmp_path / "straight.gz", "--unit-lines", 500, "--precision", "bf16")  # chunked alike
    written, straight = (gzip.decompress((tmp_path / name).read_bytes()) for name in ("o.gz", "straight.gz"))
    assert written == straight and written != outputs["fp32"]


def test_the_moses_wing_scorer_checks_each_model_once(monkeypatch, tmp_path, table_and_outputs, caplog):
    table, outputs = table_and_outputs
    bf16_cpu(monkeypatch)
    asked = bf16_moved(monkeypatch, 0.05)
    scorer = InProcessScorer("cpu")
    with caplog.at_level(logging.INFO, logger="rescorer"):
        scorer.score_table(table, tmp_path / "a.gz", [MODEL])
        scorer.score_table(table, tmp_path / "b.gz", [MODEL])
        pairs = scorer.score_pairs(MODEL, [("god", "dieu"), ("the earth", "la terre")])
    assert asked == ["fp32", "bf16"]  # one check, on the first table
    lines = [record.getMessage() for record in caplog.records if "precision auto" in record.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("precision auto: fp32, as bf16") and "over 1200 pairs" in lines[0]
    for name in ("a.gz", "b.gz"):
        assert gzip.decompress((tmp_path / name).read_bytes()) == outputs["fp32"]
    np.testing.assert_array_equal(pairs, InProcessScorer("cpu", "fp32").score_pairs(
        MODEL, [("god", "dieu"), ("the earth", "la terre")]))

    monkeypatch.setattr(precision_check, "score_encoded", score_encoded)  # the real check: it passes
    passing = InProcessScorer("cpu")
    pairs = [("god", "dieu"), ("the earth", "la terre"), ("the earth", "le monde")] * (MIN_SAMPLE_PAIRS // 3 + 1)
    np.testing.assert_array_equal(passing.score_pairs(MODEL, pairs),
                                  InProcessScorer("cpu", "bf16").score_pairs(MODEL, pairs))
    assert passing.precision_for([MODEL], refuse) == "bf16"  # decided: not checked again


def test_a_small_nbest_list_is_scored_in_fp32_saying_how_few_pairs(monkeypatch, tmp_path, caplog):
    """Issue 45: `moses rescore-nbest` on a 9-line list took bf16 from the check on its 9 pairs.
    The model passes the real check on any sample; 9 pairs are too few to take bf16 on."""
    bf16_cpu(monkeypatch)
    asked = bf16_moved(monkeypatch, 0.0)
    source = tmp_path / "dev.en"
    source.write_text("in the beginning god created the heaven and the earth .\n")
    hypotheses = ["au commencement dieu créa les cieux et la terre ."] + [f"dieu créa la terre {i}" for i in range(8)]
    nbest = tmp_path / "dev.nbest"
    nbest.write_text("".join(f"0 ||| {hypothesis} ||| LM0= -1 ||| -1\n" for hypothesis in hypotheses))
    with caplog.at_level(logging.INFO, logger="rescorer"):
        rescore_nbest(nbest, tmp_path / "auto.nbest", source,
                      NbestModel("RNN0", pair_scorer(InProcessScorer("cpu"), MODEL)))
    assert asked == []  # no check ran
    said = [record.getMessage() for record in caplog.records if "precision auto" in record.getMessage()]
    assert said == [f"precision auto: fp32, unchecked: 9 pairs to check, fewer than the {MIN_SAMPLE_PAIRS} the "
                    f"check needs to tell bf16's error from noise (bf16 is native on this CPU (avx512_bf16)); "
                    f"--precision bf16 scores in bf16 without the check"]
    rescore_nbest(nbest, tmp_path / "fp32.nbest", source,
                  NbestModel("RNN0", pair_scorer(InProcessScorer("cpu", "fp32"), MODEL)))
    assert (tmp_path / "auto.nbest").read_bytes() == (tmp_path / "fp32.nbest").read_bytes()
