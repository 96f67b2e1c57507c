"""`--precision int8` (torchao): every architecture quantizes and scores close to fp32; what it
cannot do is refused in one line."""

import copy
import sys

import numpy as np
import pytest
import torch
from torch import nn

from rescorer.errors import RescorerError
from rescorer.models.quantization import is_quantized, quantize_int8
from rescorer.models.precision import precision_for
from rescorer.scoring.batch_scoring import score_encoded
from tests.helpers import rescore
from tests.models.test_models import IDS, VARIANTS, make

pytest.importorskip("torchao")


def pairs(count=60, seed=0):
    rng = np.random.default_rng(seed)
    src = [rng.integers(3, 30, rng.integers(1, 8)).tolist() for _ in range(count)]
    tgt = [rng.integers(3, 40, rng.integers(1, 8)).tolist() for _ in range(count)]
    return src, tgt


@pytest.mark.parametrize("arch, settings", VARIANTS, ids=IDS)
def test_every_architecture_scores_close_to_fp32(arch, settings):
    model = make(arch, settings, std=0.1)
    src, tgt = pairs()
    fp32 = score_encoded(model, src, tgt)
    quantized = quantize_int8(copy.deepcopy(model))
    assert is_quantized(quantized) and not is_quantized(model)
    # the output layer, and the weights an architecture slices, stay fp32
    assert type(quantized.output_left.weight) is nn.Parameter
    inner = (quantized.decoder_init if hasattr(quantized, "decoder_init") else quantized.combine
             if hasattr(quantized, "combine") else quantized.decoder_layers[0].linear1)
    assert type(inner.weight) is not nn.Parameter
    int8 = score_encoded(quantized, src, tgt)
    assert np.isfinite(int8).all()
    difference = np.abs(int8 - fp32)
    assert difference.mean() < 0.05 * np.abs(fp32).mean()
    assert 0 < difference.max()  # really quantized: not the fp32 scores
    assert np.corrcoef(np.argsort(np.argsort(int8)), np.argsort(np.argsort(fp32)))[0, 1] > 0.98


def test_quantizing_twice_changes_nothing():
    model = quantize_int8(make("cho2014", {}, std=0.1))
    src, tgt = pairs(10)
    before = score_encoded(model, src, tgt)
    np.testing.assert_array_equal(score_encoded(quantize_int8(model), src, tgt), before)


def test_int8_is_refused_on_cuda_in_one_line():
    with pytest.raises(RescorerError, match="CPU only"):
        precision_for("int8", "cuda", "score")


def test_missing_torchao_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchao.quantization", None)  # import fails
    with pytest.raises(RescorerError) as missing:
        quantize_int8(make("cho2014", {}))
    assert str(missing.value) == ("--precision int8 needs torchao, which is not installed: "
                                  "pip install 'torchao' or 'rescorer[int8]'; or use fp32 or bf16")


def test_cli_scores_in_int8_and_refuses_int8_training(tmp_path, example_table, tiny_model_path):
    out = tmp_path / "out.gz"
    done = rescore("score", example_table, "--model", tiny_model_path, "-o", out, "--precision", "int8")
    assert done.returncode == 0, done.stderr
    assert "precision:int8" in done.stderr and "lines in 4000, out 4000" in done.stderr
    assert "Traceback" not in done.stderr and "Failed to load" not in done.stderr
    refused = rescore("train", example_table, "-o", tmp_path / "m.pt", "--precision", "int8")
    assert refused.returncode == 2
    assert "--precision int8 is for scoring" in refused.stderr and not (tmp_path / "m.pt").exists()


def test_an_int8_model_has_a_journal_identity_of_its_own():
    """--resume compares models by their weights; int8 weights are tensor subclasses."""
    from rescorer.data.vocabulary import Vocabulary
    from rescorer.scoring.units import bundle_identity as model_identity
    from rescorer.models.model_files import ModelBundle

    model = make("cho2014", {})
    vocab = Vocabulary(["[PAD]", "[UNK]", "[EOS]", "a", "b"])
    fp32 = model_identity(ModelBundle(model, vocab, vocab), "m.pt")
    int8 = [model_identity(ModelBundle(quantize_int8(copy.deepcopy(model)), vocab, vocab), "m.pt")
            for _ in range(2)]
    assert int8[0] == int8[1] and int8[0] != fp32
