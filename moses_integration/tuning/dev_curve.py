"""What a mert-moses.pl working directory tells about its run: how many iterations it took, why
it stopped, and the dev BLEU of each iteration's 1-best output (the MERT curve).

mert-moses.pl ends its loop in one of two ways (see its source): "None of the weights changed
more than 0.00001. Stopping." on stderr when the optimizer returned the weights it was given
(convergence), or "Maximum number of iterations exceeded - stopping" on stdout when the next
run would pass --maximum-iterations (25 by default). Both go to our mert-moses.log. A run that
was killed, or a directory from elsewhere, has neither: its reason is "unknown".

runN.out is the 1-best output of iteration N's decoding, with the weights that iteration
started from; its BLEU on the dev references is the curve, iteration 1 showing the start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ..evaluation.scores import bleu_of_files

__all__ = ["CONVERGED", "MAX_ITERATIONS", "UNKNOWN", "MERT_DEFAULT_MAX_ITERATIONS",
           "read_stop_reason", "iteration_output", "dev_bleu_curve"]

CONVERGED, MAX_ITERATIONS, UNKNOWN = "convergence", "max-iterations", "unknown"
MERT_DEFAULT_MAX_ITERATIONS = 25  # mert-moses.pl's $maximum_iterations
_MARKERS = {b"None of the weights changed more than": CONVERGED,
            b"Maximum number of iterations exceeded - stopping": MAX_ITERATIONS}


def read_stop_reason(work_dir: Path, log_name: str = "mert-moses.log") -> str:
    """Why the run's loop ended, from the last stop message in its log (a resumed run's log
    holds every attempt, appended)."""
    path = work_dir / log_name
    if not path.is_file():
        return UNKNOWN
    data = path.read_bytes()
    positions = {reason: data.rfind(marker) for marker, reason in _MARKERS.items()}
    reason, position = max(positions.items(), key=lambda item: item[1])
    return reason if position >= 0 else UNKNOWN


def iteration_output(work_dir: Path, iteration: int) -> Optional[Path]:
    """runN.out as mert-moses.pl writes it (or gzipped, as the fixtures keep it), or None."""
    for name in (f"run{iteration}.out", f"run{iteration}.out.gz"):
        if (work_dir / name).is_file():
            return work_dir / name
    return None


def dev_bleu_curve(work_dir: Path, iterations: int, ref_paths: Sequence[Path],
                   detokenize_lang: Optional[str] = None) -> list[Optional[float]]:
    """BLEU (0-100) of each iteration's 1-best dev output against the dev references, None where
    it is missing."""
    outputs = [iteration_output(work_dir, i) for i in range(1, iterations + 1)]
    found = [path for path in outputs if path is not None]
    scores = iter(bleu_of_files(found, ref_paths, detokenize_lang) if found else [])
    return [None if path is None else next(scores) for path in outputs]
