"""The paper's continuous-space target language model (CSLM): a feed-forward n-gram network.

Cho et al. (2014), section 4.1.2, after Schwenk (2007): each of the n-1 context words is embedded,
the embeddings are concatenated, two rectified layers follow, then a softmax over the
vocabulary. NPLM (Vaswani et al. 2013) has exactly this topology, so the layers keep its names'
order (input embeddings, two hidden layers, output layer) for the export to Moses' NeuralLM.

Ids follow `rescorer.data.vocabulary`: 0 [PAD], 1 [UNK], 2 [EOS] (the sentence end), and
BOS ("<s>") is always id 3: the left context of the first words is padded with it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

BOS = "<s>"
BOS_ID = 3
DEFAULT_ORDER = 7  # the paper's 7-grams, for every preset unless --order says otherwise
# Sizes by preset. paper: section 4.1.2 (15,000-word shortlist as for the paper's RNN); small:
# what trains on one shared CPU thread in under half an hour on a 0.8M-word corpus (about 900
# 7-grams/s on this machine: benchmarks/studies/cslm_perplexity.py); tiny: for tests.
LM_PRESETS = {
    "paper": {"embedding_size": 512, "hidden_sizes": (1536, 1024), "shortlist_size": 15000},
    "small": {"embedding_size": 128, "hidden_sizes": (512, 256), "shortlist_size": 10000},
    "tiny": {"embedding_size": 8, "hidden_sizes": (16, 16), "shortlist_size": 50},
}


@dataclass(frozen=True)
class NgramLmConfig:
    vocab_size: int
    order: int = 7
    embedding_size: int = 512
    hidden_sizes: tuple = (1536, 1024)
    # Dropout in training, on the concatenated embeddings and each hidden layer's output (files
    # written before it: none). Scoring and the NPLM export never drop.
    dropout: float = 0.0

    @property
    def context_size(self) -> int:
        return self.order - 1

    def to_dict(self) -> dict:
        return {**asdict(self), "hidden_sizes": list(self.hidden_sizes)}

    @classmethod
    def from_dict(cls, values: dict) -> "NgramLmConfig":
        return cls(**{**values, "hidden_sizes": tuple(values["hidden_sizes"])})


def lm_config(preset: str, vocab_size: int, order: int = DEFAULT_ORDER, dropout: float = 0.0) -> NgramLmConfig:
    """The config of a preset's network over a vocabulary of `vocab_size` ids (specials and BOS
    included)."""
    sizes = LM_PRESETS[preset]
    return NgramLmConfig(vocab_size, order, sizes["embedding_size"], tuple(sizes["hidden_sizes"]), dropout)


class NgramLM(nn.Module):
    """log p(word | the n-1 words before it), for whole batches of contexts."""

    def __init__(self, config: NgramLmConfig):
        super().__init__()
        if len(config.hidden_sizes) != 2:
            raise ValueError("the CSLM has two hidden layers")
        self.config = config
        first, second = config.hidden_sizes
        self.input_embeddings = nn.Embedding(config.vocab_size, config.embedding_size)
        self.hidden1 = nn.Linear(config.context_size * config.embedding_size, first)
        self.hidden2 = nn.Linear(first, second)
        self.output = nn.Linear(second, config.vocab_size)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The paper's initialisation: every weight uniform in [-0.01, 0.01]."""
        for parameter in self.parameters():
            nn.init.uniform_(parameter, -0.01, 0.01)

    def forward(self, contexts: torch.Tensor) -> torch.Tensor:
        """Unnormalized scores [batch, vocab] for contexts [batch, order-1] (oldest word first)."""
        embedded = self.dropped(self.input_embeddings(contexts).flatten(1))
        hidden = self.dropped(torch.relu(self.hidden1(embedded)))
        hidden = self.dropped(torch.relu(self.hidden2(hidden)))
        return self.output(hidden)

    def dropped(self, values: torch.Tensor) -> torch.Tensor:
        """`values` with dropout in training (no random numbers drawn at rate 0 or in eval mode)."""
        if not self.training or not self.config.dropout:
            return values
        return F.dropout(values, self.config.dropout, training=True)

    def log_probs(self, contexts: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.forward(contexts).float(), dim=-1)
