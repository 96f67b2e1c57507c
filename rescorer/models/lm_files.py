"""The CSLM's model file: the same self-contained format as the phrase models
(rescorer.models.model_files: format name and version, plain types and tensors, written
atomically), of kind "lm", with one vocabulary instead of two.

The vocabulary is the shortlist: ids 0-2 the specials of rescorer.data.vocabulary, 3 the
sentence begin "<s>" (rescorer.models.ngram_lm.BOS_ID), then the words, most frequent first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import torch

from rescorer.data.vocabulary import SPECIALS, Vocabulary
from rescorer.errors import ModelFileError
from rescorer.models.model_files import (LM_KIND, bundle_payload, check_shapes, read_model_file, require_kind,
                                         write_model_payload)
from rescorer.models.ngram_lm import BOS, BOS_ID, NgramLM, NgramLmConfig

__all__ = ["LmBundle", "lm_vocabulary", "save_lm", "load_lm", "lm_bundle_from_payload"]


@dataclass
class LmBundle:
    """A CSLM with its shortlist and how it was trained."""

    model: NgramLM
    vocab: Vocabulary
    training: dict = field(default_factory=dict)

    @property
    def config(self) -> NgramLmConfig:
        return self.model.config


def lm_vocabulary(ranked_words: list[str]) -> Vocabulary:
    """The LM's vocabulary: the specials, "<s>" at BOS_ID, then `ranked_words`."""
    words = [word for word in ranked_words if word != BOS and word not in SPECIALS]
    return Vocabulary([*SPECIALS, BOS, *words])


def save_lm(bundle: LmBundle, path: Path, extra: Optional[dict] = None) -> None:
    """Write the LM atomically; `extra` adds entries such as optimizer state (checkpoints)."""
    write_model_payload(bundle_payload(LM_KIND, bundle, {"vocab": list(bundle.vocab.tokens)}, extra), path)


def load_lm(path: Path, device: Optional[torch.device] = None) -> LmBundle:
    """Load an LM file for scoring (eval mode, on `device`, default CPU); a phrase model is
    refused in one line."""
    bundle = lm_bundle_from_payload(read_model_file(path), path)
    if device is not None:
        bundle.model.to(device)
    return bundle


def lm_bundle_from_payload(payload: dict, path: Path) -> LmBundle:
    """The LM (eval mode, CPU) of a payload read by `read_model_file`; `path` names errors."""
    require_kind(payload, path, LM_KIND)
    try:
        config = NgramLmConfig.from_dict(payload["config"])
        vocab = Vocabulary(payload["vocab"])
        check_shapes(lambda: NgramLM(config), payload["weights"], path)
        model = NgramLM(config)
        model.load_state_dict(payload["weights"])
    except ModelFileError:
        raise
    except (ValueError, TypeError, RuntimeError, KeyError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelFileError(f"{path}: model file does not match its own config ({reason})") from None
    if len(vocab) != config.vocab_size or vocab.tokens[BOS_ID] != BOS:
        raise ModelFileError(f"{path}: the vocabulary ({len(vocab)} tokens) does not fit the model "
                             f"({config.vocab_size} ids, {BOS!r} at id {BOS_ID})")
    model.eval()
    return LmBundle(model, vocab, dict(payload["training"]))
