"""Score the ini's phrase table with one or more models through the `rescore score` CLI: one
column per model, in the order given, then the word penalty. This package never imports torch.

The scored table is kept for reruns with a record of the models that made it, so a rerun with
other models refuses to reuse it instead of ablating the wrong columns.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from ..errors import MosesConfigError, MosesNotFoundError, MosesRunError

__all__ = ["score_table"]


def score_table(table: Path, models: Sequence[Path], out_path: Path,
                unk_penalty: bool = True) -> Path:
    """`rescore score TABLE --model M1 [--model M2 ...] [--unk-penalty] -o OUT`, once."""
    record = out_path.with_name(out_path.name + ".models.json")
    wanted = {"models": [str(Path(m).resolve()) for m in models], "unk_penalty": unk_penalty}
    if out_path.is_file():
        if record.is_file() and json.loads(record.read_text()) != wanted:
            raise MosesConfigError(
                f"{out_path} was scored with {json.loads(record.read_text())['models']}, not "
                f"{wanted['models']}; use another --out-dir or remove {out_path}")
        return out_path
    executable = shutil.which("rescore")
    if executable is None:
        raise MosesNotFoundError("the `rescore` command is not on PATH: pip install the package")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    argv = [executable, "score", str(table)]
    for model in models:
        argv += ["--model", str(model)]
    argv += ["-o", str(out_path), "--force"] + (["--unk-penalty"] if unk_penalty else [])
    # `rescore score` writes atomically, so out_path exists only once the table is complete.
    if subprocess.call(argv) != 0:
        raise MosesRunError(f"`{' '.join(argv)}` failed")
    record.write_text(json.dumps(wanted) + "\n")
    return out_path
