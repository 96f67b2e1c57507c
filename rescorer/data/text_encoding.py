"""How a model reads and writes the text of one side, in one place for every command that
passes text through it (translate, n-best and phrase-table scoring, training's pair cache).

A word model reads whitespace tokens through its shortlist ([UNK] outside it) and writes its
tokens back with spaces. A subword model (`rescore train --parallel --subwords`) reads the
pieces of its own sentencepiece model and joins its output back to the corpus's tokenization,
so what comes out compares word for word with Moses' output and never holds a piece mark or
[UNK].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from rescorer.data.subwords import SubwordModel
from rescorer.data.vocabulary import Vocabulary

__all__ = ["SideEncoding"]


@dataclass(frozen=True)
class SideEncoding:
    """One side of a model: its vocabulary, and its subword model (None: a word model)."""

    vocab: Vocabulary
    subwords: Optional[SubwordModel] = None

    def units(self, line: str) -> list[str]:
        """What the model reads of a line: its words, or its subword pieces."""
        return self.subwords.segment(line) if self.subwords is not None else line.split()

    def encode(self, line: str) -> list[int]:
        """The ids of a line's units ([UNK] for a word outside a word model's shortlist)."""
        return self.vocab.encode(self.units(line))

    def known_share(self, lines: Iterable[str]) -> float:
        """The share of the lines' words a word model has in its shortlist (1.0 for a subword
        model, whose byte fallback reads every string, and for no words)."""
        if self.subwords is not None:
            return 1.0
        words = [word for line in lines for word in line.split()]
        return sum(map(self.vocab.is_known, words)) / len(words) if words else 1.0

    def units_per_word(self, lines: Iterable[str]) -> float:
        """Units read per word of the lines: a subword model's pieces (1.0 for a word model and
        for no words)."""
        units = words = 0
        for line in lines:
            units += len(self.units(line))
            words += len(line.split())
        return units / words if words else 1.0

    def decode(self, ids: Sequence[int]) -> str:
        """The tokenized text of the model's output ids: words with spaces, or pieces joined back
        to the corpus's tokens (specials dropped)."""
        tokens = [self.vocab.tokens[i] for i in ids]
        return self.subwords.join(tokens) if self.subwords is not None else " ".join(tokens)
