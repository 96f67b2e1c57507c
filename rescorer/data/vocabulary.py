"""Shortlist vocabularies: the K most frequent words of one side; every other word is [UNK].

Cho et al. (2014) keep a shortlist of 15,000 words per side, counted on the bitext, and map
the rest to an unknown-word token; the number of unknown target words becomes the word-penalty
feature.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from rescorer.errors import CorpusError
from rescorer.io.compression import CompressedStreamError, decompressing_reader

PAD, UNK, EOS = "[PAD]", "[UNK]", "[EOS]"
SPECIALS = (PAD, UNK, EOS)
PAD_ID, UNK_ID, EOS_ID = 0, 1, 2


class Vocabulary:
    """A fixed token list: ids 0-2 are [PAD], [UNK], [EOS]; then the shortlist, most frequent first."""

    def __init__(self, tokens: Sequence[str]):
        if tuple(tokens[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocabulary must start with {SPECIALS}, found {tuple(tokens[:3])}")
        self.tokens = list(tokens)
        self.index = {token: i for i, token in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self.tokens == other.tokens

    def is_known(self, word: str) -> bool:
        return word in self.index and self.index[word] >= len(SPECIALS)

    def encode(self, words: Iterable[str]) -> list[int]:
        """Word ids, [UNK] for words outside the shortlist."""
        get = self.index.get
        return [get(word, UNK_ID) for word in words]

    def count_unknown(self, words: Iterable[str]) -> int:
        """The paper's word penalty: how many words fall outside the shortlist."""
        index = self.index
        return sum(1 for word in words if word not in index)

    @classmethod
    def from_counts(cls, counts: Counter, size: int) -> "Vocabulary":
        """The `size` most frequent words; ties broken alphabetically so the result is repeatable."""
        ranked = sorted((w for w in counts if w not in SPECIALS), key=lambda w: (-counts[w], w))
        return cls(list(SPECIALS) + ranked[:size])


@dataclass(frozen=True)
class Coverage:
    """Share of running words that the shortlist covers (the paper's covered 93%)."""

    known_tokens: int
    total_tokens: int

    @property
    def ratio(self) -> float:
        return self.known_tokens / self.total_tokens if self.total_tokens else 1.0


def coverage(vocab: Vocabulary, counts: Counter) -> Coverage:
    known = sum(n for word, n in counts.items() if vocab.is_known(word))
    return Coverage(known, sum(counts.values()))


def count_corpus_words(path: Path) -> Counter:
    """Word counts of a tokenized corpus (one sentence a line, plain or compressed)."""
    counts: Counter = Counter()
    try:
        with path.open("rb", buffering=1 << 20) as file:
            lines = decompressing_reader(file, str(path)) or file
            for line in lines:
                counts.update(line.decode("utf-8", "surrogateescape").split())
    except CompressedStreamError as error:
        raise CorpusError(str(error)) from None
    except OSError as error:
        raise CorpusError(f"{path}: cannot read corpus ({error.strerror or error})") from None
    if not counts:
        raise CorpusError(f"{path}: the corpus is empty")
    return counts
