"""A model's Trainer on the example cache (tests/training/conftest.py's example_cache), as the
trainer tests build it."""

import torch

from rescorer.models import ModelSettings
from rescorer.models.model_files import ModelBundle
from rescorer.training.pipeline import new_model
from rescorer.training.trainer import Trainer, TrainSettings

CPU = torch.device("cpu")


def preset_trainer(example_cache, tmp_path, arch="cho2014", preset="tiny", valid_pairs=300, device=CPU,
                   **settings) -> Trainer:
    """A Trainer of `arch`'s `preset` on the example cache (seeded weights), its checkpoint in
    tmp_path; `settings` override the test defaults."""
    vocabularies, cache = example_cache
    torch.manual_seed(0)
    model = new_model(ModelSettings.make(arch, preset), vocabularies.src_vocab, vocabularies.tgt_vocab)
    bundle = ModelBundle(model, vocabularies.src_vocab, vocabularies.tgt_vocab)
    defaults = dict(valid_pairs=valid_pairs, valid_every=1000, checkpoint_every=1000, seed=5)
    return Trainer(bundle, cache, TrainSettings(**{**defaults, **settings}), device, "fp32",
                   tmp_path / "model.checkpoint")


def tiny_trainer(example_cache, tmp_path, arch="cho2014", valid_pairs=300, **settings) -> Trainer:
    """A Trainer of `arch`'s tiny preset (preset_trainer)."""
    return preset_trainer(example_cache, tmp_path, arch, "tiny", valid_pairs, **settings)
