"""Why a training run stops, said truthfully on a resume too.

A resumed checkpoint may already be at or past a bound of this run: more updates than
--max-updates (or the --max-epochs bound) allows, more seconds than --max-time, or as many
validations without improvement as --patience. Such a run trains nothing, and its summary must
say that, not that it "reached 120 updates" with 130 on the clock. The bounds are checked in one
order on every rank (--max-time last: under torchrun checking it is an exchange between ranks).
"""

from __future__ import annotations

from typing import Callable, Optional

__all__ = ["stop_reason", "limit_option", "updates_made"]


def limit_option(limit: int, max_updates: Optional[int], max_epochs: Optional[float]) -> str:
    """The option that sets the update limit, as a user gave it: '--max-updates 120' or
    'the --max-epochs 10 bound (563 updates)'."""
    if max_updates is not None and limit == max_updates:
        return f"--max-updates {limit}"
    return f"the --max-epochs {max_epochs:g} bound ({limit} updates)"


def stop_reason(state, settings, bound: str, out_of_time: Callable[[], bool],
                resumed_from: Optional[int]) -> Optional[str]:
    """None while training goes on, else why it stops.

    `state` is the TrainState (its update_limit set), `settings` the TrainSettings, `bound` the
    limit as rescorer.training.budget.describe_limit says it, `out_of_time` whether --max-time
    is used up (asked last, and only when the other bounds leave training going), and
    `resumed_from` the checkpoint's updates when this run resumed one (None: a fresh run).
    """
    nothing_trained = resumed_from is not None and state.updates == resumed_from
    if state.bad_validations >= settings.patience:
        if nothing_trained:
            return (f"the checkpoint's validation perplexity had already not improved {state.bad_validations} "
                    f"times (--patience {settings.patience}), so nothing was trained")
        return f"validation perplexity did not improve {settings.patience} times"
    if state.updates >= state.update_limit:
        if nothing_trained:
            option = limit_option(state.update_limit, settings.max_updates, settings.max_epochs)
            where = "had already reached" if state.updates == state.update_limit else "was already past"
            return f"the checkpoint {where} {option}, so nothing was trained"
        return f"reached {bound}"
    if out_of_time():
        if nothing_trained:
            return (f"the checkpoint had already trained for {state.seconds:.1f} s, at or past --max-time "
                    f"{settings.max_seconds:g}, so nothing was trained")
        return f"reached the {settings.max_seconds:g} s time limit"
    return None


def updates_made(state) -> str:
    """'130 updates', and on a resume how many of them this run made: '130 updates (none in this
    run)', '130 updates (30 in this run)'."""
    if state.resumed_from is None:
        return f"{state.updates} updates"
    made = state.updates - state.resumed_from
    return f"{state.updates} updates ({made or 'none'} in this run)"
