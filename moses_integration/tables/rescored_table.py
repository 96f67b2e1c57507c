"""Score the ini's phrase table with one or more models through the scorer the caller hands in:
one column per model, in the order given, then the word penalty. This package never imports torch.

The scored table is kept for reruns with a record of the models that made it, so a rerun with
other models refuses to reuse it instead of ablating the wrong columns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from rescorer.io.atomic_output import write_atomically

from ..errors import MosesConfigError
from ..scorer import RnnScorer

__all__ = ["rescored_table"]


def rescored_table(scorer: RnnScorer, table: Path, models: Sequence[Path], out_path: Path,
                   unk_penalty: bool = True, report: Callable[[str], None] = lambda line: None) -> Path:
    """`out_path`: `table` scored with `models` (and the word penalty), once; a rerun reuses it."""
    record = out_path.with_name(out_path.name + ".models.json")
    wanted = {"models": [str(Path(m).resolve()) for m in models], "unk_penalty": unk_penalty}
    if out_path.is_file():
        if record.is_file() and json.loads(record.read_text()) != wanted:
            raise MosesConfigError(
                f"{out_path} was scored with {json.loads(record.read_text())['models']}, not "
                f"{wanted['models']}; use another --out-dir or remove {out_path}")
        return out_path
    out_path.parent.mkdir(parents=True, exist_ok=True)
    # The scorer writes atomically, so out_path exists only once the table is complete.
    report(scorer.score_table(table, out_path, models, unk_penalty=unk_penalty))
    write_atomically(record, (json.dumps(wanted) + "\n").encode())
    return out_path
