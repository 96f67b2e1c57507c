"""What every model kind shares when a training resumes or is interrupted: the checkpoint it
reads (rescorer.training.resume.checkpoint_to_resume) and the sentence an interrupt ends with
(rescorer.training.pipeline.kept_after_interrupt)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rescorer.errors import RescorerError
from rescorer.models.lm_files import LmBundle, lm_vocabulary, save_lm
from rescorer.models.model_files import read_model_file, save_model
from rescorer.models.ngram_lm import NgramLM, NgramLmConfig
from rescorer.training.pipeline import kept_after_interrupt
from rescorer.training.resume import checkpoint_to_resume


def _lm_file(path: Path, training: dict) -> Path:
    vocab = lm_vocabulary([f"w{index}" for index in range(6)])
    model = NgramLM(NgramLmConfig(vocab_size=len(vocab), order=3, embedding_size=4, hidden_sizes=(5, 6)))
    save_lm(LmBundle(model, vocab, training), path)
    return path


def test_a_missing_checkpoint_is_refused_in_one_line(tmp_path):
    with pytest.raises(RescorerError, match=r"none\.pt\.checkpoint: no checkpoint to resume from$"):
        checkpoint_to_resume(tmp_path / "none.pt.checkpoint")


@pytest.mark.parametrize("kind", ["phrase", "lm"])
def test_a_model_file_without_training_settings_is_refused_for_every_kind(kind, tmp_path, tiny_bundle):
    path = tmp_path / "m.pt.checkpoint"
    if kind == "phrase":
        save_model(dataclasses.replace(tiny_bundle, training={}), path)
    else:
        _lm_file(path, {"preset": "small"})
    with pytest.raises(RescorerError, match=r"m\.pt\.checkpoint: holds no training checkpoint"):
        checkpoint_to_resume(path)


def test_a_checkpoint_with_settings_is_read_or_taken_as_the_caller_read_it(tmp_path):
    path = _lm_file(tmp_path / "m.pt.checkpoint", {"settings": {"format": 1, "fields": {}}})
    payload = checkpoint_to_resume(path)
    assert payload["kind"] == "lm" and payload["training"]["settings"]["format"] == 1
    already = read_model_file(path)
    assert checkpoint_to_resume(tmp_path / "gone", already) is already  # not read again


class _Trainer:
    def __init__(self, updates, checkpoint_update):
        self.state = type("State", (), {"updates": updates})()
        self.checkpoint_update = checkpoint_update


def test_an_interrupt_names_the_pair_cache_only_where_the_kind_has_one(tmp_path):
    checkpoint, cache = tmp_path / "m.pt.checkpoint", tmp_path / "m.pt.cache"
    cache.mkdir()
    hint = "`rescore train t.gz -o m.pt --resume`"
    with_cache = kept_after_interrupt(_Trainer(7, 7), checkpoint, hint, cache)
    without = kept_after_interrupt(_Trainer(7, 5), checkpoint, hint)
    assert with_cache == (f"stopped at update 7; {checkpoint} holds it and the pair cache {cache} is kept: "
                          f"{hint} continues from there")
    assert without == f"stopped at update 7; {checkpoint} (update 5): {hint} continues from update 5"
    assert kept_after_interrupt(_Trainer(0, None), checkpoint, hint) == \
        "stopped before the first update; no model was written"
    assert kept_after_interrupt(None, checkpoint, hint, cache) == \
        f"stopped before training; no model was written; the pair cache {cache} is kept"
