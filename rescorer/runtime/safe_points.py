"""SIGINT and SIGTERM taken at a safe point of a loop, not wherever they land.

Elsewhere an interrupt is raised where the program is (rescorer.runtime.failure_reports), which
is right for work that a `with` block cleans up. A training update is not such work: stopped
half-way, the optimizer may have stepped some weights and not others. Inside `HeldInterrupts`
the signal is only recorded; the loop asks `signum` between two updates, writes what it keeps
(a checkpoint, whole and consistent) and raises `Interrupted` itself. A signal still held when
the block ends normally goes to the handler in place before it, at once.
"""

from __future__ import annotations

import signal
import threading
from typing import Optional

from rescorer.runtime.failure_reports import SIGNAL_NAMES

__all__ = ["HeldInterrupts"]


class HeldInterrupts:
    """Records SIGINT and SIGTERM during the block instead of raising them (main thread only:
    elsewhere Python cannot set handlers, and the block runs with the handlers as they are)."""

    def __init__(self):
        self.signum: Optional[int] = None  # the first signal received, while the block runs
        self._previous: dict = {}

    def __enter__(self) -> "HeldInterrupts":
        if threading.current_thread() is threading.main_thread():
            self._previous = {signum: signal.getsignal(signum) for signum in SIGNAL_NAMES}
            for signum in SIGNAL_NAMES:
                signal.signal(signum, self._record)
        return self

    def _record(self, signum: int, frame) -> None:
        if self.signum is None:
            self.signum = signum

    def __exit__(self, kind, error, traceback) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        self._previous = {}
        if self.signum is not None and kind is None:  # it came after the last safe point
            signal.raise_signal(self.signum)
