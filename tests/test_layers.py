"""The package's layers (setup.cfg's import-linter contracts) hold, and a contract does fail on
an import that runs back up, so a green run means something."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command;"
        " sys.exit(lint_imports_command())"]

pytest.importorskip("importlinter")


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def copy_of_the_package(tmp_path: Path) -> Path:
    for name in ("rescorer", "moses_integration"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "setup.cfg", tmp_path / "setup.cfg")
    return tmp_path


def test_the_layer_contracts_are_kept():
    result = lint(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("module, upward_import, broken", [
    ("rescorer/io/gzip_io.py", "from rescorer.scoring import chunks", "rescorer.io is not allowed to import rescorer.scoring"),
    ("rescorer/models/flops.py", "import rescorer.cli.options", "rescorer.models is not allowed to import rescorer.cli"),
    ("rescorer/training/budget.py", "from rescorer.scoring import units", "rescorer.training is not allowed to import rescorer.scoring"),
    ("moses_integration/tables/columns.py", "import rescorer.models.base", "moses_integration is not allowed to import torch"),
    ("rescorer/models/registry.py", "from rescorer.models import cho2014", "rescorer.models.registry is not allowed to import torch"),
])
def test_an_upward_import_breaks_a_contract(tmp_path, module, upward_import, broken):
    root = copy_of_the_package(tmp_path)
    path = root / module
    path.write_text(path.read_text() + f"\n{upward_import}  # the deliberate break\n")
    result = lint(root)
    assert result.returncode == 1
    assert broken in result.stdout, result.stdout
