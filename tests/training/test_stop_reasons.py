"""Why training stopped, said truthfully on a resume (rescorer.training.stop_reasons): a
checkpoint already at or past a bound of the resumed run trains nothing, says so, and is left as
it was (no second validation of its last update)."""

from __future__ import annotations

import pytest
import torch

from rescorer.cli.main import main
from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.model_files import read_model_file
from rescorer.training.pipeline import train_on_table
from rescorer.training.settings import TrainSettings
from tests.helpers import EXAMPLE_TABLE, first_lines, invoke

# 13 updates: the last one is not a multiple of --valid-every, so the end of training validates it
FIRST = dict(valid_pairs=40, valid_every=5, checkpoint_every=5, seed=4, batch_size=16, batch_tokens=None)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 400-line table and a tiny model trained on it for 13 updates, its checkpoint beside it."""
    directory = tmp_path_factory.mktemp("stops")
    table = first_lines(EXAMPLE_TABLE, 400, directory / "t.gz")
    train_on_table(table, directory / "m.pt", preset="tiny", settings=TrainSettings(max_updates=13, **FIRST))
    return table, directory / "m.pt"


def copied(trained, tmp_path, **state):
    """The trained model and checkpoint copied to tmp_path, with `state` written into the checkpoint's."""
    table, model = trained
    payload = read_model_file(checkpoint_path_for(model))
    payload["training"]["state"].update(state)
    torch.save(payload, checkpoint_path_for(tmp_path / "m.pt"))
    (tmp_path / "m.pt").write_bytes(model.read_bytes())
    return table, tmp_path / "m.pt"


@pytest.mark.parametrize("resume, state, expected", [
    (dict(max_updates=10), {}, "the checkpoint was already past --max-updates 10, so nothing was trained"),
    (dict(max_updates=13), {}, "the checkpoint had already reached --max-updates 13, so nothing was trained"),
    (dict(max_updates=None, max_epochs=0.1), {},
     "the checkpoint was already past the --max-epochs 0.1 bound (3 updates), so nothing was trained"),
    (dict(max_updates=100, max_seconds=5.0), {"seconds": 7.5},
     "the checkpoint had already trained for 7.5 s, at or past --max-time 5, so nothing was trained"),
    (dict(max_updates=100, patience=2), {"bad_validations": 3},
     "the checkpoint's validation perplexity had already not improved 3 times (--patience 2), so nothing "
     "was trained"),
], ids=["past max-updates", "at max-updates", "past max-epochs", "past max-time", "past patience"])
def test_a_resume_with_nothing_left_to_train_says_so_and_changes_nothing(trained, tmp_path, resume, state,
                                                                        expected):
    table, model = copied(trained, tmp_path, **state)
    before = read_model_file(checkpoint_path_for(model))["training"]["state"]
    report = train_on_table(table, model, preset="tiny",
                            settings=TrainSettings(**{**FIRST, **resume}, resume=True))
    assert report.state.stopped_because == expected
    assert report.state.updates == 13 and report.state.resumed_from == 13
    after = read_model_file(checkpoint_path_for(model))["training"]["state"]
    for key in ("updates", "best_valid_ppl", "best_update", "bad_validations", "lr_scale", "train_tokens"):
        assert after[key] == before[key], key  # not validated again: no bad validation, no decay


def test_a_resume_that_trains_says_how_many_updates_it_made(trained, tmp_path):
    table, model = copied(trained, tmp_path)
    report = train_on_table(table, model, preset="tiny", settings=TrainSettings(**{**FIRST, "max_updates": 16},
                                                                                resume=True))
    assert report.state.stopped_because == "reached 16 updates"
    assert report.state.updates == 16 and report.state.resumed_from == 13


def test_the_summary_line_of_a_resume_past_its_bound(trained, tmp_path):
    """Issue 45: '130 updates, stopped: reached 120 updates' contradicted itself."""
    table, model = copied(trained, tmp_path)
    result = invoke(main, "train", table, "-o", model, "--resume", "--preset", "tiny", "--max-updates", "10",
                    catch_exceptions=True)
    assert result.exit_code == 0, result.output
    summary = next(line for line in result.stderr.splitlines() if line.startswith("trained on "))
    assert ": 13 updates (none in this run), stopped: the checkpoint was already past --max-updates 10, so " \
           "nothing was trained; valid perplexity " in summary, summary
