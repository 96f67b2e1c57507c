"""How long training may run, and how long it should take on this device.

Training stops when held-out perplexity stops improving (`patience` validations without a new
best), and at the latest after `max_epochs` passes over the training pairs (or `max_updates`,
or `max_time`, when given). Early stopping cannot be foreseen, so the estimate printed at the
start is that of the bound: the first updates' measured speed times the updates the bound
allows, plus the validations on the way.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Optional

__all__ = ["DEFAULT_MAX_EPOCHS", "update_limit", "describe_limit", "format_duration", "SpeedProbe"]

DEFAULT_MAX_EPOCHS = 10.0
PROBE_UPDATES = 20  # updates timed before the estimate is made
FORWARD_SHARE = 1 / 3  # a validation pair costs about a third of a training pair (no backward pass)


def update_limit(max_updates: Optional[int], max_epochs: Optional[float],
                 updates_per_epoch: float) -> tuple[int, str]:
    """The number of updates training may make, and why: the smaller of the two bounds."""
    if max_updates is None and max_epochs is None:
        raise ValueError("training needs max_updates or max_epochs")
    limits = [] if max_epochs is None else [max(1, math.ceil(max_epochs * updates_per_epoch))]
    limit = min(limits + ([] if max_updates is None else [max_updates]))
    return limit, describe_limit(limit, max_updates, max_epochs)


def describe_limit(limit: int, max_updates: Optional[int], max_epochs: Optional[float]) -> str:
    """Which bound sets `limit`: '200 updates' or 'the 10-epoch bound (563 updates)'."""
    if max_updates is not None and limit == max_updates:
        return f"{limit} updates"
    return f"the {max_epochs:g}-epoch bound ({limit} updates)"


def format_duration(seconds: float) -> str:
    """'45 s', '12 min', '3 h 05 min', '2 d 04 h'."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours:02d} h"


class SpeedProbe:
    """Times the first PROBE_UPDATES updates of a run, then returns the estimate line once."""

    def __init__(self, limit: int, reason: str, valid_every: int, valid_pairs: int, pairs_per_update: float,
                 device: str, max_seconds: Optional[float] = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.limit, self.reason, self.device = limit, reason, device
        self.valid_every, self.valid_pairs = valid_every, valid_pairs
        self.pairs_per_update = pairs_per_update
        self.max_seconds, self.clock = max_seconds, clock  # max_seconds: the time left to this run
        self.first: Optional[tuple[int, float]] = None  # (updates, time) at the first update seen
        self.done = False
        self.reachable = limit  # the updates the run will reach: fewer than limit under --max-time

    def update(self, updates: int) -> Optional[str]:
        """Call after every update; returns the estimate line once enough updates are timed."""
        if self.done:
            return None
        now = self.clock()
        if self.first is None:  # the first update pays for warm-up: time from after it
            self.first = (updates, now)
            return None
        timed, elapsed = updates - self.first[0], now - self.first[1]
        if timed < PROBE_UPDATES and updates < self.limit:
            return None
        self.done = True
        rate = timed / max(elapsed, 1e-9)
        remaining = max(self.limit - updates, 0)
        validations = remaining // self.valid_every
        seconds = remaining / rate + validations * self.valid_pairs / self.pairs_per_update * FORWARD_SHARE / rate
        capped = ""
        if self.max_seconds is not None and seconds > self.max_seconds:
            left = max(self.max_seconds - elapsed, 0.0)
            per_update = seconds / max(remaining, 1)  # validations included
            self.reachable = min(self.limit, updates + int(left / per_update))
            seconds, capped = self.max_seconds, ", capped by --max-time"
        return (f"training speed {rate:.1f} updates/s on {self.device} (measured over {timed} updates): "
                f"at most about {format_duration(seconds)} more for {self.reason}{capped}; early "
                f"stopping (held-out perplexity no longer improving) may end it sooner")
