"""How a failure reaches the user, for `rescore` and `rescore moses` alike: one line, an exit
status, and never a traceback.

- A RescorerError (bad input, a path the run must not write): its message, exit 1.
- An OSError the library did not expect (a full disk, a vanished file): `PATH: reason`, exit 1.
- Out of memory, whoever allocates (torch's CPU allocator raises a plain RuntimeError): one line
  saying how much was asked for and which of the command's options lower it, exit 1.
- SIGINT and SIGTERM, even while torch is being imported: `rescore: interrupted (SIGINT); ...`
  with what was kept, exit 130 or 143. Temporaries are removed on the way out, because the
  signal becomes an exception that every writer's `with` block sees.
- A closed pipe (`rescore ... -o - | head`): quiet, exit 141, as Unix tools do.
- An optional package a command imports late and that is not installed (sacrebleu for
  `rescore moses evaluate`, say): which package, and the extra that installs it, exit 1.
- Anything else is a bug: one line asking for a report; RESCORE_TRACEBACK=1 shows the traceback.

Only the standard library (and optional_packages, which is stdlib only) is imported at module
level: this module is loaded before click and torch so that its signal handlers cover their
imports.
"""

from __future__ import annotations

import functools
import os
import signal
import sys

from rescorer.runtime.optional_packages import OPTIONAL_PACKAGES, missing_package_line

__all__ = ["Interrupted", "install_signal_handlers", "reports_errors", "SIGNAL_NAMES", "ending", "one_line",
           "injected_fault", "is_out_of_memory", "out_of_memory_line", "MEMORY_OPTIONS"]

SIGNAL_NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}
_armed = False  # False while the program starts: an interrupt then just ends it
_ending = False  # True once the program is ending: later signals are ignored


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM, raised where the program was, so that `with` blocks clean up.

    Whoever knows what an interrupt leaves behind sets `.note` on its way up (a checkpoint
    kept for --resume, lines already written to stdout)."""

    def __init__(self, signum: int):
        super().__init__(SIGNAL_NAMES.get(signum, f"signal {signum}"))
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


def _on_signal(signum: int, frame) -> None:
    global _ending
    if not _armed:  # still importing: nothing was written yet
        os.write(2, f"rescore: interrupted ({SIGNAL_NAMES[signum]}) while starting; nothing was "
                    f"written\n".encode())
        os._exit(128 + signum)
    if _ending:  # already on the way out: let the cleanup and its one line finish
        return
    _ending = True
    raise Interrupted(signum)


def ending() -> None:
    """The run is failing and cleaning up: later SIGINT/SIGTERM are ignored, so that they cannot
    cut short the cleanup or the line that says what happened (torchrun sends SIGTERM to every
    rank as soon as one fails, while the others are reporting it)."""
    global _ending
    _ending = True


def injected_fault(point: str, unit: int = 0) -> None:
    """Test hook: RESCORE_FAULT=POINT:UNIT[:RANK] kills this process with SIGKILL (as a power
    cut or the OOM killer would; RESCORE_FAULT_SIGNAL=SIGTERM sends that instead) at that
    point: mid-unit (a unit's first lines are written), before-record (its data is durable, its
    record not), after-record, after-output (unit 0: the output is in place, the partial
    directory not yet removed), after-summary (unit 0: the summary line is out) or host-worker
    (the host worker process that takes one of the unit's chunks is killed, not the rank)."""
    spec = os.environ.get("RESCORE_FAULT")
    if spec and spec.split(":")[:2] == [point, str(unit)] and \
            spec.split(":")[2:] in ([], [os.environ.get("RANK", "0")]):
        os.kill(os.getpid(), signal.Signals[os.environ.get("RESCORE_FAULT_SIGNAL", "SIGKILL")])


def install_signal_handlers() -> None:
    """SIGINT and SIGTERM end the program through `reports_errors`; call before heavy imports."""
    for signum in SIGNAL_NAMES:
        signal.signal(signum, _on_signal)


def _arm() -> None:
    """From now on a signal raises Interrupted instead of ending the process at once."""
    global _armed
    _armed = True


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _os_error_line(error: OSError) -> str:
    reason = _lower_first(error.strerror or str(error) or type(error).__name__)
    if error.filename is not None:
        return f"{error.filename}: {reason}"
    return reason


def _interrupt_line(error: KeyboardInterrupt) -> str:
    name = SIGNAL_NAMES.get(getattr(error, "signum", signal.SIGINT), "SIGINT")
    note = getattr(error, "note", None) or "no output was written"
    return f"rescore: interrupted ({name}); {note}"


def reports_errors(command):
    """Decorate a click command so that every failure is one line and an exit status."""
    import click

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        _arm()
        try:
            result = command(*args, **kwargs)
            ending()  # done: a signal from now on (the exit, atexit handlers) changes nothing
            return result
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt as error:
            if os.environ.get("RANK", "0") == "0":  # under torchrun, rank 0 says it for all
                click.echo(_interrupt_line(error), err=True)
            sys.exit(getattr(error, "exit_status", 130))
        except BrokenPipeError:
            # Nothing more can reach the reader; keep Python from complaining at exit.
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except OSError:
                pass
            sys.exit(141)
        except Exception as error:
            line = one_line(error)
            if os.environ.get("RESCORE_TRACEBACK") and line.startswith("internal error"):
                raise
            raise click.ClickException(line) from None

    return wrapper


def one_line(error: Exception) -> str:
    """The one line that reports `error` (see the module docstring)."""
    from rescorer.errors import RescorerError

    if isinstance(error, RescorerError):
        return str(error)
    if isinstance(error, OSError):
        return _os_error_line(error)
    if is_out_of_memory(error):
        return out_of_memory_line(error)
    missing = isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0]
    if missing in OPTIONAL_PACKAGES:
        return missing_package_line(missing)
    first = str(error).splitlines()[0] if str(error) else ""
    return (f"internal error {type(error).__name__}: {first} (a bug in rescore: please report "
            f"it with the traceback that RESCORE_TRACEBACK=1 prints)")


