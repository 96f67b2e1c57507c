"""Scale-aware starting weights: the columns' magnitudes, the rule on hand-made and real tables,
the layout check, and the warm-start ini (the tuned Baseline's weights plus the new columns')."""

import difflib
import gzip
import math

import pytest

from moses_integration.tables import starting_weights
from moses_integration.errors import MosesConfigError
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.tables.starting_weights import (cached_column_stats, check_layout, measure_columns,
                                                new_column_weights, scaled_weights, warm_start_ini)
from moses_integration.tables.columns import ColumnLayout
from tests.fake_moses import FIXTURES, needs_fixtures
from tests.fake_moses.systems import EXAMPLE_TABLE, expected_starts
from tests.helpers import rescore

TUNED = [0.0217852, 0.0771391, 0.0807805, 0.0130301]  # tuning/moses.ini, TranslationModel0


def table(tmp_path, rows, name="pt.gz"):
    """A gzipped table whose line i has the scores rows[i]."""
    path = tmp_path / name
    path.write_bytes(gzip.compress("".join(
        f"s{i} ||| t{i} ||| {' '.join(rows[i])} ||| 0-0 ||| 1 1 1 ||| |||\n"
        for i in range(len(rows))).encode()))
    return path


def exp_row(*logs):
    return [f"{math.exp(v):.9g}" for v in logs]


@pytest.fixture
def synthetic(tmp_path):
    """Phrase-table columns of magnitude 1, 2, 3, 4; an RNN column of 14; a penalty of 0 or 2."""
    rows = [exp_row(-1, -2, -3, -4, -14, 0), exp_row(-1, -2, -3, -4, -14, 2),
            exp_row(-1, -2, -3, -4, -14, 0), exp_row(-1, -2, -3, -4, -14, 2)]
    return measure_columns(table(tmp_path, rows))


def test_magnitudes_floor_at_minus_100_like_moses(tmp_path):
    stats = measure_columns(table(tmp_path, [["0", "1", "2.718281828"], ["1e-50", "1", "1"]]))
    assert stats.num_lines == 2
    assert stats.mean_abs_log == pytest.approx([100.0, 0.0, 0.5])
    assert stats.mean_abs_log_nonzero == pytest.approx([100.0, 0.0, 1.0])
    assert stats.nonzero_lines == [2, 0, 1]
    assert stats.min_log == pytest.approx([-100.0, 0.0, 0.0])
    assert stats.max_log == pytest.approx([-100.0, 0.0, 1.0])


def test_the_rule_on_known_magnitudes(synthetic):
    layout = ColumnLayout(("rnn", "wp"))
    # C = 0.2 * (1 + 2 + 3 + 4) / 4 = 0.5: the RNN starts at 0.5 / 14, the penalty at -0.5 / 2
    assert scaled_weights([0.2] * 4, synthetic, layout, ["rnn", "wp"]) == [0.0357, -0.25]
    # tuned weights: C = (0.0217852 + 2 * 0.0771391 + 3 * 0.0807805 + 4 * 0.0130301) / 4 = 0.11763
    assert scaled_weights(TUNED, synthetic, layout, ["rnn", "wp"]) == [0.0084, -0.0588]
    assert scaled_weights(TUNED, synthetic, layout, ["wp"]) == [-0.0588]
    assert new_column_weights(TUNED, layout, ["rnn", "wp"], synthetic, 0.3) == [0.3, 0.3]
    assert new_column_weights(TUNED, layout, [], synthetic, None) == []


def test_a_penalty_that_is_always_zero_counts_one_word(tmp_path):
    stats = measure_columns(table(tmp_path, [exp_row(-1, -1, -1, -1, -5, 0)] * 3))
    assert scaled_weights([0.2] * 4, stats, ColumnLayout(("rnn", "wp")), ["rnn", "wp"]) == [0.04, -0.2]


@pytest.fixture(scope="module")
def real_rescored(tiny_model_path, tmp_path_factory):
    """The bundled 4,000-line slice of the real table, scored by a real (tiny) model."""
    out = tmp_path_factory.mktemp("real") / "pt.rnn.gz"
    done = rescore("-q", "score", EXAMPLE_TABLE, "--model", tiny_model_path, "-o", out, "--unk-penalty")
    assert done.returncode == 0, done.stderr
    return out


