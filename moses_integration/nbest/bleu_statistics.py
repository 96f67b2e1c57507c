"""BLEU sufficient statistics exactly as Moses's extractor writes them to `scores.dat`
(mert/BleuScorer.cpp CalcBleuStats), and corpus BLEU from their sum as mert computes it
(BleuScorer::calculateScore), so that n-best lists can be tuned without Moses binaries.

Per hypothesis, 9 integers: (matches_n, total_n) for n = 1..4, then the reference length.
- Tokens are the pieces between single spaces (Moses splits on ' ' only, dropping empty
  pieces; a tab stays inside a token). Case is kept (`--scconfig case:true`).
- A hypothesis n-gram's matches are clipped at its largest count in any one reference.
- The reference length is the closest reference length; on a tie the shorter one
  (Reference::CalcClosest).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

__all__ = ["NUM_STATS", "ORDER", "bleu_of_totals", "bleu_statistics", "corpus_bleu", "tokens"]

ORDER = 4  # n-gram orders 1..4 (kBleuNgramOrder)
NUM_STATS = 2 * ORDER + 1  # 9 numbers a hypothesis


def tokens(line: str) -> list[str]:
    """Moses's scorer tokenization: split on ' ' only, empty pieces dropped."""
    return [token for token in line.split(" ") if token]


def _ngram_counts(words: list[str]) -> Counter:
    """Counts of every n-gram, n = 1..ORDER, keyed by the tuple of words."""
    counts: Counter = Counter()
    for n in range(1, ORDER + 1):
        counts.update(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    return counts


def _closest_length(ref_lengths: list[int], length: int) -> int:
    """The reference length closest to the hypothesis length, the shorter on a tie."""
    return min(ref_lengths, key=lambda ref_length: (abs(ref_length - length), ref_length))


def bleu_statistics(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """(n, 9) int64: Moses's BLEU statistics of hypotheses[i] against references[i] (its list
    of reference strings). Hypotheses of one sentence may share a list object; each distinct
    list is counted once."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    stats = np.zeros((len(hypotheses), NUM_STATS), dtype=np.int64)  # (n, 9)
    cache: dict[int, tuple] = {}  # id(reference list) -> (lengths, max counts, the list: keeps its id taken)
    for row, (hypothesis, refs) in enumerate(zip(hypotheses, references)):
        if id(refs) not in cache:
            if len(refs) == 0:
                raise ValueError(f"hypothesis {row} has no reference")
            max_counts: Counter = Counter()
            for ref in refs:
                max_counts |= _ngram_counts(tokens(ref))  # |= keeps the larger count
            cache[id(refs)] = ([len(tokens(ref)) for ref in refs], max_counts, refs)
        ref_lengths, max_counts, _ = cache[id(refs)]
        words = tokens(hypothesis)
        for ngram, count in _ngram_counts(words).items():
            n = len(ngram)
            stats[row, 2 * n - 2] += min(count, max_counts.get(ngram, 0))
        for n in range(1, ORDER + 1):
            stats[row, 2 * n - 1] = max(len(words) - n + 1, 0)
        stats[row, 2 * ORDER] = _closest_length(ref_lengths, len(words))
    return stats


def bleu_of_totals(totals: np.ndarray, plus_one: bool = False) -> np.ndarray:
    """(n,) BLEU (0..1) of each row of already summed statistics (n, 9), as mert scores a
    corpus (BleuScorer::calculateScore): the geometric mean of the four n-gram precisions,
    unsmoothed (0 if an order has no match), times the brevity penalty
    exp(min(0, 1 - ref_len / hyp_len)). With `plus_one`, Moses' sentence BLEU+1
    (sentenceLevelBleuPlusOne, what PRO ranks by): 1 added to every order's matches and counts,
    so that only an empty hypothesis scores 0."""
    totals = np.asarray(totals, dtype=np.float64)  # (n, 9)
    matches, counts = totals[:, 0:2 * ORDER:2], totals[:, 1:2 * ORDER:2]  # (n, 4) each
    added = 1.0 if plus_one else 0.0
    scored = totals[:, 1] > 0 if plus_one else np.all(matches > 0, axis=1)  # (n,)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_bleu = np.mean(np.log(matches + added) - np.log(counts + added), axis=1)
        log_bleu += np.minimum(0.0, 1.0 - totals[:, 2 * ORDER] / totals[:, 1])
    return np.where(scored, np.exp(log_bleu), 0.0)


def corpus_bleu(stats: np.ndarray) -> float:
    """BLEU (0..1) of a corpus from one hypothesis's statistics a sentence, (sentences, 9), or
    from their sum, (9,); see bleu_of_totals."""
    stats = np.asarray(stats)
    totals = stats.sum(axis=0) if stats.ndim == 2 else stats
    return float(bleu_of_totals(totals[None, :])[0])
