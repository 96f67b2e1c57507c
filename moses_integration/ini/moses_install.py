"""Find a Moses installation (--moses-dir, $MOSES_HOME, or `moses` on PATH) and name the
programs this package runs, so a missing one is reported before a run, not hours into it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ..errors import MosesNotFoundError

__all__ = ["MosesInstall", "find_moses", "TUNING_BINARIES", "TUNING_SCRIPTS"]

# mert-moses.pl dies unless every one of these is executable in --mertdir (see its source).
TUNING_BINARIES = ("moses", "extractor", "mert", "kbmira", "pro", "evaluator")
TUNING_SCRIPTS = ("training/mert-moses.pl", "training/filter-model-given-input.pl")
COMPACT_BINARY = "processPhraseTableMin"


@dataclass(frozen=True)
class MosesInstall:
    """A Moses root directory holding `bin/` and `scripts/`; `found_by` says how it was found."""

    root: Path
    found_by: str

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def scripts_dir(self) -> Path:
        return self.root / "scripts"

    def binary(self, name: str) -> Path:
        return self.bin_dir / name

    def script(self, relative: str) -> Path:
        return self.scripts_dir / relative

    def missing(self, binaries: Sequence[str] = TUNING_BINARIES,
                scripts: Sequence[str] = TUNING_SCRIPTS) -> list[str]:
        """Names (relative to root) of the required programs that are absent or not executable."""
        wanted = [self.binary(b) for b in binaries] + [self.script(s) for s in scripts]
        return [str(p.relative_to(self.root)) for p in wanted
                if not (p.is_file() and os.access(p, os.X_OK))]

    def require(self, binaries: Sequence[str] = TUNING_BINARIES,
                scripts: Sequence[str] = TUNING_SCRIPTS) -> None:
        missing = self.missing(binaries, scripts)
        if missing:
            raise MosesNotFoundError(
                f"Moses at {self.root} (from {self.found_by}) lacks {', '.join(missing)}: "
                "expected a built mosesdecoder (bin/ from bjam, scripts/ from the source tree)")


def find_moses(moses_dir: Optional[Path] = None) -> MosesInstall:
    """The Moses root: --moses-dir first, then $MOSES_HOME, then the parent of `bin/moses` on PATH."""
    if moses_dir is not None:
        candidates = [(Path(moses_dir), "--moses-dir")]
    elif os.environ.get("MOSES_HOME"):
        candidates = [(Path(os.environ["MOSES_HOME"]), "$MOSES_HOME")]
    else:
        on_path = shutil.which("moses")
        if on_path is None:
            raise MosesNotFoundError(
                "Moses not found: give --moses-dir DIR or set MOSES_HOME to the mosesdecoder "
                "directory (the one holding bin/moses and scripts/), or put bin/ on PATH")
        candidates = [(Path(on_path).resolve().parent.parent, "PATH")]
    root, found_by = candidates[0]
    if not root.is_dir():
        raise MosesNotFoundError(f"Moses directory {root} (from {found_by}) does not exist")
    return MosesInstall(root.resolve(), found_by)
