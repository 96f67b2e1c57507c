"""Device choice: explicit errors instead of silent fallbacks."""

import pytest
import torch

from rescorer.errors import RescorerError
from rescorer.runtime.device import resolve_device
from rescorer.scoring.batch_scoring import default_token_budget


def test_auto_device_follows_cuda_availability():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu").type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_asking_for_missing_cuda_is_an_error():
    with pytest.raises(RescorerError, match="no CUDA device"):
        resolve_device("cuda")


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(RescorerError, match="valid: auto, cpu, cuda"):
        resolve_device("tpu")


def test_gpu_batches_are_larger_than_cpu_batches():
    assert default_token_budget(torch.device("cuda")) > 10 * default_token_budget(torch.device("cpu"))
