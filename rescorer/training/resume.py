"""`--resume` continues the run a checkpoint holds, and nothing else.

A checkpoint records its training settings by field name (TrainSettings.stored, with a format
version) and its raw model options. On resume, a setting not given on the command line takes
the checkpoint's value; one given must agree with it, except the fields declared MAY_CHANGE
(how long, how often). The comparison is key by key over the model config (every size and
architecture setting, whatever the model) and the recorded training fields, so a field added to
TrainSettings is covered without code here. Differences are refused in one line that lists them
all. A checkpoint written before the stored format (raw option names under `options`, resolved
settings under `settings`) is upgraded on read (`recorded_training`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict
from pathlib import Path
from typing import Iterable, Optional

from rescorer.errors import RescorerError
from rescorer.models.settings import MODEL_OPTION_KEYS, ModelOptions
from rescorer.records import MAY_CHANGE, MUST_MATCH, from_stored, settings_of
from rescorer.training.recipes import SUBWORD_SIZE, resolve_defaults
from rescorer.training.settings import NO_SUBWORDS, TRAIN_SETTINGS_FORMAT, TrainSettings

__all__ = ["CHANGEABLE_SETTINGS", "checkpoint_to_resume", "recorded_training", "resumed_settings", "resumed_model_options",
           "effective_settings", "resume_differences", "check_resume"]

# Training settings a resumed run may change: when to stop and how often to validate or save.
CHANGEABLE_SETTINGS = tuple(field.name for field, declared in settings_of(TrainSettings)
                            if declared.resume == MAY_CHANGE)
_COMPARED = tuple(field.name for field, declared in settings_of(TrainSettings) if declared.resume == MUST_MATCH)
# What checkpoints written before a setting existed (or was recorded) trained with: no length
# bound; random pairs (with their defaults) before token batches; unique pairs before pair
# weights; shortlists of the size asked for, unrecorded (None: a resume may not ask for a size);
# a constant learning rate before --lr-decay; the plain loss before --label-smoothing; no
# weight decay before --weight-decay; a constant rate after the warm-up before --lr-schedule;
# the best weights alone before --average; a held-out slice before --valid-src/--valid-tgt;
# words before --subwords.
_BEFORE_THE_SETTING = {"max_pair_length": None, "batch_tokens": None, "pair_weights": "unique",
                       "shortlist_size": None, "lr_decay": 1.0, "label_smoothing": 0.0, "weight_decay": 0.0,
                       "lr_schedule": "constant", "average": 0, "valid_src": None, "valid_tgt": None,
                       "subwords": NO_SUBWORDS, "subword_size": SUBWORD_SIZE}


def checkpoint_to_resume(checkpoint: Path, payload: Optional[dict] = None) -> dict:
    """The checkpoint that --resume continues, read (or `payload`, when the caller has read it):
    a missing one, or a model file that holds no training, is refused in one line. Every model
    kind resumes through here."""
    from rescorer.models.model_files import read_model_file

    if payload is None:
        if not checkpoint.is_file():
            raise RescorerError(f"{checkpoint}: no checkpoint to resume from")
        payload = read_model_file(checkpoint)
    if "settings" not in payload.get("training", {}):
        raise RescorerError(f"{checkpoint}: holds no training checkpoint (no training settings)")
    return payload


def recorded_training(training: dict) -> tuple[dict, dict]:
    """(training fields by field name, raw model options) that a checkpoint's `training` record
    holds, a file of the older format (raw option names) upgraded."""
    settings = training.get("settings", {})
    if "format" in settings:
        if settings["format"] != TRAIN_SETTINGS_FORMAT:
            raise RescorerError(f"training settings of format {settings['format']}: this rescorer reads "
                                f"format {TRAIN_SETTINGS_FORMAT}")
        fields = from_stored(TrainSettings, settings["fields"])
        # a field the format stores but this file lacks did not exist when it was written
        before = {key: value for key, value in _BEFORE_THE_SETTING.items() if key not in fields}
        return {**before, **fields}, dict(training.get("model_options", {}))
    options = training.get("options", {})
    fields = {**{field.name: field.default for field, declared in settings_of(TrainSettings) if declared.recorded},
              **_BEFORE_THE_SETTING, **from_stored(TrainSettings, options), **from_stored(TrainSettings, settings)}
    return fields, {key: options[key] for key in MODEL_OPTION_KEYS if key in options}


def resumed_settings(settings: TrainSettings, explicit: Iterable[str], recorded: dict) -> TrainSettings:
    """Settings for a resumed run: the ones given on the command line, else the checkpoint's."""
    explicit = set(explicit)
    return dataclasses.replace(settings, **{key: value for key, value in recorded.items() if key not in explicit})


