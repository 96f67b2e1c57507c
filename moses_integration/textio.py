"""Open plain or gzipped text the way Moses tools write it: gzip told by magic bytes when
reading (Moses names gzipped files with and without `.gz`) and by the `.gz` suffix when writing."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import BinaryIO, Iterator, TextIO

GZIP_MAGIC = b"\x1f\x8b"


def is_gzipped(path: Path) -> bool:
    """True if the file starts with the gzip magic bytes."""
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def open_binary_read(path: Path) -> BinaryIO:
    """Open for reading bytes, decompressing if the file is gzipped."""
    if is_gzipped(path):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def open_binary_write(path: Path) -> BinaryIO:
    """Open for writing bytes, gzip-compressing if the name ends in `.gz`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        return gzip.open(path, "wb", compresslevel=6)  # type: ignore[return-value]
    return open(path, "wb")


def open_text_read(path: Path) -> TextIO:
    """Open UTF-8 text for reading, newline bytes kept as they are."""
    return io.TextIOWrapper(open_binary_read(path), encoding="utf-8", newline="")


def read_lines(path: Path) -> list[str]:
    """All lines of a (small) text file, without their line endings."""
    with open_text_read(path) as handle:
        return [line.rstrip("\r\n") for line in handle]


def iter_lines(path: Path) -> Iterator[str]:
    """Lines of a text file without line endings, streamed."""
    with open_text_read(path) as handle:
        for line in handle:
            yield line.rstrip("\r\n")


def count_lines(path: Path) -> int:
    """Number of lines; a last line without a newline counts too."""
    count = 0
    last = b"\n"
    with open_binary_read(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (0 if last == b"\n" else 1)


def write_lines(path: Path, lines: list[str]) -> None:
    """Write lines, each followed by `\\n` (gzipped if the name ends in `.gz`)."""
    with open_binary_write(path) as handle:
        for line in lines:
            handle.write(line.encode("utf-8") + b"\n")
