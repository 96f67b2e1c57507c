"""NPLM's text format against a model file NPLM's own trainer wrote (tests/fixtures/nplm, whose
README says how), and NPLM's own scores of it: no NPLM binary is needed."""

import math

import pytest
import torch

from rescorer.data.vocabulary import EOS, PAD, UNK
from rescorer.errors import ModelFileError
from rescorer.models.ngram_lm import BOS, BOS_ID, NgramLM, NgramLmConfig
from rescorer.models.nplm_format import (OUR_NAMES, SECTIONS, nplm_lines, nplm_words, read_nplm,
                                         read_nplm_file, write_nplm)
from tests.helpers import FIXTURE_FILES

NPLM = FIXTURE_FILES / "nplm"
FIXTURE = NPLM / "tiny.nplm"
# NPLM prints 6 significant digits of float32 sums, added in another order
DIGITS = dict(rel=1e-5, abs=1e-5)


def table(name):
    return [line.split("\t") for line in (NPLM / name).read_text(encoding="utf-8").splitlines()[1:]]


def ids_of(tokens, words):
    index = {token: i for i, token in enumerate(tokens)}
    return [index.get(OUR_NAMES.get(word, word), index[UNK]) for word in words]


def scores(model, ngrams):
    """(log p, raw output score) of each n-gram's last word after its context."""
    ngrams = torch.tensor(ngrams)
    with torch.no_grad():
        raw = model(ngrams[:, :-1]).gather(1, ngrams[:, -1:])[:, 0]
        log_p = model.log_probs(ngrams[:, :-1]).gather(1, ngrams[:, -1:])[:, 0]
    return log_p.tolist(), raw.tolist()


def test_the_fixture_read_back_gives_nplms_own_log_probs_and_unnormalized_scores():
    model, tokens = read_nplm(FIXTURE)
    assert model.config == NgramLmConfig(vocab_size=100, order=5, embedding_size=8, hidden_sizes=(16, 12))
    assert tokens[:BOS_ID + 1] == [PAD, UNK, EOS, BOS]
    rows = table("ngram_log_probs.tsv")
    log_p, raw = scores(model, [ids_of(tokens, words.split()) for _, words, _, _ in rows])
    assert log_p == [pytest.approx(float(normalized), **DIGITS) for _, _, normalized, _ in rows]
    assert raw == [pytest.approx(float(unnormalized), **DIGITS) for _, _, _, unnormalized in rows]
    assert len(set(round(value, 3) for value in log_p)) > 8  # the contexts matter in this model


def sentence_ngrams(tokens, sentence, context):
    """<s> padding on the left, </s> at the end, unknown words <unk>, as NPLM makes them."""
    ids = [BOS_ID] * context + ids_of(tokens, sentence.split()) + [tokens.index(EOS)]
    return [ids[i - context:i + 1] for i in range(context, len(ids))]


def test_whole_sentences_score_as_nplms_test_network_scores_them():
    model, tokens = read_nplm(FIXTURE)
    for sentence, normalized, unnormalized, _, _ in table("sentence_log10_probs.tsv"):
        log_p, raw = scores(model, sentence_ngrams(tokens, sentence, model.config.context_size))
        assert math.fsum(log_p) / math.log(10) == pytest.approx(float(normalized), rel=1e-5)
        assert math.fsum(raw) / math.log(10) == pytest.approx(float(unnormalized), rel=1e-5)


def test_nplms_neural_lm_class_skipped_the_second_hidden_layer():
    """Why testNeuralLM's figures differ (the fixture's README): NPLM's neuralLM, which Moses
    links, decided to skip the second hidden layer before reading the model, and applied the
    output layer to the first hidden layer's first units. Should it fail, those figures no
    longer say what NPLM did, and the README's warning about Moses must be checked again."""
    model, tokens = read_nplm(FIXTURE)
    width = model.config.hidden_sizes[1]
    for sentence, normalized, _, neural_lm, _ in table("sentence_log10_probs.tsv"):
        ngrams = torch.tensor(sentence_ngrams(tokens, sentence, model.config.context_size))
        with torch.no_grad():
            first = torch.relu(model.hidden1(model.input_embeddings(ngrams[:, :-1]).flatten(1)))
            skipped = torch.log_softmax(first[:, :width] @ model.output.weight.T + model.output.bias, -1)
        log_p = skipped.gather(1, ngrams[:, -1:]).sum().item()
        assert log_p / math.log(10) == pytest.approx(float(neural_lm), rel=1e-5)
        assert float(neural_lm) < float(normalized) - 5


