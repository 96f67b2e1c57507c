"""`--resume` continues the run a checkpoint holds, and nothing else.

A checkpoint records the options it was trained with. On resume, an option left at its default
takes the checkpoint's value; an option given on the command line must agree with it, except the
few that only say how long or how often (CHANGEABLE). The comparison is key by key over the
model config (every size and architecture setting, whatever the model) and the training
settings, so a setting added later is covered without code here. Differences are refused in
one line that lists them all.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Iterable

from rescorer.errors import RescorerError
from rescorer.training.trainer import resolve_defaults

__all__ = ["CHANGEABLE_SETTINGS", "NOT_RECORDED", "effective_settings", "recordable_options", "merge_resumed_options",
           "resume_differences", "check_resume"]

# Training settings a resumed run may change: when to stop and how often to validate or save.
# The batches drawn at update u depend only on (seed, u), so none of these changes the weights
# of the updates both runs make.
CHANGEABLE_SETTINGS = ("max_updates", "max_epochs", "max_seconds", "patience", "checkpoint_every", "valid_every")
# Options that are about this run only: where it runs and what it writes.
NOT_RECORDED = ("resume", "device", "precision", "cache_dir", "force", "reject_path")


def recordable_options(options: dict) -> dict:
    """The options a checkpoint records: plain values (paths as their names' text)."""
    return {key: (str(value) if isinstance(value, Path) else value)
            for key, value in options.items() if key not in NOT_RECORDED}


def merge_resumed_options(given: dict, explicit: Iterable[str], recorded: dict) -> dict:
    """Options for a resumed run: the ones given on the command line, else the checkpoint's."""
    explicit = set(explicit)
    merged = dict(given)
    for key, value in recorded.items():
        if key in merged and key not in explicit:
            is_path = isinstance(given[key], Path) or key.endswith(("corpus", "_path"))
            merged[key] = Path(value) if is_path and value is not None else value
    return merged


def effective_settings(settings: dict) -> dict:
    """Settings as training used them. A checkpoint from before the length bound had none; one
    from before token batches drew random pairs (and its defaults were those of random pairs)."""
    return resolve_defaults({"max_pair_length": None, "batch_tokens": None, "pair_weights": "unique",
                             **settings})


def _name(key: str) -> str:
    return key.replace("_", "-")


def _differences(section: str, recorded: dict, asked: dict, skip: Iterable[str] = ()) -> list[str]:
    missing = object()
    lines = []
    for key in sorted(set(recorded) | set(asked)):
        if key in skip:
            continue
        old, new = recorded.get(key, missing), asked.get(key, missing)
        if old != new:
            show = lambda value: "unset" if value is missing else repr(value)  # noqa: E731
            lines.append(f"{section}{_name(key)} {show(old)} (checkpoint) vs {show(new)} (now)")
    return lines


def resume_differences(payload: dict, recorded_config: dict, asked_config: dict,
                       asked_settings: object, table: dict) -> list[str]:
    """What this run asks for that the checkpoint was not trained with, one item per key.

    `recorded_config` is the checkpoint's model config as loaded (a version-1 file's upgraded,
    every setting filled in), so that it compares key by key with `asked_config`.
    """
    training = payload.get("training", {})
    differences = _differences("model ", recorded_config, asked_config)
    differences += _differences("", effective_settings(training.get("settings", {})),
                                effective_settings(asdict(asked_settings)), CHANGEABLE_SETTINGS)
    for key in ("table_name", "table_bytes", "corpus_source_name", "corpus_source_bytes",
                "corpus_target_name", "corpus_target_bytes"):
        if key in training and training[key] != table.get(key):
            differences.append(f"{_name(key)} {training[key]!r} (checkpoint) vs {table[key]!r} (now)")
    return differences


def check_resume(checkpoint: Path, payload: dict, recorded_config: dict, asked_config: dict,
                 asked_settings: object, table: dict) -> None:
    """Refuse, in one line listing every difference, a resume that contradicts the checkpoint."""
    differences = resume_differences(payload, recorded_config, asked_config, asked_settings, table)
    if differences:
        raise RescorerError(
            f"{checkpoint}: --resume asks for other settings than the checkpoint was trained with: "
            f"{'; '.join(differences)}. Only {', '.join(map(_name, CHANGEABLE_SETTINGS))} may change "
            f"(--max-time for max-seconds): drop the other options, or start over without --resume "
            f"(with --force)")
