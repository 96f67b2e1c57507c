"""A sentence's log p under the CSLM: the sum of its words' and its end's log p, begin padded."""

import pytest
import torch

from rescorer.data.vocabulary import EOS_ID
from rescorer.errors import ModelFileError
from rescorer.models.lm_files import LmBundle, lm_vocabulary, save_lm
from rescorer.models.ngram_lm import BOS_ID, NgramLM, NgramLmConfig
from rescorer.scoring.lm_scoring import InProcessLmScorer, sentence_log_probs, word_log_probs


@pytest.fixture()
def bundle() -> LmBundle:
    torch.manual_seed(0)
    vocab = lm_vocabulary(["a", "b", "c"])
    model = NgramLM(NgramLmConfig(len(vocab), order=3, embedding_size=4, hidden_sizes=(8, 8)))
    for parameter in model.parameters():  # weights large enough that the words' probabilities differ
        torch.nn.init.normal_(parameter, std=0.5)
    return LmBundle(model.eval(), vocab)


def by_hand(bundle: LmBundle, context: list, word: int) -> float:
    with torch.no_grad():
        return float(bundle.model.log_probs(torch.tensor([context]))[0, word])


def test_sentence_log_p_is_the_sum_of_its_words_and_its_end(bundle):
    a, b, s = 4, 5, BOS_ID
    expected = [by_hand(bundle, [s, s], a), by_hand(bundle, [s, a], b), by_hand(bundle, [a, b], EOS_ID)]
    per_word = word_log_probs(bundle, ["a b", ["c"]])
    assert per_word[0] == pytest.approx(expected, abs=1e-5)
    assert len(per_word[1]) == 2
    total = sentence_log_probs(bundle, ["a b", ["c"]])
    assert total[0] == pytest.approx(sum(expected), abs=1e-5)
    assert total[1] == pytest.approx(per_word[1].sum(), abs=1e-9)


def test_scores_do_not_depend_on_the_batching(bundle):
    sentences = ["a b c a", "c c", "", "b a x y z a b c"]
    one_at_a_time = sentence_log_probs(bundle, sentences, batch_ngrams=1)
    together = sentence_log_probs(bundle, sentences)
    assert together == pytest.approx(one_at_a_time, abs=1e-5)
    assert together[2] == pytest.approx(by_hand(bundle, [BOS_ID, BOS_ID], EOS_ID), abs=1e-5)
    assert sentence_log_probs(bundle, []).tolist() == []


def test_the_scorer_loads_an_lm_file_and_refuses_a_phrase_model(bundle, tmp_path, tiny_model_path):
    save_lm(bundle, tmp_path / "lm.pt")
    scorer = InProcessLmScorer("cpu")
    assert scorer.score_sentences(tmp_path / "lm.pt", ["a b"]) == pytest.approx(
        sentence_log_probs(bundle, ["a b"]), abs=1e-6)
    with pytest.raises(ModelFileError, match=r"tiny.pt: a phrase model .*not a language model"):
        scorer.score_sentences(tiny_model_path, ["a b"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_scores_on_cuda_match_the_cpus(bundle):
    sentences = ["a b c a", "c c", "", "b a x y z a b c"]
    on_cpu = sentence_log_probs(bundle, sentences)
    bundle.model.to("cuda")
    assert sentence_log_probs(bundle, sentences, torch.device("cuda")) == pytest.approx(on_cpu, abs=1e-4)
