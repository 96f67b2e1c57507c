"""Exceptions of the Moses integration; each is a RescorerError, so the CLI prints one line, exit 1."""

from rescorer.errors import RescorerError

__all__ = [
    "MosesConfigError",
    "MosesNotFoundError",
    "MosesRunError",
    "NbestFormatError",
    "PreflightError",
]


class MosesConfigError(RescorerError, ValueError):
    """A moses.ini this tool cannot read or edit: the message names file, line and what is wrong."""


class MosesNotFoundError(RescorerError, FileNotFoundError):
    """The Moses installation, or one of its binaries or scripts, is missing."""


class MosesRunError(RescorerError, RuntimeError):
    """A Moses program exited with an error; the message names the program and its log file."""


class NbestFormatError(RescorerError, ValueError):
    """An n-best list line that is not `id ||| hypothesis ||| features ||| total [...]`."""


class PreflightError(RescorerError):
    """One or more preflight checks failed; `problems` holds one line per failed check."""

    def __init__(self, problems: list) -> None:
        self.problems = list(problems)
        extra = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(f"preflight failed: {problems[0]}{extra}")
