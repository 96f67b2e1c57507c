"""A CSLM's reference figures (rescorer.training.lm_reference): the add-one unigram perplexity on
the CSLM's own held-out n-grams and the shortlist's coverage of the held-out words, [UNK] one
word of the vocabulary in both perplexities, checked against a count by hand on tiny text."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from rescorer.training.lm_pipeline import train_lm
from rescorer.training.settings import TrainSettings
from rescorer.training.trainer import PairSplit

WORDS = ("fils", "roi", "dieu", "peuple", "prophète", "temple", "désert")
SENTENCES = [f"le {w} de la terre et {v} du ciel ." for w in WORDS for v in WORDS[::-1]]


@pytest.fixture()
def text(tmp_path):
    path = tmp_path / "text.fr"
    path.write_text("".join(sentence + "\n" for sentence in SENTENCES), encoding="utf-8")
    return path


def by_hand(vocab, held: list, trained: list) -> tuple[float, float, int]:
    """(unigram perplexity, coverage, held-out words): each word outside `vocab` is [UNK], each
    sentence ends with [EOS]; add-one over the words of the vocabulary, [UNK] and [EOS]."""
    def tokens(sentences):
        return [t for s in sentences for t in [w if vocab.is_known(w) else "[UNK]" for w in s.split()] + ["[EOS]"]]

    counts = Counter(tokens(trained))
    predicted = len(vocab) - 2  # every id but padding and the sentence begin <s>
    total = sum(counts.values()) + predicted
    held_tokens = tokens(held)
    ppl = math.exp(-sum(math.log((counts[t] + 1) / total) for t in held_tokens) / len(held_tokens))
    words = [w for s in held for w in s.split()]
    return ppl, sum(map(vocab.is_known, words)) / len(words), len(words)


def test_the_unigram_perplexity_and_coverage_are_those_of_a_count_by_hand(text, tmp_path):
    settings = TrainSettings(batch_size=8, max_updates=3, valid_every=3, valid_pairs=5, seed=2, shortlist_size=8)
    report = train_lm(text, tmp_path / "lm.pt", preset="tiny", settings=settings)
    held_out = set(PairSplit(len(SENTENCES), 2, 5).valid.tolist())  # the sentences training held out
    held = [s for i, s in enumerate(SENTENCES) if i in held_out]
    trained = [s for i, s in enumerate(SENTENCES) if i not in held_out]
    ppl, covered, words = by_hand(report.bundle.vocab, held, trained)
    reference = report.reference
    assert reference.unigram_perplexity == pytest.approx(ppl, rel=1e-12)
    assert reference.coverage.total_tokens == words == report.held_out.ngrams - len(held)
    assert reference.coverage.ratio == pytest.approx(covered) and 0 < covered < 1  # [UNK]s among them
