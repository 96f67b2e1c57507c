"""What a resumable step of the Moses wing was made from, kept beside its results, so that a rerun
reuses the step only when it would make the same results again.

A step (decode a set, score a list with the models, extract, tune, rerank, evaluate) writes its
results whole or not at all (rescorer/io/atomic_output.py), then its record: a JSON file of its
inputs (files by size and sha256 of their bytes: a model retrained in place at the same path is
another model), the settings that change its results, and its results' own size and sha256
(a result damaged or replaced since is not the step's). The record, then the old results, are
removed before the step is redone, so a record always describes the results beside it.

`check(step)` says whether a rerun may reuse the results: a missing, unreadable or other record,
or a missing or changed result, makes it redo the step (or refuse, where redoing would throw
away work the user may want; the caller decides), with a reason naming what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from rescorer.io.atomic_output import write_atomically

from .ini.moses_ini import MosesIni

__all__ = ["Step", "changed", "check", "damaged", "fingerprint", "files_of", "forget", "ini_files", "record"]

_CHUNK = 1 << 20
_known: dict = {}  # (path, inode, size, mtime_ns, ctime_ns) -> sha256: a file read once per run


def fingerprint(path: Path) -> dict:
    """{"size", "sha256"} of a file's bytes, read in chunks; a missing file is {"missing": true}.
    Within one process a file unchanged on disk (same inode, size and times) is read once: the
    ablation's steps share tables and models."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return {"missing": True}
    key = (str(Path(path).resolve()), status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    if key not in _known:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
        _known[key] = digest.hexdigest()
    return {"size": status.st_size, "sha256": _known[key]}


def files_of(paths: Iterable[Path]) -> list:
    """The fingerprints of several files, in order (a model list, the references)."""
    return [fingerprint(Path(path)) for path in paths]


def ini_files(ini_path: Path, base_dir: Path) -> list:
    """The fingerprints of the files a moses.ini's features name (tables, language models): a
    table replaced at the same path makes another system."""
    ini = MosesIni.read(ini_path)
    ini.make_paths_absolute(base_dir)
    paths = [Path(feature.args["path"]) for feature in ini.features() if "path" in feature.args]
    return [fingerprint(path) if path.is_file() else {"not a file": str(path)} for path in paths]


@dataclass
class Step:
    """One step: a name for messages, its record file, its result files, and what it is made of
    now: `inputs` (role -> a fingerprint or a list of them) and `settings` (JSON values)."""

    name: str
    record_path: Path
    results: Sequence[Path]
    inputs: Mapping = field(default_factory=dict)
    settings: Mapping = field(default_factory=dict)

    def made_from(self) -> dict:
        """Inputs and settings as JSON reads them back (tuples become lists)."""
        return json.loads(json.dumps({"inputs": dict(self.inputs), "settings": dict(self.settings)}))


def _read(path: Path) -> Optional[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def changed(step: Step) -> Optional[str]:
    """None when the step's record says it was made from what it is made of now; else what
    changed, as a phrase ("its models changed since ..."), or that there is no readable record."""
    before = _read(step.record_path)
    if before is None or not isinstance(before.get("made_from"), dict):
        return f"no readable record of what {step.name} was made from ({step.record_path})"
    made, now = before["made_from"], step.made_from()
    inputs, settings = made.get("inputs", {}), made.get("settings", {})
    differ = [f"its {role}" for role in now["inputs"] if inputs.get(role) != now["inputs"][role]]
    differ += [f"its setting {name}" for name in now["settings"] if settings.get(name) != now["settings"][name]]
    differ += [f"its {role} (no longer asked for)" for role in inputs if role not in now["inputs"]]
    return f"{', '.join(differ)} changed since {step.name} was made" if differ else None


def damaged(step: Step, only_recorded: bool = False) -> Optional[str]:
    """None when every result is the file the step recorded writing; else which one is not.
    `only_recorded`: a result the record does not name yet (a run recorded as it began) passes."""
    kept = (_read(step.record_path) or {}).get("results") or {}
    for path in step.results:
        if only_recorded and Path(path).name not in kept:
            continue
        if kept.get(Path(path).name) != fingerprint(Path(path)):
            return f"{path} is not the file {step.name} wrote (changed or damaged since)"
    return None


def check(step: Step) -> Optional[str]:
    """None when the results may be reused; else why not (a result missing, the record missing
    or other, a result changed since)."""
    missing = [path for path in step.results if not Path(path).is_file()]
    if missing:
        return f"{missing[0]} is missing"
    return changed(step) or damaged(step)


def forget(step: Step) -> None:
    """Before the step is redone: its record, then its old results (the record first: results
    without a record are redone, never reused)."""
    Path(step.record_path).unlink(missing_ok=True)
    for path in step.results:
        Path(path).unlink(missing_ok=True)


def record(step: Step) -> None:
    """After the results are in place: what they were made from, and their own fingerprints."""
    data = {"step": step.name, "made_from": step.made_from(),
            "results": {Path(path).name: fingerprint(Path(path)) for path in step.results}}
    Path(step.record_path).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(Path(step.record_path), (json.dumps(data, indent=1) + "\n").encode("utf-8"))
