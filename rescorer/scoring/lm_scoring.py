"""Sentences scored by the CSLM: log p(sentence) = the sum of log p(word | n-1 words before it)
over its words and the sentence end ([EOS]), the left context of the first words padded with
"<s>" (the n-gram windows of rescorer.data.lm_corpus, as in training). Words outside the
shortlist are scored as [UNK]. Natural logarithms (nats), as the phrase models' scores.

The n-grams of many sentences go through the network together, `batch_ngrams` at a time, on
the CPU or a GPU. `InProcessLmScorer` is what the Moses wing can be handed, as it is handed
rescorer.scoring.rnn_scorer.InProcessScorer through moses_integration.scorer.RnnScorer: a
Protocol with `score_sentences(model_path, sentences) -> Sequence[float]` (and
`word_log_probs` for a per-word form) fits it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np
import torch

from rescorer.data.lm_corpus import ngram_stream
from rescorer.models.lm_files import LmBundle, load_lm
from rescorer.models.precision import autocast, precision_for
from rescorer.runtime.device import resolve_device

__all__ = ["Sentence", "word_log_probs", "sentence_log_probs", "InProcessLmScorer"]

Sentence = Union[str, Sequence[str]]  # tokenized text, or its words
DEFAULT_BATCH_NGRAMS = 4096


def _words(sentence: Sentence) -> list[str]:
    return sentence.split() if isinstance(sentence, str) else list(sentence)


def word_log_probs(bundle: LmBundle, sentences: Sequence[Sentence], device: Optional[torch.device] = None,
                   precision: str = "fp32", batch_ngrams: int = DEFAULT_BATCH_NGRAMS) -> list[np.ndarray]:
    """log p of each predicted token of each sentence: its words, then [EOS] (len(words) + 1
    values per sentence; an empty sentence has only its end), float64 nats."""
    if len(sentences) == 0:
        return []
    device = device or next(bundle.model.parameters()).device
    ngrams = ngram_stream([_words(sentence) for sentence in sentences], bundle.vocab, bundle.config.order)
    model = bundle.model
    was_training = model.training
    model.eval()
    logps = np.empty(len(ngrams.targets), dtype=np.float64)
    with torch.inference_mode(), autocast(device, precision):
        for start in range(0, len(ngrams.targets), batch_ngrams):
            contexts, words = ngrams.windows(ngrams.targets[start:start + batch_ngrams])
            scores = model(torch.from_numpy(contexts).to(device)).float()  # (batch, vocab)
            gold = scores.gather(1, torch.from_numpy(words).to(device)[:, None])[:, 0]
            logps[start:start + len(words)] = (gold - torch.logsumexp(scores, dim=-1)).double().cpu().numpy()
    model.train(was_training)
    return np.split(logps, ngrams.sentence_starts[1:-1])


def sentence_log_probs(bundle: LmBundle, sentences: Sequence[Sentence], device: Optional[torch.device] = None,
                       precision: str = "fp32", batch_ngrams: int = DEFAULT_BATCH_NGRAMS) -> np.ndarray:
    """log p(sentence) of each sentence, sentence begin and end included, float64 nats."""
    per_word = word_log_probs(bundle, sentences, device, precision, batch_ngrams)
    return np.array([values.sum() for values in per_word], dtype=np.float64)


class InProcessLmScorer:
    """CSLM files scored on one device and precision resolved once ('auto' as `rescore score`
    resolves it), each file loaded once."""

    def __init__(self, device: str = "auto", precision: str = "auto", batch_ngrams: int = DEFAULT_BATCH_NGRAMS):
        self.device = resolve_device(device)
        self.precision = precision_for(precision, self.device.type, "score-lm")
        self.batch_ngrams = batch_ngrams
        self._bundles: dict[Path, LmBundle] = {}

    def bundle(self, model_path: Path) -> LmBundle:
        """The LM at `model_path`, loaded on first use (a phrase model is refused in one line)."""
        key = Path(model_path).resolve()
        if key not in self._bundles:
            self._bundles[key] = load_lm(Path(model_path), self.device)
        return self._bundles[key]

    def score_sentences(self, model_path: Path, sentences: Sequence[Sentence]) -> np.ndarray:
        """log p of each sentence (nats), begin and end included."""
        return sentence_log_probs(self.bundle(model_path), sentences, self.device, self.precision,
                                  self.batch_ngrams)

    def known_share(self, model_path: Path, sentences: Sequence[Sentence]) -> float:
        """The share of the sentences' words in the model's vocabulary (1.0 for no words)."""
        vocab = self.bundle(model_path).vocab
        words = [word for sentence in sentences for word in _words(sentence)]
        return sum(map(vocab.is_known, words)) / len(words) if words else 1.0

    def word_log_probs(self, model_path: Path, sentences: Sequence[Sentence]) -> list[np.ndarray]:
        """log p of each word and the end of each sentence (nats)."""
        return word_log_probs(self.bundle(model_path), sentences, self.device, self.precision, self.batch_ngrams)
