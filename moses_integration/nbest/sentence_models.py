"""The sentence models of `moses rerank` and the ablation's reranked rows: one n-best feature
per model (RNNfwd= log p(e|f), RNNinv= log p(f|e)), and per word with `per_word`, scored by the
scorer the caller hands in."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from ..scorer import RnnScorer, pair_scorer
from .rnn_features import SentenceModel, add_sentence_features

__all__ = ["AddFeatures", "sentence_features"]

AddFeatures = Callable[[Path, Path, Path], None]  # (nbest, source, out)


def feature_names(directions: Sequence[str]) -> list[str]:
    """RNNfwd, RNNinv, then RNNfwd2, ... for a second model of a direction."""
    names, seen = [], {}
    for direction in directions:
        base = "RNNinv" if direction == "inverse" else "RNNfwd"
        seen[base] = seen.get(base, 0) + 1
        names.append(base + (str(seen[base]) if seen[base] > 1 else ""))
    return names


def sentence_features(scorer: RnnScorer, models: Sequence[Path], per_word: bool) -> tuple[AddFeatures, list[str]]:
    """(add_features, names): the n-best scoring step and the feature names it adds. Each model's
    direction names its features."""
    directions = [scorer.direction(Path(model)) for model in models]
    names = feature_names(directions)
    new = [n for name in names for n in ([name, name + "PerWord"] if per_word else [name])]
    sentence_models = [SentenceModel(name, pair_scorer(scorer, Path(model)), direction == "inverse")
                       for name, model, direction in zip(names, models, directions)]

    def add_features(nbest: Path, source: Path, out: Path) -> None:
        add_sentence_features(nbest, out, source, sentence_models, per_word=per_word)

    return add_features, new
