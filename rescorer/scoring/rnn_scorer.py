"""The scorer the Moses wing is handed (moses_integration.scorer.RnnScorer): phrase tables and
n-best pairs scored in this process, on one device and precision resolved once, each model file
loaded once. It replaces running `rescore score` from PATH, which might name another install."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from rescorer.data.text_encoding import SideEncoding
from rescorer.models.model_files import ModelBundle, load_model
from rescorer.models.precision import precision_for, quantized
from rescorer.runtime.device import resolve_device
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.scoring.precision_check import SAMPLE_PAIRS, choose_precision, table_sample
from rescorer.scoring.settings import ScoreSettings
from rescorer.scoring.table_rescoring import rescore_table

__all__ = ["InProcessScorer"]

log = logging.getLogger("rescorer")


class InProcessScorer:
    """Scores with the caller's device, precision ('auto' as `rescore score` resolves it: checked
    once per model, on the first table or pairs it scores) and torch threads (None: torch's
    default, as a `rescore score` child process had)."""

    def __init__(self, device: str = "auto", precision: str = "auto", threads: Optional[int] = None):
        self.device = resolve_device(device)
        self.asked = precision
        self.precision = precision_for(precision, self.device.type, "score")  # until a check decides 'auto' (below)
        if threads is not None:
            torch.set_num_threads(threads)
        self._bundles: dict[Path, ModelBundle] = {}
        self._checked: dict[Path, str] = {}  # 'auto': each model's precision, decided on its first pairs

    def precision_for(self, model_paths: Sequence[Path], sample: Callable[[], Sequence[tuple[str, str]]]) -> str:
        """The precision to score with these models: the asked one, or for 'auto' what the check
        (rescorer.scoring.precision_check) decides for each model the first time it scores,
        on `sample()` (bf16 only if every model passed); the decision is logged in one line."""
        if self.asked != "auto":
            return self.precision
        unchecked = [path for path in model_paths if Path(path).resolve() not in self._checked]
        if unchecked:
            choice = choose_precision("auto", self.device, [(Path(path).name, self.bundle(path)) for path in unchecked],
                                      sample)
            if choice.line:
                log.info(choice.line)
            for index, path in enumerate(unchecked):  # a check per model, or none (no native bf16)
                passed = choice.checks[index].passed if choice.checks else choice.precision == "bf16"
                self._checked[Path(path).resolve()] = "bf16" if passed else "fp32"
        chosen = {self._checked[Path(path).resolve()] for path in model_paths}
        return "bf16" if chosen == {"bf16"} else "fp32"

    def bundle(self, model_path: Path) -> ModelBundle:
        """The model at `model_path`, loaded on the first use (int8-quantized under int8)."""
        key = Path(model_path).resolve()
        if key not in self._bundles:
            bundle = load_model(Path(model_path), self.device)
            quantized(bundle.model, self.precision)
            self._bundles[key] = bundle
        return self._bundles[key]

    def direction(self, model_path: Path) -> str:
        return self.bundle(model_path).direction

    def reads_utf8_only(self, model_path: Path) -> bool:
        """A subword model: sentencepiece would read a byte that is not UTF-8 as U+FFFD."""
        return self.bundle(model_path).subwords is not None

    def known_share(self, model_path: Path, sentences: Sequence[str]) -> float:
        """The share of the sentences' words (a translation's target text) in the model's
        shortlist of that side; 1.0 for a subword model, which reads every string."""
        return _target_text_side(self.bundle(model_path)).known_share(sentences)

    def pieces_per_word(self, model_path: Path, sentences: Sequence[str]) -> Optional[tuple[float, Optional[float]]]:
        """A subword model's pieces per word of the sentences (a translation's target text), and
        of its training text of that side (None in files written before training kept it);
        None for a word model."""
        bundle = self.bundle(model_path)
        if bundle.subwords is None:
            return None
        side = "source" if bundle.direction == "inverse" else "target"
        trained = bundle.training.get("pieces_per_word", {}).get(side)
        return _target_text_side(bundle).units_per_word(sentences), trained

    def score_pairs(self, model_path: Path, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not len(pairs):
            return np.zeros(0, dtype=np.float64)
        precision = self.precision_for([model_path], lambda: list(pairs[:SAMPLE_PAIRS]))
        return score_pairs(self.bundle(model_path), pairs, device=self.device.type, precision=precision)

    def score_table(self, table_in: Path, table_out: Path, model_paths: Sequence[Path],
                    unk_penalty: bool = False) -> str:
        """`rescore score TABLE --model M ... -o OUT --force [--unk-penalty]`: the same settings,
        so the same bytes; the output is written atomically (in units, as that command does)."""
        paths = [Path(path) for path in model_paths]
        precision = self.precision_for(paths, lambda: table_sample(Path(table_in)))
        settings = ScoreSettings(unk_penalty=unk_penalty, force=True, precision=precision)
        names = [path.name for path in paths]
        summary = rescore_table(Path(table_in), Path(table_out), [self.bundle(path) for path in paths],
                                settings, model_names=names)
        return summary.report(names, None, unk_penalty, Path(table_out))


def _target_text_side(bundle: ModelBundle) -> SideEncoding:
    """How the model reads a translation's target text: its target side, an inverse model's source side."""
    return bundle.src_encoding if bundle.direction == "inverse" else bundle.tgt_encoding
