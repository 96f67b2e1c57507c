"""The default training budget: early stopping bounded by epochs, and the estimate at the start."""

import math

import pytest

from rescorer.cli.main import main
from rescorer.training.budget import SpeedProbe, format_duration, update_limit
from tests.helpers import invoke


@pytest.mark.parametrize("max_updates, max_epochs, pairs, batch, expected", [
    (None, 10.0, 3599, 64, (563, "the 10-epoch bound (563 updates)")),
    (3000, 10.0, 3599, 64, (563, "the 10-epoch bound (563 updates)")),
    (200, 10.0, 3599, 64, (200, "200 updates")),
    (None, 0.5, 2_232_434, 64, (17441, "the 0.5-epoch bound (17441 updates)")),
    (500, None, 100, 64, (500, "500 updates")),
    (None, 0.001, 10, 64, (1, "the 0.001-epoch bound (1 updates)")),
], ids=["epochs", "epochs first", "updates first", "half an epoch", "no epoch bound", "at least one"])
def test_update_limit(max_updates, max_epochs, pairs, batch, expected):
    assert update_limit(max_updates, max_epochs, pairs / batch) == expected


@pytest.mark.parametrize("seconds, text", [(12.4, "12 s"), (89, "89 s"), (600, "10 min"), (3600 * 3 + 300, "3 h 05 min"),
                                           (3600 * 50, "2 d 02 h")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_estimate_uses_the_measured_speed_and_the_bound():
    clock = Clock()
    probe = SpeedProbe(10_000, "the 10-epoch bound (10000 updates)", valid_every=250, valid_pairs=2000,
                       pairs_per_update=64, device="cpu", clock=clock)
    assert probe.update(1) is None  # the first update is not timed
    for update in range(2, 21):
        clock.now += 0.2
        assert probe.update(update) is None
    clock.now += 0.2
    line = probe.update(21)  # 20 updates in 4 s: 5 updates/s
    remaining = (10_000 - 21) / 5 + (10_000 - 21) // 250 * 2000 / 64 / 3 / 5  # updates + validations
    assert line.startswith("training speed 5.0 updates/s on cpu (measured over 20 updates): at most about "
                           f"{format_duration(remaining)} more for the 10-epoch bound (10000 updates)")
    assert probe.update(22) is None  # said once


def test_estimate_is_capped_by_max_time():
    clock = Clock()
    probe = SpeedProbe(10_000, "x", 250, 2000, 64, "cpu", max_seconds=60, clock=clock)
    for update in range(1, 22):
        clock.now += 1
        line = probe.update(update)
    assert "at most about 60 s more for x, capped by --max-time;" in line


def test_the_bar_total_follows_max_time_when_it_ends_the_run_first():
    """1 update/s, and a validation every 250 updates costing 2000/64/3 updates' time: of the
    60 s, 40 are left after the 20 timed updates, so 38 more updates, not 9,979."""
    clock = Clock()
    probe = SpeedProbe(10_000, "x", 250, 2000, 64, "cpu", max_seconds=60, clock=clock)
    assert probe.reachable == 10_000
    for update in range(1, 22):
        clock.now += 1
        probe.update(update)
    remaining = 10_000 - 21
    per_update = (remaining + remaining // 250 * 2000 / 64 / 3) / remaining  # seconds, validations included
    assert probe.reachable == 21 + int(40 / per_update) == 59
    unbounded = SpeedProbe(100, "x", 250, 2000, 64, "cpu", max_seconds=10_000, clock=clock)
    for update in range(1, 22):
        clock.now += 1
        unbounded.update(update)
    assert unbounded.reachable == 100  # the time is enough: the update bound ends it


def test_a_resumed_run_is_capped_by_the_time_it_has_left(example_table, tmp_path):
    args = ["train", str(example_table), "-o", str(tmp_path / "m.pt"), "--preset", "tiny", "--valid-pairs", "100"]
    first = invoke(main, *args, "--max-updates", "100000", "--max-epochs", "1000", "--max-time", "3",
                   catch_exceptions=True)
    assert first.exit_code == 0, first.output
    resumed = invoke(main, *args, "--resume", "--max-updates", "100000", "--max-epochs", "1000",
                     "--max-time", "8", catch_exceptions=True)
    assert resumed.exit_code == 0, resumed.output
    estimate = resumed.stderr.split("at most about ")[1]
    assert estimate.split(" s more")[0] in {str(n) for n in range(0, 6)}  # 8 s less the first run's 3 s
    assert "capped by --max-time;" in estimate


def test_training_stops_at_the_epoch_bound_and_says_so_at_the_start(example_table, tmp_path):
    result = invoke(main, "train", example_table, "-o", tmp_path / "m.pt", "--preset", "tiny",
                    "--max-epochs", "1", "--valid-every", "1000", "--valid-pairs", "100", "--batch-size", "64",
                    catch_exceptions=True)
    assert result.exit_code == 0, result.output
    train_pairs = int(result.stderr.split("trained on ")[1].split(" pairs")[0])
    updates = math.ceil(train_pairs / 64)  # --batch-size 64: 64 random pairs per update
    assert f"more for the 1-epoch bound ({updates} updates)" in result.stderr
    assert f"{updates} updates, stopped: reached the 1-epoch bound ({updates} updates)" in result.stderr
    assert "max-epochs:1.0" in result.stderr and "patience:4" in result.stderr
