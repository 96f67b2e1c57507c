"""Where a job runs, decided once per command: this process's place among the ranks of a
torchrun job (a world of one without torchrun) and its device."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from rescorer.runtime.distributed import Ranks
from rescorer.runtime.settings import RuntimeSettings

__all__ = ["Placement", "placed", "warn_if_emulated"]


@dataclass(frozen=True)
class Placement:
    ranks: Ranks
    device: Any  # torch.device: this rank's (on CUDA, the GPU of its LOCAL_RANK)


@contextmanager
def placed(reporter, runtime: RuntimeSettings, training: bool = True) -> Iterator[Placement]:
    """Resolve the device, join the ranks; only rank 0 reports (`reporter.quiet` is set on the
    others), and a failure on any rank fails them all, reported once by rank 0."""
    from rescorer.runtime.device import resolve_device
    from rescorer.runtime.distributed import join, leave, rank_device

    device = resolve_device(runtime.device)
    ranks = join(device.type, runtime.rank_timeout, gradients=training)
    if not ranks.is_main:
        reporter.quiet = True
        logging.getLogger().setLevel(logging.ERROR)
    with ranks.together():
        yield Placement(ranks, rank_device(ranks, device))
    leave(ranks)


def warn_if_emulated(reporter, precision: str, device) -> None:
    """Before a long run: bf16 or int8 on a CPU without instructions for them is slower than fp32."""
    from rescorer.runtime.cpu_features import cpu_features, slow_precision_warning

    warning = slow_precision_warning(precision, device.type, cpu_features())
    if warning:
        reporter.say(warning)
