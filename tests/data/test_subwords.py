"""Subword models: learned from tokenized text, stored as bytes, joined back to the tokenization."""

import gzip
from pathlib import Path

import pytest
import torch

from rescorer.data.subwords import SubwordModel, learn_subwords, tokens_line
from rescorer.data.vocabulary import UNK

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
