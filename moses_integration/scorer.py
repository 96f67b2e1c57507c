"""What the Moses wing needs of the RNN scorer, declared here so that this package imports
neither torch nor click: the commands build one scorer in process
(rescorer.scoring.rnn_scorer.InProcessScorer), on the caller's device, and hand it to the
phrase-table and n-best steps alike."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Protocol, Sequence

__all__ = ["LmScorer", "PairScorer", "RnnScorer", "lm_pair_scorer", "pair_scorer"]

PairScorer = Callable[[Sequence[tuple[str, str]]], Sequence[float]]


class RnnScorer(Protocol):
    def score_table(self, table_in: Path, table_out: Path, model_paths: Sequence[Path],
                    unk_penalty: bool = False) -> str:
        """Write `table_in` to `table_out` (atomically) with one column per model, then the word
        penalty, byte for byte as `rescore score` writes it; returns a one-line summary."""

    def score_pairs(self, model_path: Path, pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        """log p of each (source, target) pair by that model (log p(source | target) for an
        inverse one), in nats."""

    def direction(self, model_path: Path) -> str:
        """'forward' or 'inverse': which side the model predicts."""

    def reads_utf8_only(self, model_path: Path) -> bool:
        """Whether the model reads UTF-8 text only: a subword model (sentencepiece would read a
        byte that is not UTF-8 as U+FFFD)."""

    def known_share(self, model_path: Path, sentences: Sequence[str]) -> float:
        """The share of the sentences' words (target text) in the model's shortlist of that side
        (1.0 for a subword model, which reads every string)."""

    def pieces_per_word(self, model_path: Path, sentences: Sequence[str]) -> Optional[tuple[float, Optional[float]]]:
        """A subword model's pieces per word of the sentences (target text) and of its training
        text of that side (None when its file does not say); None for a word model."""


class LmScorer(Protocol):
    def score_sentences(self, model_path: Path, sentences: Sequence[str]) -> Sequence[float]:
        """log p of each sentence under that target language model, sentence begin and end
        included, in nats."""

    def known_share(self, model_path: Path, sentences: Sequence[str]) -> float:
        """The share of the sentences' words that are in that model's vocabulary (not [UNK])."""


def pair_scorer(scorer: RnnScorer, model_path: Path) -> PairScorer:
    """One model's pair scoring, as the n-best steps take it."""
    return lambda pairs: scorer.score_pairs(model_path, pairs)


def lm_pair_scorer(scorer: LmScorer, model_path: Path) -> PairScorer:
    """A language model's score of each pair's target (the source plays no part), as the n-best
    steps take it."""
    return lambda pairs: scorer.score_sentences(model_path, [target for _, target in pairs])
