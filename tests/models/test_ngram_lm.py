"""The CSLM's network (Cho et al. 4.1.2) and its n-gram windows at sentence edges, by hand."""

import numpy as np
import torch

from rescorer.data.lm_corpus import ngram_stream
from rescorer.data.vocabulary import EOS_ID, UNK_ID
from rescorer.models.lm_files import lm_vocabulary
from rescorer.models.ngram_lm import BOS_ID, LM_PRESETS, NgramLM, NgramLmConfig, lm_config


def test_layer_shapes_follow_the_config():
    model = NgramLM(NgramLmConfig(vocab_size=10, order=3, embedding_size=4, hidden_sizes=(5, 6)))
    shapes = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    assert shapes == {"input_embeddings.weight": (10, 4), "hidden1.weight": (5, 8), "hidden1.bias": (5,),
                      "hidden2.weight": (6, 5), "hidden2.bias": (6,), "output.weight": (10, 6),
                      "output.bias": (10,)}
    contexts = torch.tensor([[3, 4], [1, 2]])
    assert model(contexts).shape == (2, 10)
    assert torch.allclose(model.log_probs(contexts).exp().sum(-1), torch.ones(2))
    assert all(float(p.detach().abs().max()) <= 0.01 for p in model.parameters())  # the paper's uniform init


def test_the_paper_preset_has_the_sections_sizes():
    config = lm_config("paper", vocab_size=15004)
    model = NgramLM(config)
    assert (config.order, config.embedding_size, config.hidden_sizes) == (7, 512, (1536, 1024))
    assert model.hidden1.in_features == 3072  # 6 context words x 512, concatenated
    assert model.output.in_features == 1024 and LM_PRESETS["paper"]["shortlist_size"] == 15000
    assert lm_config("small", 100, order=4).order == 4


def test_windows_at_sentence_edges_pad_with_bos_and_predict_the_end():
    vocab = lm_vocabulary(["a", "b", "c"])  # ids 4, 5, 6 after [PAD] [UNK] [EOS] <s>
    a, b, c = 4, 5, 6
    assert vocab.tokens[BOS_ID] == "<s>" and vocab.encode(["a", "c"]) == [a, c]
    ngrams = ngram_stream([["a", "b"], ["c", "x"], []], vocab, order=3)
    contexts, words = ngrams.windows(ngrams.targets)
    s = BOS_ID
    assert contexts.tolist() == [[s, s], [s, a], [a, b],          # "a b": a, b, then the end
                                 [s, s], [s, c], [c, UNK_ID],     # "c x": x is outside the shortlist
                                 [s, s]]                          # "": only the end
    assert words.tolist() == [a, b, EOS_ID, c, UNK_ID, EOS_ID, EOS_ID]
    assert ngrams.sentence_starts.tolist() == [0, 3, 6, 7]
    assert ngrams.targets_of(np.array([1])).tolist() == ngrams.targets[3:6].tolist()


def test_a_word_of_a_sentence_never_sees_the_one_before():
    vocab = lm_vocabulary(["a", "b"])
    ngrams = ngram_stream([["a", "a", "a"], ["b"]], vocab, order=4)
    contexts, words = ngrams.windows(ngrams.targets_of(np.array([1])))
    assert contexts.tolist() == [[BOS_ID] * 3, [BOS_ID, BOS_ID, 5]] and words.tolist() == [5, EOS_ID]


def test_a_cslm_file_whose_weights_do_not_fit_its_config_is_refused_in_one_line(tmp_path):
    """The phrase models' shape check (model_files.check_shapes) reads the CSLM's files too."""
    import pytest

    from rescorer.errors import ModelFileError
    from rescorer.models.lm_files import LmBundle, load_lm, save_lm

    config = NgramLmConfig(vocab_size=7, order=3, embedding_size=4, hidden_sizes=(5, 6))
    save_lm(LmBundle(NgramLM(config), lm_vocabulary(["a", "b", "c"])), tmp_path / "lm.pt")
    assert load_lm(tmp_path / "lm.pt").config == config
    payload = torch.load(tmp_path / "lm.pt", weights_only=True)
    payload["config"]["hidden_sizes"] = [5, 9]
    torch.save(payload, tmp_path / "lie.pt")
    with pytest.raises(ModelFileError, match=r"lie.pt: model file does not match its own config \(hidden2.bias: "
                                             r"shape \[6\] in the file, shape \[9\] by the config\)"):
        load_lm(tmp_path / "lie.pt")
