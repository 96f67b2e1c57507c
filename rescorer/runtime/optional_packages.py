"""The optional packages (setup.cfg's extras) that commands import only when they run, and the
one wording of the line that says one is missing. Standard library only, so that the libraries
without the command line (moses_integration, io) can name a missing package too."""

from __future__ import annotations

__all__ = ["OPTIONAL_PACKAGES", "missing_package_line"]

# By the name Python's import reports: the package pip installs and the extra that brings it.
OPTIONAL_PACKAGES = {"sacrebleu": ("sacrebleu", "moses"), "kenlm": ("kenlm", "moses"),
                     "matplotlib": ("matplotlib", "analysis"), "sklearn": ("scikit-learn", "analysis"),
                     "torchao": ("torchao", "int8")}


def missing_package_line(module: str, needed_by: str = "this command") -> str:
    """What to say when optional `module` (a key of OPTIONAL_PACKAGES) is not installed: who
    needs it, and the pip line and extra that bring it, worded the same wherever it is missing."""
    package, extra = OPTIONAL_PACKAGES[module]
    return f"{needed_by} needs {package}, which is not installed: pip install '{package}' or 'rescorer[{extra}]'"
