"""Subword models: learned from tokenized text, stored as bytes, joined back to the tokenization."""

import gzip
import pickle
from collections import Counter
from pathlib import Path

import pytest
import torch

from rescorer.data.subwords import (WORD_BOUNDARY, SubwordModel, SubwordSides, learn_subwords, not_utf8,
                                    tokens_line)
from rescorer.data.text_encoding import SideEncoding
from rescorer.data.vocabulary import UNK, UNK_ID, Vocabulary
from tests.helpers import SHARED, gz_lines

CORPUS = Path(__file__).resolve().parents[2] / "examples"


def _french_lines():
    """Tokenized French lines: the target sides of the bundled phrase table (Moses tokenization)."""
    with gzip.open(CORPUS / "phrase-table.gz", "rt", encoding="utf-8") as table:
        return [line.split(" ||| ")[1] for line in table]


@pytest.fixture(scope="module")
def model():
    return learn_subwords(_french_lines(), 600)


def test_round_trip_gives_back_the_tokenized_line(model):
    lines = _french_lines()
    assert all(model.join(model.segment(line)) == line for line in lines)
    assert any(len(model.segment(line)) > len(line.split()) for line in lines)  # words were split
    # extra spaces are not part of the tokenization
    assert model.join(model.segment("  la   maison ")) == "la maison" == tokens_line("  la   maison ")


def test_a_character_never_seen_falls_back_to_bytes_not_unk(model):
    line = "le ∂ ĳ 𝔸 maison"
    pieces = model.segment(line)
    assert "<0xE2>" in pieces and "<unk>" not in pieces
    assert model.join(pieces) == line
    assert UNK not in [model.vocabulary().tokens[i] for i in model.vocabulary().encode(pieces)]


def test_the_model_is_stored_as_bytes_and_loads_safely(model, tmp_path):
    torch.save({"subwords": model.to_stored()}, tmp_path / "m.pt")
    stored = torch.load(tmp_path / "m.pt", weights_only=True)["subwords"]
    again = SubwordModel.from_stored(stored)
    assert again == model and again.kind == "bpe"
    assert again.segment("la maison de dieu") == model.segment("la maison de dieu")


def test_learning_is_repeatable_and_the_vocabulary_holds_every_piece(model):
    assert learn_subwords(_french_lines(), 600).proto == model.proto
    vocabulary = model.vocabulary()
    assert len(vocabulary) == 3 + 600 - 1  # [PAD] [UNK] [EOS], then every piece but <unk>
    assert vocabulary.tokens[3] == "<0x00>"


def test_unigram_is_the_other_kind_and_other_kinds_are_refused():
    lines = _french_lines()
    unigram = learn_subwords(lines, 600, "unigram")
    assert unigram.kind == "unigram" and unigram.proto != learn_subwords(lines, 600).proto
    assert all(unigram.join(unigram.segment(line)) == line for line in lines[:200])
    with pytest.raises(ValueError, match="unknown subword kind 'wordpiece'"):
        learn_subwords(lines, 600, "wordpiece")


def test_a_size_the_corpus_cannot_fill_names_the_largest_it_can():
    with pytest.raises(ValueError, match=r"cannot learn 5000 bpe subwords: Vocabulary size too high \(5000\)\. "
                                         r"Please set it to a value <= \d+"):
        learn_subwords(["la maison", "le chat"], 5000)


BIBLE_FRENCH = SHARED / "data" / "bible-en-fr" / "corpus" / "train.fr.gz"


@pytest.mark.skipif(not BIBLE_FRENCH.is_file(), reason=f"no corpus at {BIBLE_FRENCH}")
def test_the_bible_corpus_round_trips_accents_and_rare_words_included():
    """Learned on 300 verses, joined back exactly on those and on 300 verses it never saw."""
    lines = [line.decode("utf-8") for line in gz_lines(BIBLE_FRENCH, 600)]
    model = learn_subwords(lines[:300], 700)
    assert [model.join(model.segment(line)) for line in lines] == lines
    words = Counter(word for line in lines[:300] for word in line.split())
    accented = [word for word in words if any(letter in word for letter in "éèêàçôûœ")]
    rare = [word for word, count in words.items() if count == 1 and len(word) > 6]
    assert len(accented) > 50 and len(rare) > 50
    # rare words are spelled by several pieces, and come back whole
    assert all(len(model.segment(word)) > 1 and model.join(model.segment(word)) == word for word in rare)
    assert all(model.join(model.segment(word)) == word for word in accented)


def test_join_gives_the_tokenization_without_specials_or_piece_marks(model):
    pieces = model.segment("la maison de dieu")
    assert model.join(["[UNK]", *pieces, "[EOS]"]) == "la maison de dieu"
    assert model.join([*pieces, WORD_BOUNDARY]) == "la maison de dieu"  # no trailing space
    assert WORD_BOUNDARY not in model.join(pieces)


def test_both_sides_are_stored_as_bytes_and_pickle_as_bytes(model):
    sides = SubwordSides(model, learn_subwords(_french_lines(), 600, "unigram"))
    stored = sides.to_stored()
    assert isinstance(stored["source"]["sentencepiece"], bytes) and stored["target"]["kind"] == "unigram"
    assert SubwordSides.from_stored(stored) == sides
    again = pickle.loads(pickle.dumps(sides))  # as rank 0 sends them to the other ranks
    assert again == sides and again.target.segment("la maison") == sides.target.segment("la maison")


def test_bytes_that_are_not_utf8_are_named_and_still_segment(model):
    line = b"la \xff maison".decode("utf-8", "surrogateescape")
    assert not_utf8(line) == "byte 0xFF at character 4 is not UTF-8"
    assert not_utf8("la maison été") is None
    assert model.join(model.segment(line)) == "la \ufffd maison"  # sentencepiece reads it as U+FFFD


def test_the_side_encoding_reads_words_or_pieces(model):
    words = SideEncoding(Vocabulary(["[PAD]", "[UNK]", "[EOS]", "la", "maison"]))
    assert words.units("la  maison bleue") == ["la", "maison", "bleue"]
    assert words.encode("la maison bleue") == [3, 4, 1]
    assert words.decode([3, 1, 4]) == "la [UNK] maison"
    pieces = SideEncoding(model.vocabulary(), model)
    assert pieces.units("la maison bleue") == model.segment("la maison bleue")
    ids = pieces.encode("la maison bleue")
    assert UNK_ID not in ids and pieces.decode(ids) == "la maison bleue"
