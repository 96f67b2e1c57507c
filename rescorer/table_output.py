"""Atomic phrase-table output: the target path holds either nothing or the complete table.

A scoring run over 10^8 lines can die (out of memory, Ctrl-C, a corrupt input found late); Moses
must never pick up a half-written table, so we write beside the target and rename at the end.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Iterable

from rescorer.errors import RescorerError
from rescorer.gzip_io import BUFFER_SIZE, gzip_writer
from rescorer.paths import same_file

__all__ = ["AtomicOutput"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class AtomicOutput:
    """Context manager with .write(bytes) and .write_line(bytes) that commits the file only on clean exit.

    Writes to a temporary file `.NAME.tmp-XXXX` beside the target, gzip-compressed when the name
    ends in '.gz'; on clean exit flushes, fsyncs and os.replace()s it onto the target; on an
    exception removes it, so nothing is left at or beside the target. '-' is stdout (plain, not
    atomic). Refuses an existing target unless force, and a target that is the input even with force.
    Gzip output has mtime 0 so that the same table always compresses to the same bytes.
    """

    def __init__(
        self,
        path: Path | str,
        force: bool = False,
        input_path: Path | str | None = None,
        compresslevel: int = 6,
    ):
        self.is_stdout = str(path) == "-"
        self.path = Path(path)
        self.compresslevel = compresslevel
        self.lines_written = 0
        self.tmp_path: Path | None = None
        self._file: BinaryIO | None = None  # the real file (or stdout)
        self._stream: BinaryIO | None = None  # what we write into: the gzip writer or the file
        self._buffer: list[bytes] = []
        self._buffered = 0
        if not self.is_stdout:
            self._check_target(force, input_path)

    def _check_target(self, force: bool, input_path: Path | str | None) -> None:
        if input_path is not None and str(input_path) != "-" and same_file(self.path, Path(input_path)):
            raise RescorerError(f"{self.path}: the output is the input phrase table; refusing to overwrite it")
        if self.path.is_dir():
            raise RescorerError(f"{self.path}: the output is a directory")
        if self.path.exists() and not force:
            raise RescorerError(f"{self.path}: the output exists; refusing to overwrite it without force")
        if not self.path.parent.is_dir():
            raise RescorerError(f"{self.path}: cannot write the output (no directory {self.path.parent})")

    def __enter__(self) -> AtomicOutput:
        if self.is_stdout:
            self._file = self._stream = sys.stdout.buffer
            return self
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f".{self.path.name}.tmp-", dir=self.path.parent)
        except OSError as exc:
            raise RescorerError(f"{self.path}: cannot write the output ({exc.strerror})") from None
        self.tmp_path = Path(tmp_name)
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; the table should get normal permissions
        self._file = os.fdopen(fd, "wb", buffering=0)
        if self.path.name.endswith(".gz"):
            self._stream = gzip_writer(self._file, self.compresslevel, name=str(self.path))
        else:
            self._stream = self._file
        return self

    def write(self, data: bytes) -> None:
        """Write bytes as they are (no newline added, not counted as a line)."""
        if self._stream is None:
            raise RescorerError(f"{self.path}: write outside the `with` block")
        self._buffer.append(data)
        self._buffered += len(data)
        if self._buffered >= BUFFER_SIZE:
            self._flush_buffer()

    def write_line(self, line: bytes) -> None:
        """Write one line, adding its b"\\n"."""
        self.write(line + b"\n")
        self.lines_written += 1

    def write_lines(self, lines: Iterable[bytes]) -> None:
        """write_line for each of lines, cheaper per line."""
        for line in lines:
            self.write_line(line)

    def _flush_buffer(self) -> None:
        # One large write per MiB: gzip writers pay a per-call cost that per-line writes would multiply.
        self._stream.write(b"".join(self._buffer))
        self._buffer.clear()
        self._buffered = 0

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.is_stdout:
            if exc_type is None:
                self._flush_buffer()
                self._file.flush()
            self._stream = None
            return
        if exc_type is not None:
            self._discard()
            return
        try:
            self._flush_buffer()
            if self._stream is not self._file:
                self._stream.close()  # writes the gzip trailer; leaves self._file open
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.tmp_path, self.path)
        except BaseException:
            self._discard()
            raise
        self._stream = None
        self._fsync_directory()

    def _discard(self) -> None:
        """Close and remove the temporary file, quietly: we are already handling an error."""
        for stream in (self._stream, self._file):
            try:
                stream.close()
            except Exception:
                pass
        self._stream = None
        try:
            os.unlink(self.tmp_path)
        except FileNotFoundError:
            pass

    def _fsync_directory(self) -> None:
        """Make the rename itself durable; best effort (not every OS or file system allows it)."""
        try:
            fd = os.open(self.path.parent, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)
