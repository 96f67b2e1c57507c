"""Test helpers: the real bible-en-fr artifacts and a stand-in Moses installation."""

import json
import stat
import sys
from pathlib import Path

import pytest

from tests.helpers import SHARED

FIXTURES = SHARED / "data" / "bible-en-fr"

needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"real Moses artifacts not found at {FIXTURES}")

BINARIES = ("moses", "mert", "extractor", "kbmira", "pro", "evaluator", "processPhraseTableMin")
SCRIPTS = ("training/mert-moses.pl", "training/filter-model-given-input.pl")


def install_fake_moses(root: Path, binaries=BINARIES, scripts=SCRIPTS, **settings) -> Path:
    """A Moses root whose programs are the stand-in script; returns root."""
    source = (Path(__file__).parent / "stand_in.py").read_text()
    program = f"#!{sys.executable}\n" + source
    for relative in [f"bin/{b}" for b in binaries] + [f"scripts/{s}" for s in scripts]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(program)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (root / "fake.json").write_text(json.dumps({"fixtures": str(FIXTURES), **settings}))
    return root


def set_fake(root: Path, **settings) -> None:
    data = json.loads((root / "fake.json").read_text())
    data.update(settings)
    (root / "fake.json").write_text(json.dumps(data))


def calls(root: Path, tool: str = None) -> list:
    """The recorded invocations ({"tool", "argv", "cwd"}), optionally of one tool."""
    path = root / "calls.jsonl"
    if not path.is_file():
        return []
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [e for e in entries if tool is None or e["tool"] == tool]
