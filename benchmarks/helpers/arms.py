"""The training arms of the time-to-quality study and of the drivers that time one training
update (main_job_ceiling.py, training_profile.py): the `small` cho2014 GRU on a table's
shortlists and pair cache, with a named recipe or NAME:key=value,... over TrainSettings fields
and `precision` (fp32 or bf16)."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

# "before": the default until issue 18 (the paper's 64 random pairs, Adadelta); "default": today's.
ARMS = {
    "before": {"batch_size": 64, "batch_tokens": None, "optimizer": "adadelta", "learning_rate": None,
               "warmup_updates": None, "sampled_softmax": None},
    "default": {},
}


def parse_arm(spec: str) -> tuple[str, dict, str]:
    """(name, TrainSettings changes, precision) of one --arm."""
    from rescorer.training.trainer import TrainSettings

    name, _, rest = spec.partition(":")
    if not rest:
        if name not in ARMS:
            raise SystemExit(f"unknown arm {name!r}; known: {', '.join(ARMS)}, or NAME:key=value,...")
        return name, ARMS[name], "fp32"
    kinds = {f.name: f.type for f in fields(TrainSettings)}
    changes, precision = {}, "fp32"
    for item in rest.split(","):
        key, _, value = item.partition("=")
        if key == "precision" and value in ("fp32", "bf16"):
            precision = value
        elif key in kinds:
            changes[key] = None if value == "none" else number_or_text(value)
        else:
            raise SystemExit(f"arm {name}: unknown setting {item!r}; valid: {', '.join(kinds)}, "
                             f"precision=fp32|bf16")
    return name, changes, precision


def number_or_text(value: str):
    """A --set/arm value as the setting takes it: an int, a float, or the text itself."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def arm_trainer(spec: str, table: Path, cache_path: Path, seed: int, checkpoint_path: Path):
    """(name, precision, Trainer) of one --arm: the `small` cho2014 GRU on the table's shortlists
    and pair cache, from `seed`, on the CPU, bounded by nothing but the caller."""
    import torch

    from rescorer.data.pair_cache import PairCache
    from rescorer.models import ModelSettings
    from rescorer.models.model_files import ModelBundle
    from rescorer.training.pipeline import build_vocabularies, new_model
    from rescorer.training.trainer import Trainer, TrainSettings

    name, changes, precision = parse_arm(spec)
    torch.manual_seed(seed)
    vocabularies = build_vocabularies(table, 15000)
    model = new_model(ModelSettings.make(preset="small"), vocabularies.src_vocab, vocabularies.tgt_vocab)
    bundle = ModelBundle(model, vocabularies.src_vocab, vocabularies.tgt_vocab)
    settings = replace(TrainSettings(seed=seed, max_updates=10**9, max_epochs=None), **changes)
    trainer = Trainer(bundle, PairCache(cache_path), settings, torch.device("cpu"), precision, checkpoint_path)
    return name, precision, trainer
