"""The negative words of a sampled softmax (`--sampled-softmax K`): K draws per update from the
training targets' unigram distribution raised to 0.75 (words and [EOS]; [PAD] never), shared by
the whole batch.

On this project's CPUs the 15,000-word softmax was 85% of a training step's time (the output
product, then five passes over the (tokens, vocab) logits forward and back); over the gold
word and K = 1024 sampled words it costs a fifteenth of that. Each logit is lowered by the
log of its word's expected count among the draws, so the loss estimates the full softmax's
(Bengio and Senecal 2008; Jean et al. 2015 trained RNN encoder-decoders this way). Held-out
perplexity, and every score the model gives, use the full softmax. The draws of update u
depend on (seed, u) alone, so a resumed run draws what an uninterrupted one would.
"""

from __future__ import annotations

import numpy as np
import torch

from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models.softmax import SampledWords

__all__ = ["WordSampler"]

PROPOSAL_POWER = 0.75


class WordSampler:
    def __init__(self, target_counts: np.ndarray, draws: int, seed: int, device: torch.device):
        """`target_counts`: how often each target id occurs in the training pairs ([EOS] included)."""
        weights = (np.asarray(target_counts, dtype=np.float64) + 1.0) ** PROPOSAL_POWER  # every word drawable
        weights[PAD_ID] = 0.0
        self.proposal = weights / weights.sum()
        self.draws, self.seed, self.device = draws, seed, device
        with np.errstate(divide="ignore"):  # log 0 for [PAD], which is never a gold word
            expected = -np.expm1(draws * np.log1p(-self.proposal))  # P(drawn at least once)
            self.log_expected = torch.tensor(np.log(expected), dtype=torch.float32, device=device)

    def __call__(self, update: int) -> SampledWords:
        rng = np.random.default_rng([self.seed, update, 0x5A4D])
        words = np.unique(rng.choice(len(self.proposal), size=self.draws, p=self.proposal))
        return SampledWords(torch.from_numpy(words).to(self.device), self.log_expected)

    @classmethod
    def for_training(cls, cache, split, vocab_size: int, draws: int, seed: int,
                     device: torch.device) -> "WordSampler":
        """A sampler over the training pairs' targets (held-out pairs left out of the counts)."""
        counts = cache.token_counts("tgt", vocab_size) - cache.token_counts("tgt", vocab_size, split.valid)
        counts[EOS_ID] += split.num_train
        return cls(counts, draws, seed, device)
