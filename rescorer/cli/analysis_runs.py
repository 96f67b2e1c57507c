"""What the analysis and figure commands share besides options: the files a run reads and
writes (locked, written whole or not at all), and the model loaded on the asked device, torch
imported only then."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

__all__ = ["load_model_on", "run_paths"]


def run_paths(reads: list, output: Optional[Path], role: str, force: bool):
    """RunPaths for a command writing `output` (stdout when None or '-')."""
    from rescorer.io.path_checks import RunPaths, Target

    writes = [] if output is None or str(output) == "-" else [Target(output, role, streamable=role == "output")]
    return RunPaths(reads, writes, force=force)


def load_model_on(model_path: Path, device: str):
    """The model file's bundle, on the device asked for ('auto': CUDA when present)."""
    from rescorer.models.model_files import load_model
    from rescorer.runtime.device import resolve_device

    return load_model(model_path, resolve_device(device))