def permuted_fixture(order):
    """The fixture's lines with the rows of every vocabulary-indexed section in `order`."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    by_word = {"\\input_vocab", "\\output_vocab", "\\input_embeddings", "\\output_weights", "\\output_biases"}
    out, position = [], 0
    while position < len(lines):
        header = lines[position]
        out.append(header)
        position += 1
        if header in by_word:
            rows = lines[position:position + len(order)]
            out.extend(rows[i] for i in order)
            position += len(order)
    return out


def test_the_export_lays_the_model_out_byte_for_byte_as_nplms_writer_did():
    """The export of the fixture read back is NPLM's own file, its vocabulary in the CSLM's order:
    the same sections in the same order, the same config lines, the same numbers printed alike."""
    model, tokens = read_nplm(FIXTURE)
    words = read_nplm_file(FIXTURE).input_vocab
    exported = list(nplm_lines(model, tokens))
    assert exported == permuted_fixture([words.index(word) for word in nplm_words(tokens)])
    headers = [line for line in exported if line.startswith("\\")]
    assert headers == ["\\config", "\\input_vocab", "\\output_vocab", *(header for header, _ in SECTIONS), "\\end"]


def test_a_torch_model_round_trips_through_the_file_with_its_log_probs(tmp_path):
    torch.manual_seed(3)
    model = NgramLM(NgramLmConfig(vocab_size=9, order=4, embedding_size=5, hidden_sizes=(7, 6)))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.uniform_(-1, 1)
    tokens = [PAD, UNK, EOS, BOS, "le", "la", "<S>", "l'", "é"]
    path = tmp_path / "lm.nplm"
    assert write_nplm(model, tokens, path) == len(path.read_text(encoding="utf-8").splitlines())
    again, read_tokens = read_nplm(path)
    assert read_tokens == tokens and again.config == model.config
    contexts = torch.tensor([[3, 3, 3], [3, 4, 8], [1, 2, 0], [5, 6, 7]])
    with torch.no_grad():
        assert torch.allclose(again.log_probs(contexts), model.log_probs(contexts), atol=1e-4)
        assert not torch.allclose(model.log_probs(contexts)[0], model.log_probs(contexts)[1], atol=1e-2)
    assert list(nplm_lines(again, read_tokens)) == path.read_text(encoding="utf-8").splitlines()
    assert path.read_text(encoding="utf-8").count("<null>\n") == 2  # [PAD] in both vocabularies


def tiny_model():
    return NgramLM(NgramLmConfig(vocab_size=5, order=3, embedding_size=2, hidden_sizes=(3, 2)))


@pytest.mark.parametrize("tokens, message", [
    ([PAD, UNK, EOS, BOS, "<unk>"], "one of NPLM's special words"),
    ([PAD, UNK, EOS, BOS, "[EOS]"], "one of NPLM's special words"),
    ([UNK, PAD, EOS, BOS, "a"], "starts with"),
    ([PAD, UNK, EOS, BOS], "4 words, the model 5"),
])
def test_a_vocabulary_nplm_cannot_hold_is_refused_before_anything_is_written(tmp_path, tokens, message):
    path = tmp_path / "lm.nplm"
    with pytest.raises(ValueError, match=message):
        write_nplm(tiny_model(), tokens, path)
    assert list(tmp_path.iterdir()) == []


def test_a_weight_that_is_not_finite_is_refused(tmp_path):
    model = tiny_model()
    with torch.no_grad():
        model.hidden2.bias[1] = float("nan")
    with pytest.raises(ValueError, match="hidden2.bias"):
        write_nplm(model, [PAD, UNK, EOS, BOS, "a"], tmp_path / "lm.nplm")
    assert list(tmp_path.iterdir()) == []


def damaged(tmp_path, change):
    path = tmp_path / "damaged.nplm"
    path.write_text(change(FIXTURE.read_text(encoding="utf-8")), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, message", [
    (lambda text: text.replace("activation_function rectifier", "activation_function tanh"), "activation tanh"),
    (lambda text: text.replace("num_hidden 16", "num_hidden 0"), "one hidden layer"),
    (lambda text: text.replace("\\output_vocab\n<unk>", "\\output_vocab\n<UNK>"), "vocabularies differ"),
    (lambda text: text.replace("\\hidden_biases 2\n", "\\hidden_biases 2\n0.5\n"), "hidden_biases 2 is 13"),
    (lambda text: text.replace("\\output_biases", "\\output_bias"), r"damaged.nplm:\d+: not an NPLM section"),
    (lambda text: text.replace("\\hidden_weights 2\n", "\\hidden_weights 2\n1\t2\n"), r"damaged.nplm:355: .*16 numbers where the rows before have 2"),
    (lambda text: text.replace("\\output_biases\n", "\\output_biases\nx\n"), r"damaged.nplm:484: .*not a number"),
    (lambda text: text.replace("ngram_size 5", "ngram_size five"), r"damaged.nplm:3: ngram_size"),
    (lambda text: text.split("\\output_weights")[0], r"lacks \\output_weights, \\output_biases"),
    (lambda text: "# a plain text file\n", r"not an NPLM section"),
    (lambda text: "", r"no \\config"),
])
def test_a_damaged_nplm_file_is_one_error_naming_the_file(tmp_path, change, message):
    with pytest.raises(ModelFileError, match=message):
        read_nplm(damaged(tmp_path, change))
