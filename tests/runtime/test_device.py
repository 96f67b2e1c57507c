"""Device and precision choice: explicit errors instead of silent fallbacks."""

import pytest
import torch

from rescorer.errors import RescorerError
from rescorer.runtime.device import autocast, resolve_device, resolve_precision
from rescorer.scoring.batch_scoring import default_token_budget


def test_auto_device_follows_cuda_availability():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu").type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_asking_for_missing_cuda_is_an_error():
    with pytest.raises(RescorerError, match="no CUDA device"):
        resolve_device("cuda")


@pytest.mark.parametrize("device, asked, chosen", [
    ("cpu", "auto", "fp32"), ("cuda", "auto", "bf16"), ("cpu", "bf16", "bf16"), ("cuda", "fp32", "fp32")])
def test_precision(device, asked, chosen):
    assert resolve_precision(asked, torch.device(device)) == chosen


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(RescorerError, match="valid: auto, cpu, cuda"):
        resolve_device("tpu")
    with pytest.raises(RescorerError, match="valid: auto, fp32, bf16"):
        resolve_precision("fp8", torch.device("cpu"))


def test_bf16_autocast_runs_matmuls_in_bf16_on_cpu():
    with autocast(torch.device("cpu"), "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    with autocast(torch.device("cpu"), "fp32"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32


def test_gpu_batches_are_larger_than_cpu_batches():
    assert default_token_budget(torch.device("cuda")) > 10 * default_token_budget(torch.device("cpu"))
