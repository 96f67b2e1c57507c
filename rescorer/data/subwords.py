"""Subword units for sentence models: a sentencepiece model learned from one side of the corpus.

A word-level shortlist leaves thousands of singletons as [UNK] on a corpus of this size;
subwords (Sennrich et al. 2016) cover every word, and with byte fallback every byte, so no
[UNK] reaches a translation. The segmenter is learned on the tokenized corpus and joined back
to exactly that tokenization, so BLEU and n-best rescoring of Moses' word-level hypotheses
stay comparable: `join(segment(line)) == line` for every line of single-space-separated tokens.

The learned model is a few hundred kilobytes of bytes (sentencepiece's serialized proto), stored
inside the model file, so there is no side file to lose. Normalization is off ("identity"):
NFKC would rewrite characters of the corpus (ligatures, full-width forms) and break the round
trip. Learning uses one thread, because sentencepiece's result depends on the thread count.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from rescorer.data.vocabulary import SPECIALS, Vocabulary

SUBWORD_KINDS = ("bpe", "unigram")
WORD_BOUNDARY = "\u2581"  # sentencepiece's ▁, which starts every piece that starts a word


def tokens_line(line: str) -> str:
    """The corpus's tokenization of a line: its tokens separated by single spaces."""
    return " ".join(line.split())


@dataclass(frozen=True)
class SubwordModel:
    """A learned segmenter: pieces of a line, and the line back from its pieces."""

    proto: bytes  # sentencepiece's serialized model
    kind: str

    def __post_init__(self):
        import sentencepiece

        object.__setattr__(self, "_processor", sentencepiece.SentencePieceProcessor(model_proto=self.proto))

    def __reduce__(self):  # sent between ranks as its bytes: sentencepiece's processor does not pickle
        return type(self), (self.proto, self.kind)

    @property
    def pieces(self) -> list[str]:
        """Every piece, sentencepiece's unknown piece first (byte fallback makes it unused)."""
        processor = self._processor
        return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]

    def vocabulary(self) -> Vocabulary:
        """The model's vocabulary: [PAD], [UNK], [EOS], then every piece but sentencepiece's own <unk>."""
        return Vocabulary(list(SPECIALS) + self.pieces[1:])

    def segment(self, line: str) -> list[str]:
        """The line's pieces. Bytes that are not UTF-8 (kept as lone surrogates) cannot be
        segmented as they are: sentencepiece reads each as U+FFFD (see `not_utf8`)."""
        text = tokens_line(line)
        try:
            return self._processor.encode(text, out_type=str)
        except (RuntimeError, UnicodeEncodeError):
            return self._processor.encode(text.encode("utf-8", "surrogateescape"), out_type=str)

    def join(self, pieces: Sequence[str]) -> str:
        """The tokenized line the pieces spell; pieces that are not the model's ([UNK], [EOS])
        are dropped."""
        known = [piece for piece in pieces if self._processor.piece_to_id(piece) != 0 or piece == "<unk>"]
        return tokens_line(self._processor.decode_pieces(known))

    def to_stored(self) -> dict:
        return {"kind": self.kind, "sentencepiece": self.proto}

    @classmethod
    def from_stored(cls, stored: dict) -> "SubwordModel":
        return cls(bytes(stored["sentencepiece"]), stored["kind"])


@dataclass(frozen=True)
class SubwordSides:
    """A sentence model's two subword models: of its source side and of its target side (the
    corpus's target and source for an inverse model, as its vocabularies are)."""

    source: SubwordModel
    target: SubwordModel

    def to_stored(self) -> dict:
        return {"source": self.source.to_stored(), "target": self.target.to_stored()}

    @classmethod
    def from_stored(cls, stored: dict) -> "SubwordSides":
        return cls(SubwordModel.from_stored(stored["source"]), SubwordModel.from_stored(stored["target"]))


def pieces_per_word(piece_counts: Sequence[float], vocab: Vocabulary) -> float:
    """Pieces per word of a text, from how often each piece of the model's `vocab` occurs in it
    (by id): every word starts with one piece that begins with ▁ (a word that starts with a
    character the model lacks with a ▁ piece of its own, then bytes). 0.0 for no words."""
    pieces = words = 0.0
    for token, count in zip(vocab.tokens[len(SPECIALS):], piece_counts[len(SPECIALS):]):
        pieces += count
        words += count if token.startswith(WORD_BOUNDARY) else 0
    return float(pieces / words) if words else 0.0


def not_utf8(line: str) -> Optional[str]:
    """What keeps a line (decoded with surrogateescape) from being segmented: its first byte
    that is not UTF-8, or None when it is all UTF-8."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate: a byte that was not UTF-8
        return f"byte 0x{ord(line[error.start]) - 0xDC00:02X} at character {error.start + 1} is not UTF-8"
    return None


def learn_subwords(lines: Iterable[str], size: int, kind: str = "bpe", at_most: bool = False) -> SubwordModel:
    """Learn a `size`-piece segmenter of `kind` (bpe or unigram) from tokenized lines.

    `size` counts the 256 byte pieces and the unknown piece; a corpus too small for it is a
    ValueError saying how many pieces it allows, or, `at_most`, learns all the pieces it allows
    (sentencepiece's soft limit).
    """
    import sentencepiece

    if kind not in SUBWORD_KINDS:
        raise ValueError(f"unknown subword kind {kind!r}; valid: {', '.join(SUBWORD_KINDS)}")
    model = io.BytesIO()
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=(tokens_line(line) for line in lines), model_writer=model, vocab_size=size,
            model_type=kind, normalization_rule_name="identity", byte_fallback=True,
            character_coverage=1.0, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1, num_threads=1,
            max_sentence_length=1 << 16, hard_vocab_limit=not at_most, minloglevel=2)
    except RuntimeError as error:
        raise ValueError(f"cannot learn {size} {kind} subwords: {_reason(error)}") from None
    return SubwordModel(model.getvalue(), kind)


def _reason(error: RuntimeError) -> str:
    """sentencepiece's message without its source check: 'Vocabulary size too high (5000). ...'"""
    return str(error).strip().rsplit("] ", 1)[-1]
