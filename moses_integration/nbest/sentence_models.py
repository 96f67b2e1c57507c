"""The sentence models of `moses rerank` and the ablation's reranked rows: one n-best feature
per model (RNNfwd= log p(e|f), RNNinv= log p(f|e), CSLM= log p(e) for a target language
model), and per word with `per_word`, scored by the scorers the caller hands in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..scorer import LmScorer, RnnScorer, lm_pair_scorer, pair_scorer
from .language_check import TextChecks, sentence_model_checks, vocabulary_judge
from .rnn_features import NbestModel, add_sentence_features

__all__ = ["AddFeatures", "SentenceFeatures", "added_names", "lm_feature_names", "lm_nbest_model", "rnn_nbest_model",
           "sentence_features"]

AddFeatures = Callable[[Path, Path, Path], None]  # (nbest, source, out)


@dataclass
class SentenceFeatures:
    """What a reranking adds to the lists: the step that scores a list (`add`), the feature names
    it adds, and what the reranking's steps record of the models: their paths and the scorer's
    settings that change the values (precision)."""

    add: AddFeatures
    names: Sequence[str]
    scored_with: Sequence[str] = ()
    scoring: dict = field(default_factory=dict)


def feature_names(directions: Sequence[str]) -> list[str]:
    """RNNfwd, RNNinv, then RNNfwd2, ... for a second model of a direction."""
    names, seen = [], {}
    for direction in directions:
        base = "RNNinv" if direction == "inverse" else "RNNfwd"
        seen[base] = seen.get(base, 0) + 1
        names.append(base + (str(seen[base]) if seen[base] > 1 else ""))
    return names


def added_names(models: Sequence[NbestModel], per_word: bool) -> list[str]:
    """The features add_sentence_features adds for `models`, in the order it adds them."""
    return [name for model in models for name in ([model.name, model.name + "PerWord"] if per_word else [model.name])]


def lm_feature_names(count: int) -> list[str]:
    """CSLM, then CSLM2, ... for a second language model."""
    return ["CSLM" + (str(number) if number > 1 else "") for number in range(1, count + 1)]


def lm_nbest_model(name: str, scorer: LmScorer, model_path: Path) -> NbestModel:
    """A target language model's feature: log p of the hypothesis, which must be in its vocabulary."""
    return NbestModel(name, lm_pair_scorer(scorer, model_path),
                      checks=TextChecks(vocabulary_judge(
                          lambda hypotheses: scorer.known_share(model_path, hypotheses), model_path)))


def rnn_nbest_model(name: str, scorer: RnnScorer, model_path: Path) -> NbestModel:
    """A sentence model's feature: log p of the pair, in the model's direction; the list must be
    in its language and tokenization, UTF-8 for a subword model (language_check)."""
    return NbestModel(name, pair_scorer(scorer, model_path), scorer.direction(model_path) == "inverse",
                      checks=sentence_model_checks(scorer, model_path))


def sentence_features(scorer: Optional[RnnScorer], models: Sequence[Path], per_word: bool,
                      lm_scorer: Optional[LmScorer] = None, lms: Sequence[Path] = (),
                      scoring: Optional[dict] = None) -> SentenceFeatures:
    """The n-best scoring step and the feature names it adds: the sentence models' (each model's
    direction names its features), then the language models'; `scoring`: the scorer's settings
    that change the values, recorded with the models' paths."""
    directions = [scorer.direction(Path(model)) for model in models] if models else []
    names = feature_names(directions)
    sentence_models = [rnn_nbest_model(name, scorer, Path(model)) for name, model in zip(names, models)]
    lm_names = lm_feature_names(len(lms))
    sentence_models += [lm_nbest_model(name, lm_scorer, Path(lm)) for name, lm in zip(lm_names, lms)]

    def add_features(nbest: Path, source: Path, out: Path) -> None:
        add_sentence_features(nbest, out, source, sentence_models, per_word=per_word)

    return SentenceFeatures(add_features, added_names(sentence_models, per_word),
                            [str(Path(path).resolve()) for path in (*models, *lms)], dict(scoring or {}))
