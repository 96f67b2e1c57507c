"""A chunk of phrase-table entries encoded for its models: the pairs in each distinct pair of
shortlists (models that share shortlists share the encoding; a subword model reads its own
pieces, rescorer.data.text_encoding).

No torch here: host worker processes (rescorer.scoring.chunk_preparation) encode chunks too,
and start without it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import numpy as np

from rescorer.data.directions import oriented
from rescorer.data.phrase_encoding import EncodedPhrases, encode_phrases
from rescorer.data.text_encoding import SideEncoding
from rescorer.io.table_reader import PhraseTableReader

__all__ = ["Encoding", "Chunk", "encode_chunks", "encode_chunk"]


@dataclass
class Encoding:
    """A chunk's pairs in one pair of shortlists (shared by the models that use them)."""

    src_seqs: EncodedPhrases
    tgt_seqs: EncodedPhrases
    unknown_tgt: np.ndarray  # shortlist-unknown words of the table's target per pair (the word penalty)
    unknown_src: int  # of the table's source side, whichever way the model reads the pair
    unknown_tgt_total: int
    tgt_words: np.ndarray  # words of the model's target side per pair (its pieces' words with subwords)
    batches: Optional[list] = None  # PaddedBatches made ahead by a host worker (None: made when scored)


@dataclass
class Chunk:
    line_numbers: np.ndarray  # (pairs,) each pair's line in the table, for the errors that name it
    encodings: list  # one Encoding per distinct pair of shortlists
    src_tokens: int
    tgt_tokens: int
    entries: Optional[list] = None  # the PhraseEntries, where this process parsed them; where a host worker
    # did, each pair's index among the chunk's raw lines and its PhraseEntry.scores_end, (pairs,) each:
    line_spans: Optional[tuple[np.ndarray, np.ndarray]] = None

    @property
    def num_pairs(self) -> int:
        return len(self.line_numbers)


def encode_chunks(reader: PhraseTableReader, vocabularies: list, chunk_size: int) -> Iterator[Chunk]:
    entries: list = []
    for entry in reader:
        entries.append(entry)
        if len(entries) == chunk_size:
            yield encode_chunk(entries, vocabularies)
            entries = []
    if entries:
        yield encode_chunk(entries, vocabularies)


def encode_chunk(entries: list, vocabularies: list) -> Chunk:
    src_phrases = [entry.src for entry in entries]
    tgt_phrases = [entry.tgt for entry in entries]
    encodings = []
    words = None  # (source, target) words of the table, as a word model's encoding counts them
    # (source, target) words per phrase, counted once where subword models need them
    phrase_words = functools.cache(lambda: (_words_per_phrase(src_phrases), _words_per_phrase(tgt_phrases)))
    for src_encoding, tgt_encoding, direction in vocabularies:
        model_src, model_tgt = oriented(src_phrases, tgt_phrases, direction)
        src, tgt = _encoded(model_src, src_encoding), _encoded(model_tgt, tgt_encoding)
        table_src, table_tgt = oriented(src, tgt, direction)  # back to the table's sides
        if tgt_encoding.subwords is None:
            tgt_words = tgt.lengths
        else:  # its pieces are not the words
            tgt_words = oriented(*phrase_words(), direction)[1]
        encodings.append(Encoding(src, tgt, table_tgt.unknown, int(table_src.unknown.sum()),
                                  int(table_tgt.unknown.sum()), tgt_words))
        if src_encoding.subwords is None and tgt_encoding.subwords is None:
            words = int(table_src.offsets[-1]), int(table_tgt.offsets[-1])
    if words is None:  # subword models only
        words = tuple(int(counts.sum()) for counts in phrase_words())
    line_numbers = np.fromiter((entry.line_no for entry in entries), dtype=np.int64, count=len(entries))
    return Chunk(line_numbers, encodings, *words, entries=entries)


def _words_per_phrase(phrases: Sequence[str]) -> np.ndarray:
    return np.fromiter((len(phrase.split()) for phrase in phrases), dtype=np.int64, count=len(phrases))


def _encoded(phrases: Sequence[str], encoding: SideEncoding) -> EncodedPhrases:
    """Phrases as a model reads them: its words, or its subword pieces."""
    if encoding.subwords is not None:
        phrases = [" ".join(encoding.units(phrase)) for phrase in phrases]
    return encode_phrases(phrases, encoding.vocab)