# What an allocation failure says, wherever it arises: torch raises a plain RuntimeError on a CPU
# ("DefaultCPUAllocator: can't allocate memory", errno 12) and OutOfMemoryError on a GPU; numpy
# and Python raise MemoryError.
_ALLOCATION_FAILURES = ("can't allocate memory", "Cannot allocate memory", "out of memory")
# The options that size what a command holds in memory at once, in the order a user should try them.
MEMORY_OPTIONS = ("--batch-tokens", "--batch-size", "--token-budget", "--chunk-size", "--beam", "--samples")


def is_out_of_memory(error: BaseException) -> bool:
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return True
    return isinstance(error, RuntimeError) and any(text in str(error) for text in _ALLOCATION_FAILURES)


def _memory_options() -> list:
    """The running command's options among MEMORY_OPTIONS (none outside a command)."""
    click = sys.modules.get("click")
    ctx = click.get_current_context(silent=True) if click is not None else None
    if ctx is None:
        return []
    taken = {opt for param in ctx.command.params for opt in getattr(param, "opts", ())}
    return [option for option in MEMORY_OPTIONS if option in taken]


def _requested(error: BaseException) -> str:
    """' (an allocation of 4.0 TB failed)' when the error says how much, else ''."""
    import re

    found = re.search(r"[Tt]ried to allocate (?:(\d+) bytes|([\d.]+ ?[KMGT]i?B))", str(error))
    if not found:
        return ""
    size = found.group(2)
    if size is None:
        count = int(found.group(1))
        unit, scale = next(((unit, scale) for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6))
                            if count >= scale), ("bytes", 1))
        size = f"{count / scale:.1f} {unit}" if scale > 1 else f"{count} bytes"
    return f" (an allocation of {size} failed)"


def out_of_memory_line(error: BaseException) -> str:
    """One line for an allocation failure: how much was asked for, and which options of this
    command lower it."""
    options = _memory_options()
    lower = (f": lower {', '.join(options[:-1])} or {options[-1]}" if len(options) > 1 else
             f": lower {options[0]}" if options else "")
    return f"out of memory{_requested(error)}{lower}"
