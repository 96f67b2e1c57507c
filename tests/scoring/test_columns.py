"""Which log p columns a line gets: one per model, an ensemble's one, and per-word forms."""

import math

import pytest

from rescorer.cli.main import main
from rescorer.training.pipeline import train_on_table
from rescorer.training.trainer import TrainSettings
from tests.helpers import first_lines, gz_lines, invoke


@pytest.fixture(scope="module")
def second_model(tmp_path_factory, example_table):
    path = tmp_path_factory.mktemp("second") / "second.pt"
    train_on_table(example_table, path, preset="tiny",
                   settings=TrainSettings(max_updates=20, valid_every=20, valid_pairs=200, seed=11))
    return path


def new_columns(path, count):
    return [[float(x) for x in line.split(b" ||| ")[2].split()[-count:]] for line in gz_lines(path)]


@pytest.mark.parametrize("unit_lines", [None, "70"], ids=["stream", "units"])
def test_ensemble_and_per_word_columns(tiny_model_path, second_model, example_table, tmp_path, unit_lines):
    table = first_lines(example_table, 200, tmp_path / "t.gz")
    models = ["--model", tiny_model_path, "--model", second_model]
    units = ["--unit-lines", unit_lines] if unit_lines else []
    separate, together = tmp_path / "separate.gz", tmp_path / "together.gz"
    assert invoke(main, "-q", "score", table, *models, "-o", separate, "--score-format", "log",
                  *units).exit_code == 0
    result = invoke(main, "-q", "score", table, *models, "-o", together, "--score-format", "log", "--ensemble",
                    "--per-word", *units, catch_exceptions=True)
    assert result.exit_code == 0, result.output
    targets = [len(line.split(b" ||| ")[1].split()) for line in gz_lines(table)]
    for (first, second), (mixture, per_word), words in zip(new_columns(separate, 2), new_columns(together, 2),
                                                            targets):
        want = math.log((math.exp(first) + math.exp(second)) / 2)
        assert mixture == pytest.approx(want, abs=2e-6 * max(1, abs(want)))
        assert per_word == pytest.approx(mixture / words, rel=1e-5)
        assert min(first, second) <= mixture <= max(first, second)


def test_per_word_follows_every_model_column(tiny_model_path, second_model, example_table, tmp_path):
    table = first_lines(example_table, 50, tmp_path / "t.gz")
    out = tmp_path / "o.gz"
    result = invoke(main, "score", table, "--model", tiny_model_path, "--model", second_model, "-o", out,
                    "--score-format", "log", "--per-word", "--unk-penalty", catch_exceptions=True)
    assert result.exit_code == 0, result.output
    for line in gz_lines(out):
        words = len(line.split(b" ||| ")[1].split())
        first, second, first_per_word, second_per_word, penalty = map(float, line.split(b" ||| ")[2].split()[-5:])
        assert (first_per_word, second_per_word) == pytest.approx((first / words, second / words), rel=1e-5)
        unknown = math.log(penalty)  # exp(count of unknown target words): the penalty stays last
        assert unknown == pytest.approx(round(unknown), abs=1e-5) and 0 <= round(unknown) <= words
    assert "|ensemble:no|per-word:yes|" in result.stderr


def test_an_ensemble_needs_two_models_before_any_work(tiny_model_path, example_table, tmp_path):
    result = invoke(main, "score", example_table, "--model", tiny_model_path, "-o", tmp_path / "o.gz",
                    "--ensemble", catch_exceptions=True)
    assert result.exit_code == 2 and "give --model two or more times" in result.output
    result = invoke(main, example_table, "-o", tmp_path / "o.gz", "--ensemble", catch_exceptions=True)
    assert result.exit_code == 2 and not (tmp_path / "o.gz.model.pt").exists()


def test_an_ensemble_of_unlike_target_shortlists_is_refused_naming_them(tiny_model_path, example_table, tmp_path):
    """Issue 32 case 8: a model that reads most target words as [UNK] was mixed with one that does
    not, into one column that is a distribution of neither."""
    table = first_lines(example_table, 20, tmp_path / "t.gz")
    narrow = tmp_path / "narrow.pt"
    train_on_table(example_table, narrow, preset="tiny",
                   settings=TrainSettings(max_updates=1, valid_pairs=200, shortlist_size=300))
    result = invoke(main, "score", table, "--model", tiny_model_path, "--model", narrow, "-o", tmp_path / "o.gz",
                    "--ensemble", catch_exceptions=True)
    assert result.exit_code == 2, result.output
    assert (f"--ensemble mixes models of one target shortlist, and narrow.pt's (300 words) is not "
            f"{tiny_model_path.name}'s (2000 words): score them as columns of their own") in result.output
    assert not (tmp_path / "o.gz").exists()


def test_a_per_word_column_divides_the_log_p_before_the_floor():
    """Moses floors each column's log at -100 on its own: a 4-word target of log p -160 gets the
    floor in its log p column and -40 (not -25) in its per-word one, in both score formats."""
    from types import SimpleNamespace

    import numpy as np

    from rescorer.io.score_format import format_log_scores, format_moses_scores
    from rescorer.scoring.chunks import output_columns

    chunk = SimpleNamespace(encodings=[SimpleNamespace(tgt_words=np.array([4.0, 2.0]))])
    logp, per_word = output_columns(chunk, [np.array([-160.0, -3.0])], [0], ensemble=False, per_word=True)
    assert list(per_word) == [-40.0, -1.5]
    assert format_log_scores(logp) == ["-100", "-3"] and format_log_scores(per_word) == ["-40", "-1.5"]
    assert format_moses_scores(logp)[0] == "3.720076e-44" and format_moses_scores(per_word)[0] == "4.248354e-18"
