"""Training on two or more CPU threads repeats bit for bit only if no backward adds into one
place from several threads. The backward of indexing (`x[index]`) does exactly that when an
index repeats: it adds with atomics, in an order set by thread timing. So no training graph may
index with a repeated index; index_select and F.embedding add in a fixed order."""

import pytest
import torch

from rescorer.models.softmax import SampledWords
from tests.models.test_models import IDS, TGT_VOCAB, VARIANTS, batch, make


def index_nodes(loss: torch.Tensor):
    """Every IndexBackward0 node in the graph behind `loss`."""
    seen, todo = set(), [loss.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.name() == "IndexBackward0":
            yield node
        todo.extend(parent for parent, _ in node.next_functions)


def repeated_positions(node) -> int:
    """How many indexed positions occur more than once (indices of several dims taken as tuples)."""
    indices = [index.reshape(-1) for index in node._saved_indices if index is not None]
    positions = torch.stack(indices, dim=1)
    return positions.size(0) - torch.unique(positions, dim=0).size(0)


@pytest.mark.parametrize("sampled", [False, True], ids=["full-softmax", "sampled-softmax"])
@pytest.mark.parametrize("arch,settings", VARIANTS, ids=IDS)
def test_no_training_gradient_adds_twice_into_one_place(arch, settings, sampled):
    model = make(arch, settings).train()
    src, src_lengths, tgt, tgt_lengths = batch()
    tgt[:, :] = torch.where(tgt > 0, torch.full_like(tgt, 7), tgt)  # the same gold word everywhere
    words = SampledWords(torch.arange(3, TGT_VOCAB, 2), torch.zeros(TGT_VOCAB)) if sampled else None
    loss = -model(src, src_lengths, tgt, tgt_lengths, sampled=words).sum()
    nodes = list(index_nodes(loss))
    assert nodes, "the graph walk found no indexing at all: it no longer sees the model"
    assert [repeated_positions(node) for node in nodes] == [0] * len(nodes)