@needs_fixtures
@pytest.mark.parametrize("ini", ["model/moses.ini", "tuning/moses.ini"])
def test_starting_weights_from_a_real_ini_and_table(real_rescored, ini):
    weights = MosesIni.read(FIXTURES / ini).weights("TranslationModel0")
    stats = measure_columns(real_rescored)
    # the real table's own columns: φ(f|e), lex(f|e), φ(e|f), lex(e|f) (natural logs)
    assert [round(m, 2) for m in stats.mean_abs_log[:4]] == [1.45, 8.37, 1.59, 10.38]
    assert stats.max_log[4] <= 0 <= stats.min_log[5]  # log p, and exp(count)
    starts = scaled_weights(weights, stats, ColumnLayout(("rnn", "wp")), ["rnn", "wp"])
    assert starts == expected_starts(real_rescored, weights, ["rnn", "wp"])
    rnn_contribution = starts[0] * stats.mean_abs_log[4]
    average = sum(w * m for w, m in zip(weights, stats.mean_abs_log)) / 4
    assert rnn_contribution == pytest.approx(average, rel=5e-3)
    if ini == "tuning/moses.ini":  # issue 12: 0.2 gave the RNN ten times the others' say
        assert 0 < starts[0] < 0.02


@pytest.mark.parametrize("rows, names, message", [
    ([exp_row(-1, -1, -1, -1, -3, -2)], ("rnn", "wp"),
     "pt.gz: column 6 (wp) has values below 1 (ln down to -2), but the word penalty is exp(count) "
     ">= 1: is it a model column?"),
    ([exp_row(-1, -1, -1, -1, 1)], ("rnn",),
     "pt.gz: column 5 (rnn) has values above 1 (ln up to 1), but a model column holds "
     "probabilities: is it the word penalty?"),
])
def test_layout_check(tmp_path, rows, names, message):
    path = table(tmp_path, rows)
    with pytest.raises(MosesConfigError) as info:
        check_layout(measure_columns(path), ColumnLayout(names), 4, "pt.gz")
    assert str(info.value).startswith(message)


def test_unscalable_cases_ask_for_initial_weight(tmp_path, synthetic):
    with pytest.raises(MosesConfigError, match=r"ini: cannot scale .* weights \[0, 0, 0, 0\] give "
                                               r"its columns no weight; pass --initial-weight"):
        scaled_weights([0, 0, 0, 0], synthetic, ColumnLayout(("rnn",)), ["rnn"], "ini")
    constant = measure_columns(table(tmp_path, [exp_row(-1, -1, -1, -1, 0)], "c.gz"))
    with pytest.raises(MosesConfigError, match=r"column 5 \(rnn\) is 1 on every line"):
        scaled_weights([0.2] * 4, constant, ColumnLayout(("rnn",)), ["rnn"])


def test_stats_are_cached_until_the_table_changes(tmp_path, monkeypatch):
    path = table(tmp_path, [exp_row(-1, -2, -3, -4, -5)])
    first = cached_column_stats(path, tmp_path / "stats.json")
    monkeypatch.setattr(starting_weights, "measure_columns", lambda p: pytest.fail("measured again"))
    assert cached_column_stats(path, tmp_path / "stats.json") == first
    monkeypatch.undo()
    table(tmp_path, [exp_row(-1, -2, -3, -4, -7)] * 2)  # the same path, new contents
    assert cached_column_stats(path, tmp_path / "stats.json").mean_abs_log[4] == pytest.approx(7)


@needs_fixtures
def test_warm_start_ini_takes_every_tuned_weight(tmp_path):
    system = MosesIni.read(FIXTURES / "model/moses.ini")
    system.add_score_columns(system.phrase_table(), "rnn.gz", 2, [0.2, 0.2])
    tuned = MosesIni.read(FIXTURES / "tuning/moses.ini")
    start = warm_start_ini(system, tuned, "TranslationModel0", [0.0084, -0.0588])
    assert start.all_weights() == {**tuned.all_weights(), "TranslationModel0": TUNED + [0.0084, -0.0588]}
    diff = [line for line in difflib.unified_diff(system.text().splitlines(), start.text().splitlines(),
                                                  n=0, lineterm="") if line[:1] in "+-"]
    changed = [line[1:].split("=")[0] for line in diff if not line.startswith(("+++", "---"))]
    # the weight lines whose values differ, nothing else (UnknownWordPenalty0 is 1 in both)
    assert sorted(set(changed)) == sorted(set(tuned.all_weights()) - {"UnknownWordPenalty0"})
    with pytest.raises(MosesConfigError, match=r"expected 5 weights for TranslationModel0, found 4"):
        warm_start_ini(system, tuned, "TranslationModel0", [0.1])  # 5 + 1 columns != 6
