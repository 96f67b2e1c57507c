"""Read plain or compressed text the way Moses tools write it, through `rescorer.io.compression`:
gzip (and bzip2, xz, zstd) is told by magic bytes (Moses names gzipped files with and without `.gz`). Tables and n-best lists
are written with `rescorer.io.atomic_output.AtomicOutput`."""

from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

from rescorer.io.compression import decompressing_reader, sniff_compression
from rescorer.io.gzip_io import BUFFER_SIZE

__all__ = ["count_lines", "is_gzipped", "open_binary_read", "read_lines"]


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


def read_lines(path: Path) -> list[str]:
    """All lines of a (small) UTF-8 text file, without their line endings."""
    with open_binary_read(path) as handle, io.TextIOWrapper(handle, encoding="utf-8", newline="") as text:
        return [line.rstrip("\r\n") for line in text]


def count_lines(path: Path) -> int:
    """Number of lines; a last line without a newline counts too."""
    count = 0
    last = b"\n"
    with open_binary_read(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (0 if last == b"\n" else 1)
