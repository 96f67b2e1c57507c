"""Compressed inputs, told by their first bytes: gzip, bzip2, xz and zstd, read as `gzip -d`,
`bzip2 -d`, `xz -d` and `zstd -d` read them (several concatenated streams are one file).

This is the one place that sniffs a file's compression, for both packages. Names are not
trusted: Moses writes gzipped files with and without `.gz`, and stdin has no name.

Bytes after the last complete stream that do not start another stream are ignored with a
warning naming how many lines were read, as `gzip -d` does ("trailing garbage ignored"). A
stream that ends early is an error (truncated), and so is damage inside a stream.
"""

from __future__ import annotations

import bz2
import io
import logging
import lzma
import zlib
from typing import BinaryIO, Callable, Optional

from rescorer.errors import RescorerError

try:  # optional speed-up for gzip: pip install isal
    from isal import isal_zlib as _isal_zlib
except ImportError:  # pragma: no cover - depends on the environment
    _isal_zlib = None

__all__ = ["MAGICS", "CompressedStreamError", "sniff_compression", "decompressing_reader"]

log = logging.getLogger("rescorer")

# (format, magic bytes): the first bytes of every stream of that format.
MAGICS = (
    ("gzip", b"\x1f\x8b"),
    ("bzip2", b"BZh"),
    ("xz", b"\xfd7zXZ\x00"),
    ("zstd", b"\x28\xb5\x2f\xfd"),
)
_MAGIC_OF = dict(MAGICS)
_LONGEST_MAGIC = max(len(magic) for _, magic in MAGICS)
INPUT_CHUNK = 1 << 17
READ_BUFFER = 1 << 20


class CompressedStreamError(RescorerError):
    """A compressed input that is truncated or damaged; `reason` says which, without the name,
    so that a reader can add the line it had reached."""

    def __init__(self, name: str, kind: str, reason: str):
        self.name, self.kind, self.reason = name, kind, reason
        super().__init__(f"{name}: {kind} stream is {reason}")


def sniff_compression(stream: io.BufferedReader) -> Optional[str]:
    """'gzip', 'bzip2', 'xz', 'zstd', or None for plain text; consumes nothing."""
    head = stream.peek(_LONGEST_MAGIC)[:_LONGEST_MAGIC]
    for kind, magic in MAGICS:
        if head.startswith(magic):
            return kind
    return None


def _gzip_decompressor():
    if _isal_zlib is not None:
        from rescorer.io import gzip_io

        if gzip_io._igzip is not None:  # the tests turn isal off through gzip_io
            return _isal_zlib.decompressobj(wbits=31)
    return zlib.decompressobj(wbits=31)


def _zstd_decompressor():
    try:
        import zstandard
    except ImportError:
        raise RescorerError("zstd input is not supported without the zstandard package "
                            "(pip install zstandard), or decompress it first: zstd -d") from None
    return zstandard.ZstdDecompressor().decompressobj()


_DECOMPRESSORS: dict[str, Callable] = {
    "gzip": _gzip_decompressor,
    "bzip2": bz2.BZ2Decompressor,
    "xz": lzma.LZMADecompressor,
    "zstd": _zstd_decompressor,
}


def _damage_errors() -> tuple[type[BaseException], ...]:
    errors: tuple = (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError)
    if _isal_zlib is not None:
        errors += (_isal_zlib.error,)
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:
        pass
    return errors


class _StreamsReader(io.RawIOBase):
    """Decompresses one file of concatenated streams; raises CompressedStreamError on damage."""

    def __init__(self, file: BinaryIO, kind: str, name: str):
        self._file, self.kind, self.name = file, kind, name
        self._magic = _MAGIC_OF[kind]
        self._new = _DECOMPRESSORS[kind]
        self._decompressor = self._new()
        self._errors = _damage_errors()
        self._input = b""  # compressed bytes read but not yet given to the decompressor
        self._output = memoryview(b"")
        self._finished = False
        self.trailing_bytes = 0  # bytes of trailing garbage ignored

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._output:
            if self._finished:
                return 0
            self._decompress_more()
        size = min(len(buffer), len(self._output))
        buffer[:size] = self._output[:size]
        self._output = self._output[size:]
        return size

    def _read_input(self) -> bytes:
        data, self._input = self._input, b""
        return data or self._file.read(INPUT_CHUNK)

    def _decompress_more(self) -> None:
        if self._decompressor.eof:
            self._start_next_stream()
            return
        data = self._read_input()
        if not data:
            raise CompressedStreamError(self.name, self.kind,
                                        "truncated (expected more compressed data, found end of file)")
        try:
            self._output = memoryview(self._decompressor.decompress(data))
        except self._errors as error:
            raise CompressedStreamError(self.name, self.kind, f"corrupt ({error})") from None
        if self._decompressor.eof:
            self._input = self._decompressor.unused_data

    def _start_next_stream(self) -> None:
        """After a complete stream: another stream, the end of the file, or trailing garbage."""
        rest = self._read_input()
        while rest and len(rest) < len(self._magic):
            more = self._file.read(INPUT_CHUNK)
            if not more:
                break
            rest += more
        if not rest:
            self._finished = True
        elif rest.startswith(self._magic):
            self._decompressor = self._new()
            self._input = rest
        else:
            self.trailing_bytes = len(rest) + sum(len(block) for block in iter(
                lambda: self._file.read(INPUT_CHUNK), b""))
            self._finished = True


class DecompressingReader(io.BufferedReader):
    """A buffered, line-iterable reader over a compressed file, with the trailing-garbage count."""

    def __init__(self, raw: _StreamsReader):
        super().__init__(raw, READ_BUFFER)
        self.streams = raw

    def warn_trailing_garbage(self, lines_read: int) -> None:
        """Log `gzip -d`'s warning once the data is read, naming how many lines it gave."""
        if self.streams.trailing_bytes:
            log.warning(f"{self.streams.name}: {self.streams.trailing_bytes} bytes of trailing "
                        f"garbage after the {self.streams.kind} data ignored, as {self.streams.kind} "
                        f"-d does; {lines_read} lines read")


def decompressing_reader(file: io.BufferedReader, name: str) -> Optional[DecompressingReader]:
    """A decompressing reader over `file` (which it does not close) when it is compressed, else None."""
    kind = sniff_compression(file)
    if kind is None:
        return None
    return DecompressingReader(_StreamsReader(file, kind, name))
