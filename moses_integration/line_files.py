"""Read plain or compressed text the way Moses tools write it, through `rescorer.io.compression`:
gzip (and bzip2, xz, zstd) is told by magic bytes (Moses names gzipped files with and without `.gz`). Tables and n-best lists
are written with `rescorer.io.atomic_output.AtomicOutput`."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

from rescorer.io.compression import decompressing_reader, sniff_compression
from rescorer.io.gzip_io import BUFFER_SIZE

__all__ = ["count_lines", "decoded", "is_gzipped", "open_binary_read", "read_lines"]


def is_gzipped(path: Path) -> bool:
    """True if the file starts with the gzip magic bytes."""
    with open(path, "rb") as handle:
        return sniff_compression(handle) == "gzip"


@contextmanager
def open_binary_read(path: Path) -> Iterator[BinaryIO]:
    """Open for reading bytes, decompressing if the file is compressed; closes the file on exit."""
    with open(path, "rb", buffering=BUFFER_SIZE) as file:
        decompressed = decompressing_reader(file, str(path))
        if decompressed is None:
            yield file
            return
        with decompressed:  # closing it leaves `file` open: the outer with closes it
            yield decompressed


def decoded(line: bytes) -> str:
    """A line's text as the table path reads it: UTF-8, a byte that is not kept as a lone
    surrogate (`surrogateescape`), so that writing it back gives the same bytes."""
    return line.decode("utf-8", "surrogateescape")


def read_lines(path: Path) -> list[str]:
    """All lines of a (small) text file, without their line endings (`\n`, or `\r\n`).

    Lines end at `\n` only, as Moses reads them (std::getline) and as `count_lines` counts them:
    a lone `\r` inside a line stays in it rather than starting a sentence the decoder never saw.
    Bytes that are not UTF-8 are kept (`decoded`)."""
    with open_binary_read(path) as handle:
        data = handle.read()
    lines = data.split(b"\n")
    if lines[-1] == b"":  # the last line's newline, or an empty file
        lines.pop()
    return [decoded(line[:-1] if line.endswith(b"\r") else line) for line in lines]


def count_lines(path: Path) -> int:
    """Number of lines; a last line without a newline counts too."""
    count = 0
    last = b"\n"
    with open_binary_read(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (0 if last == b"\n" else 1)
