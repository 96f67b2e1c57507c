"""Where log messages go: the project's own (the loggers under `rescorer` and
`moses_integration`) to stderr, one line each; other libraries' notices nowhere, unless -v asks
for their warnings. matplotlib's first plot says "Matplotlib is building the font cache; this
may take a moment." and "generated new fontManager", sklearn and torch warn through Python's
warnings: none of it is about the user's run, and on stderr it reads as if something went wrong.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["OWN_LOGGERS", "OwnMessages", "configure_logging"]

OWN_LOGGERS = ("rescorer", "moses_integration")


class OwnMessages(logging.Filter):
    """Passes the project's records; another library's only when `verbose` and a warning or worse."""

    def __init__(self, verbose: bool = False) -> None:
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".")[0] in OWN_LOGGERS:
            return True
        return self.verbose and record.levelno >= logging.WARNING


def configure_logging(level: int, verbose: bool = False) -> None:
    """Messages at `level` and above to stderr, other libraries' kept off it (OwnMessages); again
    with other settings when -q or -v follows the command. Python warnings become log records
    (`py.warnings`), so that they are filtered the same way. Where the root logger already has
    handlers that are not this one's (a test runner's), they are left alone."""
    root = logging.getLogger()
    root.setLevel(level)
    ours = [handler for handler in root.handlers if getattr(handler, "rescore_handler", False)]
    if not ours:
        if root.handlers:
            return
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.rescore_handler = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        logging.captureWarnings(True)
        ours = [handler]
    for handler in ours:
        handler.filters = [OwnMessages(verbose)]
