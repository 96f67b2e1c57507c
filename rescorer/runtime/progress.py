"""Progress bars for a terminal and for a log file.

On a terminal a tqdm bar redraws itself in place. Written to a file (`2> train.log`, a batch
job), the same redraws pile up as one carriage-return update per step: a 5-minute training wrote
42 KB of them. There the bar writes whole lines instead: one every `LOG_STEP` of the total, or
every `LOG_INTERVAL_S` seconds, whichever comes first, and a last one when it closes.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

from tqdm import tqdm

__all__ = ["LOG_STEP", "LOG_INTERVAL_S", "LogLineBar", "progress_bar", "Progress", "no_progress"]

Progress = Callable[[int], None]  # what a long pass calls with the number of lines just done


def no_progress(lines: int) -> None:
    pass

LOG_STEP = 0.05  # a line per 5% of the total
LOG_INTERVAL_S = 30.0  # and at least one per 30 s while the count moves (or without a total)


class LogLineBar(tqdm):
    """A tqdm bar that writes a full line when progress is worth a line, never a bare "\\r"."""

    def __init__(self, *args, step: float = LOG_STEP, interval: float = LOG_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic, **kwargs) -> None:
        self._step, self._interval, self._clock = step, interval, clock
        self._logged_n: Optional[float] = None
        self._logged_at = 0.0
        kwargs.update(mininterval=0, miniters=1, leave=False, dynamic_ncols=False)
        kwargs.setdefault("ascii", True)
        super().__init__(*args, **kwargs)

    def _due(self) -> bool:
        if self._logged_n is None:
            return True
        if self.n == self._logged_n:
            return False
        if self.total and self.n - self._logged_n >= self._step * self.total:
            return True
        return self._clock() - self._logged_at >= self._interval

    def _write_line(self) -> None:
        self.fp.write(self.format_meter(**self.format_dict) + "\n")
        self.fp.flush()
        self._logged_n, self._logged_at = self.n, self._clock()

    def display(self, msg: Optional[str] = None, pos: Optional[int] = None) -> bool:
        # tqdm calls this on every update (miniters=1) and with msg="" to clear the bar on
        # close; only a due progress line is written, and clearing writes nothing.
        if msg is None and self._due():
            self._write_line()
        return False

    def close(self) -> None:
        if not self.disable and self._logged_n != self.n:
            self._write_line()  # the final count, once
        super().close()


def progress_bar(quiet: bool = False, file: Optional[TextIO] = None, **kwargs) -> tqdm:
    """A bar on `file` (stderr): redrawn in place on a terminal, whole lines in a log file."""
    file = sys.stderr if file is None else file
    if quiet:
        return tqdm(disable=True, file=file, **kwargs)
    isatty = getattr(file, "isatty", None)
    if isatty is not None and isatty():
        return tqdm(file=file, dynamic_ncols=True, **kwargs)
    return LogLineBar(file=file, **kwargs)
