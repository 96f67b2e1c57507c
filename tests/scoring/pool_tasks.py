"""Tasks for a host worker pool in the tests: importable by a spawned worker without torch."""

import os
import time


def pid_after(seconds: float) -> int:
    """This worker's process id, after `seconds` of work."""
    time.sleep(seconds)
    return os.getpid()
