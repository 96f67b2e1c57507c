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

from rescorer.counts import counted
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
# A stream starts with more than its magic, and text can begin with a magic ("BZh..."): gzip's
# method byte is 8 (deflate); bzip2's 'BZh' is followed by a level 1-9 and the magic of a block
# (pi) or of the end of the stream (sqrt(pi), an empty stream).
_BZIP2_BLOCKS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
_LONGEST_MAGIC = 10


def _starts_stream(kind: str, head: bytes) -> bool:
    """Whether `head` (the first bytes, at least _LONGEST_MAGIC when the data has them) begins a
    stream of `kind`."""
    if not head.startswith(_MAGIC_OF[kind]):
        return False
    if kind == "gzip":
        return head[2:3] == b"\x08"
    if kind == "bzip2":
        return head[3:4] in tuple(b"%d" % level for level in range(1, 10)) and head[4:10] in _BZIP2_BLOCKS
    return True
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
    for kind, _ in MAGICS:
        if _starts_stream(kind, head):
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
        self._bytes_read = 0  # of the compressed file, to name where garbage starts
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
        return data or self._read_file()

    def _read_file(self) -> bytes:
        data = self._file.read(INPUT_CHUNK)
        self._bytes_read += len(data)
        return data

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
        while rest and len(rest) < _LONGEST_MAGIC:
            more = self._read_file()
            if not more:
                break
            rest += more
        if not rest:
            self._finished = True
        elif _starts_stream(self.kind, rest):
            self._decompressor = self._new()
            self._input = rest
        else:
            self._skip_trailing_garbage(rest)

    def _skip_trailing_garbage(self, rest: bytes) -> None:
        """Bytes after the last stream are ignored, with a warning, as `gzip -d` does. Garbage
        followed by another stream is an error: skipping to the end would lose that stream's
        lines (gzip -d stops there too, and exits 2)."""
        start = self._bytes_read - len(rest)  # where the garbage begins in the file
        seen, window = 0, rest
        while window:
            more = self._read_file()
            data = window + more[:_LONGEST_MAGIC]  # a stream start may reach into the next block
            position = data.find(self._magic)
            while position != -1 and position < len(window):
                if _starts_stream(self.kind, data[position:position + _LONGEST_MAGIC]):
                    raise CompressedStreamError(
                        self.name, self.kind,
                        f"damaged: garbage at byte {start} before another {self.kind} stream at "
                        f"byte {start + seen + position}")
                position = data.find(self._magic, position + 1)
            seen, window = seen + len(window), more
        self.trailing_bytes = seen
        self._finished = True


class DecompressingReader(io.BufferedReader):
    """A buffered, line-iterable reader over a compressed file, with the trailing-garbage count."""

    def __init__(self, raw: _StreamsReader):
        super().__init__(raw, READ_BUFFER)
        self.streams = raw

    def warn_trailing_garbage(self, lines_read: int) -> None:
        """Log `gzip -d`'s warning once the data is read, naming how many lines it gave."""
        if self.streams.trailing_bytes:
            log.warning(f"{self.streams.name}: {counted(self.streams.trailing_bytes, 'byte')} of trailing "
                        f"garbage after the {self.streams.kind} data ignored, as {self.streams.kind} "
                        f"-d does; {counted(lines_read, 'line')} read")


def decompressing_reader(file: io.BufferedReader, name: str) -> Optional[DecompressingReader]:
    """A decompressing reader over `file` (which it does not close) when it is compressed, else None."""
    kind = sniff_compression(file)
    if kind is None:
        return None
    return DecompressingReader(_StreamsReader(file, kind, name))
