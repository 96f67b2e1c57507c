"""Markdown and CSV tables for the analysis commands (Tables 2 and 3), written whole or not at all."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Optional, Sequence

from rescorer.io.atomic_output import AtomicOutput, stdout_bytes

__all__ = ["markdown_cell", "markdown_table", "csv_table", "format_log_p", "write_text"]


def markdown_cell(value: object) -> str:
    """A Markdown cell: `|` escaped, line breaks as spaces (a phrase may hold a bare `|`)."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(map(markdown_cell, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(markdown_cell, row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def csv_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buffer.getvalue()


def format_log_p(value: Optional[float], digits: int = 2) -> str:
    """log p for a table cell: fixed digits, '' when unknown."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.{digits}f}"


def write_text(text: str, path: Optional[Path], force: bool = False) -> None:
    """To stdout when path is None or '-', else atomically (nothing at `path` until complete)."""
    data = text.encode("utf-8", "surrogateescape")
    if path is None or str(path) == "-":
        stdout = stdout_bytes()
        stdout.write(data)
        stdout.flush()
        return
    with AtomicOutput(path, force=force) as out:
        out.write(data)
