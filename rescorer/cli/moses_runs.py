"""What the `rescore moses ...` commands share besides options: the lock on the directory a
run works in, the one RNN scorer they hand to the Moses wing (tables and n-best lists alike), and
where it scores, for their signatures."""

from __future__ import annotations

from pathlib import Path

from rescorer.io.path_checks import RunPaths, Target

__all__ = ["rnn_scorer", "lm_scorer", "model_placement", "working_in"]


def working_in(directory: Path, role: str):
    """A lock on a directory a Moses command works in, so that a second run on it is refused
    (its contents are the run's to continue, never replaced)."""
    return RunPaths([], [Target(directory, role, kind="work-dir", may_exist=True)], force=False)


def rnn_scorer(device: str = "auto", precision: str = "auto"):
    """The in-process scorer (moses_integration.scorer.RnnScorer) on the caller's device and
    precision, resolved here once; torch is imported only by the commands that score."""
    from rescorer.scoring.rnn_scorer import InProcessScorer

    return InProcessScorer(device, precision)


def lm_scorer(device: str = "auto", precision: str = "auto"):
    """The in-process CSLM scorer (moses_integration.scorer.LmScorer), like rnn_scorer's."""
    from rescorer.scoring.lm_scoring import InProcessLmScorer

    return InProcessLmScorer(device, precision)


def model_placement(device: str, precision: str) -> dict:
    """Where the models of a Moses command score, for its signature (their scores depend on it):
    the device resolved, the precision as asked ('auto' is decided per model, in a line of its own)."""
    from rescorer.runtime.device import resolve_device

    return {"device": resolve_device(device).type, "precision": precision}
