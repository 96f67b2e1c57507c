"""Progress bars: redrawn in place on a terminal, whole lines (every 5% or 30 s) in a log."""

import io

import pytest

from rescorer.runtime.progress import LogLineBar, progress_bar
from tests.helpers import first_lines, rescore


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_log_bar_writes_a_line_per_five_percent():
    log = io.StringIO()
    with LogLineBar(file=log, total=1000, desc="scoring", clock=Clock()) as bar:
        for _ in range(1000):
            bar.update(1)
    lines = log.getvalue().split("\n")
    assert "\r" not in log.getvalue() and lines[-1] == ""
    assert [line.split("|")[0] for line in lines[:-1]] == [
        f"scoring: {percent:3d}%" for percent in range(0, 101, 5)]


def test_log_bar_without_a_total_writes_every_30_seconds():
    log, clock = io.StringIO(), Clock()
    with LogLineBar(file=log, desc="reading", unit=" lines", clock=clock) as bar:
        for _ in range(100):  # 100 updates, one simulated second apart
            clock.now += 1
            bar.update(10)
    counts = [line.split()[1] for line in log.getvalue().splitlines()]
    assert counts == ["0", "300", "600", "900", "1000"]  # start, t = 30, 60, 90 s, close


def test_log_bar_writes_nothing_while_the_count_stands_still():
    log, clock = io.StringIO(), Clock()
    bar = LogLineBar(file=log, total=10, clock=clock)
    clock.now = 1000.0
    bar.refresh()
    bar.refresh()
    bar.close()
    assert log.getvalue().count("\n") == 1


def test_training_bar_sets_n_and_refreshes_like_cli_does():
    log = io.StringIO()
    with progress_bar(file=log, desc="training", total=40) as bar:
        for update in range(1, 41):
            bar.n = update
            bar.set_postfix({"best_valid_ppl": "9.00"}, refresh=False)
            bar.refresh()
    lines = log.getvalue().splitlines()
    assert len(lines) == 21 and lines[-1].startswith("training: 100%")
    assert lines[-1].endswith("best_valid_ppl=9.00]")


@pytest.mark.parametrize("file, quiet, expected", [
    (Terminal(), False, "redrawn"),
    (io.StringIO(), False, "lines"),
    (Terminal(), True, "nothing"),
    (io.StringIO(), True, "nothing"),
])
def test_progress_bar_follows_the_stream(file, quiet, expected):
    with progress_bar(quiet, file, total=200) as bar:
        for _ in range(200):
            bar.update(1)
    text = file.getvalue()
    found = "nothing" if not text else "redrawn" if "\r" in text else "lines"
    assert found == expected


def test_rescore_writes_log_lines_when_stderr_is_a_file(example_table, tmp_path):
    """The installed command, stderr to a pipe: no carriage returns, a few lines per bar."""
    table = first_lines(example_table, 400, tmp_path / "pt.gz")
    result = rescore(table, "-o", tmp_path / "out.gz", "--preset", "tiny", "--max-updates", "200",
                     "--valid-every", "100", "--valid-pairs", "50")
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr
    training = [line for line in result.stderr.splitlines() if line.startswith("training:")]
    assert 2 <= len(training) <= 21  # every 5% of 200 updates at most, not one per update
    assert training[-1].startswith("training: 100%|")
