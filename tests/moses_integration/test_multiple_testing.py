"""Holm–Bonferroni over the systems an ablation compares, and the Δ the test is about."""

import pytest

from moses_integration.evaluation.multiple_testing import holm_bonferroni
from moses_integration.evaluation.results_table import summarize, to_markdown
from moses_integration.evaluation.scores import EvalResult


def test_holm_multiplies_the_ith_smallest_by_the_number_left_and_keeps_the_order():
    # Holm (1979): sorted 0.01, 0.02, 0.04 -> 3·0.01, 2·0.02, max(0.04, 1·0.04)
    corrected = holm_bonferroni({"Baseline": None, "a": 0.04, "b": 0.01, "c": 0.02})
    assert list(corrected) == ["Baseline", "a", "b", "c"]
    assert corrected["Baseline"] is None
    assert corrected["b"] == pytest.approx(0.03)
    assert corrected["c"] == pytest.approx(0.04)
    assert corrected["a"] == pytest.approx(0.04)


def test_holm_is_monotone_and_capped_at_one():
    # 2·0.02 = 0.04 would fall below the first's 3·0.015 = 0.045: step-down keeps 0.045
    corrected = holm_bonferroni({"a": 0.015, "b": 0.02, "c": 0.6})
    assert corrected == pytest.approx({"a": 0.045, "b": 0.045, "c": 0.6})
    assert holm_bonferroni({"a": 0.5, "b": 0.7}) == pytest.approx({"a": 1.0, "b": 1.0})
    assert holm_bonferroni({"only": 0.03}) == {"only": 0.03}  # one comparison: unchanged


def _run(bleu):
    return EvalResult(bleu=bleu, chrf=60.0, bleu_signature="", chrf_signature="", num_lines=1, hyp_path="")


def test_summary_gives_holm_beside_the_uncorrected_p_and_the_tested_delta():
    results = {"Baseline": [_run(40.0), _run(41.0)], "+A": [_run(41.0), _run(42.0)], "+B": [_run(40.5), _run(40.5)]}
    p_values = {"Baseline": {"bleu": None, "chrf": None}, "+A": {"bleu": 0.01, "chrf": 0.2},
                "+B": {"bleu": 0.04, "chrf": 0.3}}
    summary = summarize(results, p_values, (), {"Baseline": 40.4, "+A": 41.55, "+B": 40.45})
    assert summary.p_bleu.tolist()[1:] == [0.01, 0.04]
    assert summary.p_bleu_holm.tolist()[1:] == pytest.approx([0.02, 0.04])
    assert summary.p_chrf_holm.tolist()[1:] == pytest.approx([0.4, 0.4])
    # Δ is the concatenated outputs' (41.55 - 40.40), not the means' (41.5 - 40.5)
    assert summary.delta_test_bleu.tolist()[1:] == pytest.approx([1.15, 0.05])
    markdown = to_markdown(summary)
    assert "| p (BLEU) | p (BLEU, Holm) |" in markdown
    assert "| +A | ? | – | 41.50 ± 0.71 | +1.15 | 0.0100 | 0.0200 |" in markdown
    assert "Holm–Bonferroni over the 2 systems compared" in markdown


def test_summary_without_tested_scores_falls_back_to_the_means():
    results = {"Baseline": [_run(40.0)], "+A": [_run(41.0)]}
    summary = summarize(results, {"+A": {"bleu": 0.2, "chrf": 0.3}})
    assert summary.delta_test_bleu.tolist() == [0.0, 1.0]
    assert summary.p_bleu_holm.tolist()[1] == 0.2
