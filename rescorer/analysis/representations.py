"""What a trained model holds inside, as arrays for the analysis figures (Cho et al. §4.4).

- word embeddings of the most frequent words (Fig. 4): the E-dimensional vectors the network
  reads, after the rank-R factorisation;
- phrase representations (Fig. 5): the encoder's summary c (cho2014) or the mean annotation
  (attention models) of each source phrase;
- attention weights (Bahdanau et al. 2015, Fig. 3): the soft alignment of every target word,
  [EOS] included, to the source words, from the incremental interface with teacher forcing.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from rescorer.counts import counted
from rescorer.data.padding import pad_sequences
from rescorer.data.vocabulary import EOS, PAD_ID, SPECIALS
from rescorer.errors import RescorerError
from rescorer.models.model_files import ModelBundle
from rescorer.models.registry import attention_architectures

__all__ = ["word_embeddings", "phrase_summaries", "attention_weights"]


@torch.inference_mode()
def word_embeddings(bundle: ModelBundle, side: str, num_words: int) -> tuple[list[str], np.ndarray]:
    """The `num_words` most frequent shortlist words of `side` ('source' or 'target') and their
    embeddings (num_words, E). The shortlist is ordered by frequency, [PAD]/[UNK]/[EOS] first."""
    if side not in ("source", "target"):
        raise ValueError(f"side must be 'source' or 'target', found {side!r}")
    vocab = bundle.src_vocab if side == "source" else bundle.tgt_vocab
    embedding = bundle.model.src_embed if side == "source" else bundle.model.tgt_embed
    first = len(SPECIALS)
    count = min(num_words, len(vocab) - first)
    if count < 2:
        raise RescorerError(f"the model's {side} shortlist has {counted(len(vocab) - first, 'word')}; a map needs 2")
    device = next(bundle.model.parameters()).device
    ids = torch.arange(first, first + count, device=device)
    vectors = embedding(ids).float().cpu().numpy()  # (count, E)
    return vocab.tokens[first:first + count], vectors


@torch.inference_mode()
def phrase_summaries(bundle: ModelBundle, phrases: Sequence[str], batch_size: int = 256) -> np.ndarray:
    """The model's summary vector of each source phrase: (len(phrases), summary size)."""
    model = bundle.model
    device = next(model.parameters()).device
    pieces = []
    for start in range(0, len(phrases), batch_size):
        encoded = [bundle.src_vocab.encode(phrase.split()) for phrase in phrases[start:start + batch_size]]
        src, lengths = pad_sequences(encoded)
        pieces.append(model.source_summary(src.to(device), lengths.to(device)).float().cpu().numpy())
    return np.concatenate(pieces) if pieces else np.zeros((0, 0), dtype=np.float32)


def require_attention(bundle: ModelBundle, model_name: str) -> None:
    """A one-line error for a model whose architecture has no attention."""
    arch = bundle.config.arch
    if arch not in attention_architectures():
        raise RescorerError(f"{model_name}: a {arch} model has no attention (its decoder reads one "
                            f"summary vector c); attention maps need one of "
                            f"{', '.join(attention_architectures())}")


@torch.inference_mode()
def attention_weights(bundle: ModelBundle, src_words: Sequence[str],
                      tgt_words: Sequence[str]) -> tuple[np.ndarray, float]:
    """alpha (len(tgt_words) + 1, len(src_words)): row i is target word i's weights over the
    source (the last row is [EOS]'s), and log p(target | source) of the same teacher-forced
    pass. Words outside the shortlist are read as [UNK]."""
    if not src_words or not tgt_words:
        raise RescorerError("an attention map needs a non-empty source and target phrase")
    model = bundle.model
    device = next(model.parameters()).device
    src = torch.tensor([bundle.src_vocab.encode(src_words)], device=device)  # (1, src_len)
    tgt_ids = bundle.tgt_vocab.encode(tgt_words) + [bundle.tgt_vocab.index[EOS]]
    state = model.start(src, torch.tensor([len(src_words)], device=device))
    prev = torch.full((1,), PAD_ID, dtype=torch.long, device=device)
    rows, log_p = [], 0.0
    for word in tgt_ids:
        log_probs, state, weights = model.step(state, prev)
        if weights is None:
            raise RescorerError(f"a {bundle.config.arch} model returns no attention weights")
        rows.append(weights[0].double().cpu().numpy())  # (src_len,)
        log_p += float(log_probs[0, word])
        prev = torch.tensor([word], device=device)
    return np.stack(rows), log_p
