"""What a CSLM's held-out perplexity is read against: the perplexity of an add-one unigram model
of its training sentences on the same held-out n-grams, and the share of the held-out words that
its shortlist covers.

Both perplexities count as the CSLM does: a word outside the shortlist is [UNK], one word of the
vocabulary that each model predicts (a small shortlist makes both easy: the coverage says how
small), and every sentence end is predicted too. The unigram model spreads its add-one over
every id a sentence can hold (the words, [UNK] and the sentence end), not over padding or the
sentence begin, which are never predicted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rescorer.data.lm_corpus import BOS_ID, NgramStream
from rescorer.data.vocabulary import EOS_ID, PAD_ID, UNK_ID, Coverage

__all__ = ["LmReference", "lm_reference"]


@dataclass(frozen=True)
class LmReference:
    unigram_perplexity: float  # on the held-out n-grams' predicted ids, sentence ends included
    coverage: Coverage  # of the held-out words (sentence ends left out) by the shortlist


def lm_reference(ngrams: NgramStream, train_targets: np.ndarray, valid_targets: np.ndarray,
                 vocab_size: int) -> LmReference:
    """The reference figures for the held-out n-grams at stream positions `valid_targets`, the
    unigram model counted on those at `train_targets` (rescorer.training.lm_trainer.SentenceSplit)."""
    train = np.bincount(ngrams.stream[train_targets], minlength=vocab_size).astype(np.float64)
    held = np.bincount(ngrams.stream[valid_targets], minlength=vocab_size).astype(np.float64)
    predicted = np.ones(vocab_size, dtype=bool)
    predicted[[PAD_ID, BOS_ID]] = False
    counts = train[predicted] + 1.0
    log_p = np.log(counts / counts.sum())
    perplexity = math.exp(-(held[predicted] * log_p).sum() / held.sum()) if held.sum() else math.nan
    words = int(held.sum() - held[EOS_ID])
    return LmReference(perplexity, Coverage(words - int(held[UNK_ID]), words))
