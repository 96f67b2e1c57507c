"""What the figures read from a model: embeddings, phrase summaries, attention weights; and
the maps' choice of dense regions."""

import numpy as np
import pytest
import torch

from rescorer.analysis.representations import (attention_weights, phrase_summaries, require_attention,
                                               word_embeddings)
from rescorer.data.vocabulary import Vocabulary
from rescorer.errors import RescorerError
from rescorer.models import ModelSettings, build_model
from rescorer.models.attention import source_mask
from rescorer.models.model_files import ModelBundle

WORDS = ["the", "house", "of", "god", "and", "he", "said"]
VOCAB = Vocabulary(["[PAD]", "[UNK]", "[EOS]"] + WORDS)


def bundle(arch, **settings):
    torch.manual_seed(2)
    model = build_model(ModelSettings.make(arch, "tiny", **settings).config(len(VOCAB), len(VOCAB)))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.3)
    return ModelBundle(model.double().eval(), VOCAB, VOCAB)


@pytest.mark.parametrize("arch, settings, total", [
    ("rnnsearch", {}, "one"), ("luong", {}, "one"), ("luong", {"attention": "local-m"}, "one"),
    ("luong", {"attention": "local-p"}, "at most one"),
], ids=["rnnsearch", "luong-global", "luong-local-m", "luong-local-p"])
def test_attention_rows_are_distributions_over_the_source(arch, settings, total):
    model_bundle = bundle(arch, **settings)
    weights, log_p = attention_weights(model_bundle, "the house of god".split(), "house god".split())
    assert weights.shape == (3, 4)  # two target words and [EOS], four source words
    assert (weights >= 0).all()
    sums = weights.sum(axis=1)
    if total == "one":
        assert sums == pytest.approx(np.ones(3), abs=1e-9)
    else:  # the paper's local-p weights are not renormalised
        assert (sums <= 1 + 1e-9).all() and (sums > 0).all()
    src, tgt = [VOCAB.encode("the house of god".split())], [VOCAB.encode(["house", "god"])]
    with torch.no_grad():
        expected = float(model_bundle.model(torch.tensor(src), torch.tensor([4]), torch.tensor(tgt), torch.tensor([2])))
    assert log_p == pytest.approx(expected, abs=1e-9)


def test_cho2014_has_no_attention_map():
    with pytest.raises(RescorerError, match=r"m.pt: a cho2014 model has no attention .* rnnsearch, luong"):
        require_attention(bundle("cho2014"), "m.pt")
    require_attention(bundle("rnnsearch"), "m.pt")


def test_phrase_summary_is_c_for_cho2014_and_the_mean_annotation_otherwise():
    phrases = ["the house of god", "he said", "and"]
    cho = bundle("cho2014")
    summaries = phrase_summaries(cho, phrases, batch_size=2)
    for row, phrase in enumerate(phrases):
        ids = torch.tensor([VOCAB.encode(phrase.split())])
        with torch.no_grad():
            c = cho.model.encode(ids, torch.tensor([ids.size(1)]))
        assert summaries[row] == pytest.approx(c[0].numpy(), abs=1e-6)
    search = bundle("rnnsearch")
    summaries = phrase_summaries(search, phrases)
    for row, phrase in enumerate(phrases):
        ids = torch.tensor([VOCAB.encode(phrase.split())])
        with torch.no_grad():
            annotations = search.model.encoder(search.model.src_embed(ids), torch.tensor([ids.size(1)])).annotations
        assert summaries[row] == pytest.approx(annotations[0].mean(dim=0).numpy(), abs=1e-6)
    assert summaries.shape == (3, 2 * search.config.hidden_size)  # [->h; <-h]


def test_padding_does_not_change_a_summary():
    search = bundle("rnnsearch")
    alone = phrase_summaries(search, ["and"])
    padded = phrase_summaries(search, ["and", "the house of god and he said"])
    assert padded[0] == pytest.approx(alone[0], abs=1e-6)
    assert source_mask(torch.tensor([1, 3]), 3).tolist() == [[True, False, False], [True, True, True]]


def test_word_embeddings_are_the_most_frequent_words_vectors():
    model_bundle = bundle("cho2014")
    labels, vectors = word_embeddings(model_bundle, "target", 4)
    assert labels == WORDS[:4]
    with torch.no_grad():
        expected = model_bundle.model.tgt_embed(torch.arange(3, 7)).numpy()
    assert vectors == pytest.approx(expected)
    assert vectors.shape == (4, model_bundle.config.embed_dim)
    labels, _ = word_embeddings(model_bundle, "source", 100)
    assert labels == WORDS  # no more than the shortlist holds


def test_dense_windows_find_the_clusters_and_do_not_overlap():
    pytest.importorskip("sklearn")
    from rescorer.analysis.tsne_maps import dense_windows

    rng = np.random.default_rng(0)
    tight = rng.normal((0, 0), 0.1, size=(30, 2))
    loose = rng.normal((10, 10), 0.5, size=(30, 2))
    sparse = rng.uniform(-20, 30, size=(40, 2))
    windows = dense_windows(np.concatenate([sparse, tight, loose]), 2, per_window=20)
    assert len(windows) == 2
    (a0, a1, b0, b1), (c0, c1, d0, d1) = windows
    assert a0 < 0 < a1 and b0 < 0 < b1  # the tightest cluster first
    assert c0 < 10 < c1 and d0 < 10 < d1
    assert a1 < c0 or c1 < a0 or b1 < d0 or d1 < b0
