"""A study page's tables, made from its committed result files so that no figure is typed by
hand: each stands on the page between `<!-- table: NAME -->` and `<!-- end table -->`, and the
study's tables module maps NAME to the function that makes it from the files.

A study's module (e.g. benchmarks/studies/proxy/study_tables.py) holds PAGE and TABLES and ends
with `sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))`: without arguments it says which
tables differ from their files, with `--write` it writes them into the page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

BLOCK = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end table -->)", re.S)

Tables = dict[str, Callable[[], str]]


def printed(path: Path) -> Callable[[], str]:
    """A table that is a study's own Markdown output file, as the study wrote it."""
    return lambda: path.read_text()


def page_tables(text: str) -> dict:
    """The generated tables a page holds, by name."""
    return {match["name"]: match["body"] for match in BLOCK.finditer(text)}


def generated_lines(text: str) -> set:
    """The numbers (0-based) of the lines that stand inside a generated table's block."""
    lines = set()
    for match in BLOCK.finditer(text):
        first = text.count("\n", 0, match.start())
        lines.update(range(first, first + match[0].count("\n") + 1))
    return lines


def regenerated(text: str, tables: Tables) -> str:
    """The page with every table made again from its files."""
    return BLOCK.sub(lambda match: match[1] + tables[match["name"]]() + match[4], text)


def differences(text: str, tables: Tables) -> list:
    """The names of the tables that differ from their files' (or are missing from the page)."""
    found = page_tables(text)
    return [name for name in tables if found.get(name) != tables[name]()]


def main(page: Path, tables: Tables, argv: list) -> int:
    text = page.read_text()
    unknown = sorted(set(page_tables(text)) - set(tables))
    if unknown:
        print(f"{page.name}: no function makes table(s) {', '.join(unknown)}")
        return 1
    if argv == ["--write"]:
        page.write_text(regenerated(text, tables))
        return 0
    stale = differences(text, tables)
    for name in stale:
        print(f"{page.name}: table {name} differs from its result files (run with --write)")
    return 1 if stale else 0