def resumed_model_options(given: ModelOptions, explicit: Iterable[str], recorded: dict) -> ModelOptions:
    """Model options for a resumed run: the ones given on the command line, else the checkpoint's
    (`recorded`, as it stores them)."""
    explicit = set(explicit)
    return dataclasses.replace(given, **{key: value for key, value in recorded.items()
                                         if key in MODEL_OPTION_KEYS and key not in explicit})


def effective_settings(settings: dict, model_width: Optional[int] = None) -> dict:
    """Settings as training used them, for a model `model_width` wide (the default learning rate
    scales with it). A checkpoint from before the length bound had none; one from before token
    batches drew random pairs (and its defaults were those of random pairs)."""
    return resolve_defaults({**_BEFORE_THE_SETTING, **settings}, model_width)


def _name(key: str) -> str:
    return key.replace("_", "-")


def _differences(section: str, recorded: dict, asked: dict, keys: Iterable[str]) -> list[str]:
    missing = object()
    lines = []
    for key in sorted(keys):
        old, new = recorded.get(key, missing), asked.get(key, missing)
        if old != new:
            show = lambda value: "unset" if value is missing else repr(value)  # noqa: E731
            lines.append(f"{section}{_name(key)} {show(old)} (checkpoint) vs {show(new)} (now)")
    return lines


def _plain(values: dict) -> dict:
    return {key: str(value) if isinstance(value, Path) else value for key, value in values.items()}


def resume_differences(payload: dict, recorded_config: dict, asked_config: dict,
                       asked_settings: TrainSettings, table: dict, model_width: Optional[int] = None) -> list[str]:
    """What this run asks for that the checkpoint was not trained with, one item per key.

    `recorded_config` is the checkpoint's model config as loaded (a version-1 file's upgraded,
    every setting filled in), so that it compares key by key with `asked_config`; `model_width`
    that of the asked model (rescorer.models.model_width), for the default learning rate.
    """
    training = payload.get("training", {})
    differences = _differences("model ", recorded_config, asked_config, set(recorded_config) | set(asked_config))
    recorded, _ = recorded_training(training)
    asked = asdict(asked_settings)
    if asked.get("shortlist_size") is None:  # not asked for (the library's callers): the checkpoint's
        asked["shortlist_size"] = recorded.get("shortlist_size")
    differences += _differences("", _plain(effective_settings(recorded, model_width)),
                                _plain(effective_settings(asked, model_width)), _COMPARED)
    return differences + _source_differences(training, table)


_SOURCE_KEYS = {"table": ("table_name", "table_bytes"),
                "corpus": ("corpus_source_name", "corpus_source_bytes", "corpus_target_name", "corpus_target_bytes")}


def _source_kind(record: dict) -> str:
    return next((kind for kind, keys in _SOURCE_KEYS.items() if keys[0] in record), "")


def _described_source(record: dict) -> str:
    if _source_kind(record) == "table":
        return f"phrase table {record['table_name']!r}"
    return f"parallel corpus {record['corpus_source_name']!r}, {record['corpus_target_name']!r}"


def _source_differences(training: dict, source: dict) -> list[str]:
    """Whether this run reads what the checkpoint was trained on: the same kind of source (a
    table, or a parallel corpus), of the same names and sizes."""
    kind = _source_kind(training)
    if not kind:  # a checkpoint from before sources were recorded
        return []
    if kind != _source_kind(source):
        return [f"trained on {_described_source(training)} (checkpoint) vs {_described_source(source)} (now)"]
    return [f"{_name(key)} {training[key]!r} (checkpoint) vs {source[key]!r} (now)"
            for key in _SOURCE_KEYS[kind] if key in training and training[key] != source.get(key)]


def _changeable() -> str:
    names = ", ".join(map(_name, CHANGEABLE_SETTINGS))
    renamed = [f"{declared.option} for {_name(field.name)}" for field, declared in settings_of(TrainSettings)
               if field.name in CHANGEABLE_SETTINGS and declared.option and declared.option != "--" + _name(field.name)]
    return names + (f" ({'; '.join(renamed)})" if renamed else "")


def check_resume(checkpoint: Path, payload: dict, recorded_config: dict, asked_config: dict,
                 asked_settings: TrainSettings, table: dict, model_width: Optional[int] = None) -> None:
    """Refuse, in one line listing every difference, a resume that contradicts the checkpoint."""
    differences = resume_differences(payload, recorded_config, asked_config, asked_settings, table, model_width)
    if differences:
        raise RescorerError(
            f"{checkpoint}: --resume asks for other settings than the checkpoint was trained with: "
            f"{'; '.join(differences)}. Only {_changeable()} may change: drop the other options, or start "
            f"over without --resume (with --force)")
