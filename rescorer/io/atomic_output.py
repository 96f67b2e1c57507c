"""Atomic phrase-table output: the target path holds either nothing or the complete table.

A scoring run over 10^8 lines can die (out of memory, Ctrl-C, a corrupt input found late); Moses
must never pick up a half-written table, so we write beside the target and rename at the end.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Callable, Iterable, Iterator, Optional

from rescorer.errors import RescorerError
from rescorer.io.file_names import same_file, temporary_name
from rescorer.io.gzip_io import BUFFER_SIZE, gzip_writer
from rescorer.io.path_checks import is_stream

__all__ = ["AtomicOutput", "atomic_paths", "check_output_target", "committed_together", "write_atomically"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_output_target(path: Path, force: bool = False, input_path: Path | str | None = None) -> None:
    """Refuse an output that is the input, a directory, or exists (unless force): callers check
    this before hours of work, and AtomicOutput checks it again before writing. A FIFO or a
    device is fine: it is written into, never replaced."""
    if input_path is not None and str(input_path) != "-" and same_file(path, Path(input_path)):
        raise RescorerError(f"{path}: the output is the input phrase table; refusing to overwrite it")
    if path.is_dir():
        raise RescorerError(f"{path}: the output is a directory")
    if is_stream(path):
        return
    if path.exists() and not force:
        raise RescorerError(f"{path}: the output exists; pass --force to replace it")
    if not path.parent.is_dir():
        raise RescorerError(f"{path}: cannot write the output (no directory {path.parent})")


def _reason(error: OSError) -> str:
    """'no space left on device' from an OSError, for one-line messages."""
    text = error.strerror or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


@contextmanager
def _signals_held(hold: bool) -> Iterator[None]:
    """SIGINT and SIGTERM wait while a block of whole lines goes to a stream, so that what a
    reader gets ends with a whole line and the count of lines written is true (the handler,
    which raises, runs once the block is written). Only the main thread receives them."""
    if not hold or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM that arrive during the block are handled after it, by the handlers in
    place before it. Python runs handlers in the main thread, whichever thread the kernel gave the
    signal to, so swapping them holds a signal that a mask on the main thread alone would not (a
    process-directed signal goes to any thread that does not block it). Off the main thread, where
    handlers cannot be set, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in caught:
            signal.raise_signal(signum)  # to the handler in place before, now


def stdout_bytes():
    """Standard output as bytes; a one-line error when it is closed (`rescore ... >&-`)."""
    if sys.stdout is None or getattr(sys.stdout, "buffer", None) is None:
        raise RescorerError("standard output is closed: nothing can be written there; give -o FILE")
    return sys.stdout.buffer


class AtomicOutput:
    """Context manager with .write(bytes) and .write_line(bytes) that commits the file only on clean exit.

    Writes to a temporary file `.NAME.tmp-XXXX` beside the target, gzip-compressed when the name
    ends in '.gz'; on clean exit flushes, fsyncs and os.replace()s it onto the target; on an
    exception removes it, so nothing is left at or beside the target. '-' is stdout, and an
    existing FIFO or device (/dev/null) is written into as it is: neither is atomic nor replaced.
    A symbolic link is followed: the file it points to is replaced, the link stays.
    Refuses an existing target unless force, and a target that is the input even with force.
    With only_if_written, nothing is created when no line was written, and an existing target
    (replaced under force) is removed: the target then holds exactly this run's lines (reject
    files). A write error (a full disk) becomes one RescorerError naming the target.
    Gzip output has mtime 0 so that the same table always compresses to the same bytes.
    """

    def __init__(
        self,
        path: Path | str,
        force: bool = False,
        input_path: Path | str | None = None,
        compresslevel: int = 6,
        only_if_written: bool = False,
        encoded: bool = False,
        label: str | None = None,
        header_name: str | None = None,
    ):
        self.is_stdout = str(path) == "-"
        self.path = Path(path)
        self.compresslevel = compresslevel
        self.only_if_written = only_if_written
        self.encoded = encoded  # bytes come already in the file's encoding (gzip members): not re-compressed
        self.label = label or str(path)  # how messages name it
        self.header_name = str(path) if header_name is None else header_name
        self.lines_written = 0
        self.tmp_path: Path | None = None
        self.is_stream = is_stream(self.path)  # stdout, a FIFO, a device
        self._target = Path(os.path.realpath(self.path)) if self.path.is_symlink() else self.path
        self._file: BinaryIO | None = None  # the real file (or stdout)
        self._stream: BinaryIO | None = None  # what we write into: the gzip writer or the file
        self._opened = False
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._buffered_lines = 0
        self.lines_flushed = 0  # lines handed on to the file or stream, whole
        if not self.is_stdout:
            check_output_target(self.path, force, input_path)

    def __enter__(self) -> AtomicOutput:
        self.open()
        return self

    def open(self) -> None:
        """Get ready to write (the temporary file itself is made at the first write when
        only_if_written)."""
        self._opened = True
        if not self.only_if_written:
            self._open_file()

    def _open_file(self) -> None:
        if self.is_stdout:
            self._file = stdout_bytes()
        elif self.is_stream:
            try:
                self._file = open(self.path, "wb")  # buffered: a short write is retried, never lost
            except OSError as exc:
                raise RescorerError(f"{self.label}: cannot write the output ({_reason(exc)})") from None
        else:
            try:
                fd, tmp_name = tempfile.mkstemp(prefix=temporary_name(self._target) + "-",
                                                dir=self._target.parent)
            except OSError as exc:
                raise RescorerError(f"{self.label}: cannot write the output ({_reason(exc)})") from None
            self.tmp_path = Path(tmp_name)
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; the table should get normal permissions
            self._file = os.fdopen(fd, "wb")  # buffered: a short write is retried, never lost
        if self.path.name.endswith(".gz") and not self.encoded:
            self._stream = gzip_writer(self._file, self.compresslevel, name=self.header_name)
        else:
            self._stream = self._file

    def write(self, data: bytes) -> None:
        """Write bytes as they are (no newline added, not counted as a line)."""
        if not self._opened:
            raise RescorerError(f"{self.label}: write outside the `with` block")
        if self._stream is None:
            self._open_file()
        self._buffer.append(data)
        self._buffered += len(data)
        if self._buffered >= BUFFER_SIZE:
            self._flush_buffer()

    def write_line(self, line: bytes) -> None:
        """Write one line, adding its b"\\n"."""
        self._buffered_lines += 1
        self.write(line + b"\n")
        self.lines_written += 1

    def write_lines(self, lines: Iterable[bytes]) -> None:
        """write_line for each of lines, cheaper per line."""
        for line in lines:
            self.write_line(line)

    def write_joined_lines(self, data: bytes, lines: int) -> None:
        """`lines` whole lines joined, each with its b"\\n", written as write_lines writes them one
        by one: flushed after the same lines, so that a gzip file gets the same bytes."""
        start = 0
        while start < len(data):
            # write_line flushes after the line that fills the buffer to BUFFER_SIZE
            newline = data.find(b"\n", start + BUFFER_SIZE - self._buffered - 1)
            end = len(data) if newline < 0 else newline + 1
            piece = data[start:end]
            self._buffered_lines += piece.count(b"\n")
            self.write(piece)
            start = end
        self.lines_written += lines

    def copy_from(self, path: Path, lines: int) -> None:
        """Append a file's bytes as they are (a unit's gzip member), counting its `lines`."""
        with open(path, "rb") as source:
            while block := source.read(BUFFER_SIZE):
                self.write(block)
        self.lines_written += lines

    def _flush_buffer(self) -> None:
        # One large write per MiB: gzip writers pay a per-call cost that per-line writes would multiply.
        if not self._buffer:
            return
        try:
            with _signals_held(self.is_stream or self.is_stdout):
                self._stream.write(b"".join(self._buffer))
                self.lines_flushed += self._buffered_lines
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._write_error(exc) from None
        self._buffer.clear()
        self._buffered = 0
        self._buffered_lines = 0

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.discard()
            return
        try:
            self.finish()
        except BaseException:
            self.discard()
            raise
        self.commit()

    def finish(self) -> None:
        """Flush everything into the temporary file and make it durable (not yet at the target)."""
        if self._stream is None:
            return
        self._flush_buffer()
        try:
            if self._stream is not self._file:
                self._stream.close()  # writes the gzip trailer; leaves self._file open
            self._stream = None
            if self.is_stdout:
                self._file.flush()
                return
            self._file.flush()
            if not self.is_stream:
                os.fsync(self._file.fileno())
            self._file.close()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._write_error(exc) from None

    def _write_error(self, exc: OSError) -> RescorerError:
        """A failed write, in one line: a file's temporary is removed, so nothing reached it; a
        stream (stdout, a FIFO, a device) has no temporary, and may hold what was written."""
        if self.is_stream or self.is_stdout:
            return RescorerError(f"{self.label}: {_reason(exc)}")
        return RescorerError(f"{self.label}: {_reason(exc)}; nothing was written there "
                             f"(the temporary file is removed)")

    def commit(self) -> None:
        """Move the finished temporary file onto the target (after `finish`)."""
        if self.tmp_path is not None:
            try:
                os.replace(self.tmp_path, self._target)
            except OSError as exc:
                self.discard()
                raise RescorerError(f"{self.label}: cannot replace it ({_reason(exc)})") from None
            self.tmp_path = None
            self._fsync_directory()
        elif self.only_if_written and not self.is_stream and not self.is_stdout \
                and os.path.lexists(self._target):
            os.unlink(self._target)  # an older run's lines, replaced under --force by none
        self._opened = False

    def discard(self) -> None:
        """Close and remove the temporary file, quietly: we are already handling an error."""
        if self.is_stdout:
            self._stream = None
            return
        for stream in (self._stream, self._file):
            try:
                if stream is not None:
                    stream.close()
            except Exception:
                pass
        self._stream = None
        if self.tmp_path is not None:
            try:
                os.unlink(self.tmp_path)
            except FileNotFoundError:
                pass
            self.tmp_path = None

    def _fsync_directory(self) -> None:
        """Make the rename itself durable; best effort (not every OS or file system allows it)."""
        try:
            fd = os.open(self._target.parent, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


@contextmanager
def committed_together(*outputs: Optional[AtomicOutput],
                       on_committed: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Open several AtomicOutputs; on success finish all of them before renaming any, so that
    a full disk while finishing one (a reject file) leaves none of them at its target.

    The renames and `on_committed` happen with SIGINT and SIGTERM deferred: a signal that arrives
    once the outputs are in place is handled only after `on_committed` has said the run is done
    (rescorer.runtime.failure_reports.ending), so it cannot report the complete output as an
    interrupted run's."""
    active = [output for output in outputs if output is not None]
    for output in active:
        output.open()
    try:
        yield
        for output in active:
            output.finish()
    except BaseException:
        for output in active:
            output.discard()
        raise
    with _signals_deferred():
        for output in active:
            output.commit()
        on_committed()


def write_atomically(path: Path, data: bytes) -> None:
    """A small file (a record, a results table) whole or not at all, its bytes as given (never
    compressed, whatever its name): its presence can then mark finished work."""
    with AtomicOutput(path, force=True, encoded=True) as out:
        out.write(data)


@contextmanager
def atomic_paths(*paths: Path) -> Iterator[list[Path]]:
    """Temporary paths beside `paths` for another program to write (Moses, its extractor): on a
    clean exit each is moved onto its target, on an error all are removed, so a target exists
    only once complete."""
    temporaries: list[Path] = []
    try:
        for path in paths:
            fd, name = tempfile.mkstemp(prefix=temporary_name(Path(path)) + "-", dir=Path(path).parent)
            os.fchmod(fd, 0o666 & ~_umask())
            os.close(fd)
            temporaries.append(Path(name))
        yield temporaries
    except BaseException:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
        raise
    for temporary, path in zip(temporaries, paths):
        os.replace(temporary, path)
