"""The precision policy (rescorer.models.precision): what each use runs in for each name asked,
the refusals in one line, bf16 autocast and int8 weights."""

import pytest
import torch

from rescorer.errors import RescorerError
from rescorer.models.precision import USES, autocast, check_request, precision_for, quantized
from rescorer.records import SettingError

# (asked, device) -> what each use runs in; None: refused
POLICY = {
    ("auto", "cpu"): {"score": "fp32", "translate": "fp32", "train": "fp32", "train-then-score": "fp32",
                      "score-lm": "fp32"},
    ("auto", "cuda"): {"score": "bf16", "translate": "bf16", "train": "bf16", "train-then-score": "bf16",
                       "score-lm": "bf16"},
    ("bf16", "cpu"): dict.fromkeys(USES, "bf16"),
    ("fp32", "cuda"): dict.fromkeys(USES, "fp32"),
    ("int8", "cpu"): {"score": "int8", "translate": "int8", "train": None, "train-then-score": "fp32",
                      "score-lm": "fp32"},
    ("int8", "cuda"): dict.fromkeys(USES, None),
}


@pytest.mark.parametrize("asked, device", POLICY)
def test_each_use_runs_in_what_the_policy_says(asked, device):
    for use, expected in POLICY[asked, device].items():
        if expected is None:
            with pytest.raises(RescorerError):
                precision_for(asked, device, use)
        else:
            assert precision_for(asked, device, use) == expected, use


def test_the_refusals_say_what_to_do_in_one_line():
    with pytest.raises(SettingError, match=r"^--precision int8 is for scoring \(rescore score, rescore run\); "
                                           r"train in fp32 or bf16$"):
        check_request("int8", "train")  # before any device is chosen: the command line refuses it
    with pytest.raises(RescorerError, match=r"CPU only \(on CUDA use bf16\): add --device cpu$"):
        precision_for("int8", "cuda", "score")
    with pytest.raises(RescorerError, match="valid: auto, fp32, bf16, int8"):
        precision_for("fp8", "cpu", "score")
    with pytest.raises(RescorerError, match="valid: score, translate"):
        precision_for("fp32", "cpu", "export")


def test_bf16_autocast_runs_matmuls_in_bf16_on_cpu():
    with autocast(torch.device("cpu"), "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    for precision in ("fp32", "int8"):
        with autocast(torch.device("cpu"), precision):
            assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32


def test_only_int8_quantizes_the_weights():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    weight = model[0].weight
    assert quantized(model, "bf16") is model and model[0].weight is weight
    pytest.importorskip("torchao")
    quantized(model, "int8")
    assert type(model[0].weight) is not torch.nn.Parameter or model[0].weight is not weight
