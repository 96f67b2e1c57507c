"""One thread or two train the same model, bit for bit, even with the README demo's small batches:
the package asks MKL for its strict reproducible mode (rescorer/__init__.py). Without it, on an
Intel Xeon with AMX, 30 demo updates on 1 and 2 threads already differed by 0.024 in a weight
(`MKL_CBWR=AUTO`, MKL's reproducible mode that is not strict); with it, 0.0."""

import os
import subprocess
import sys

import pytest
import torch

from rescorer.runtime.cpu_features import cpu_features
from tests.helpers import EXAMPLE_TABLE, rescore


def environment(**changes) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "MKL_CBWR"}
    return {**env, **changes}


def imported_setting(env: dict) -> str:
    code = "import torch, os; import rescorer; print(os.environ['MKL_CBWR'])"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_importing_the_package_asks_for_strict_reproducible_products_and_keeps_a_users_own():
    assert imported_setting(environment()) == "AUTO,STRICT"
    assert imported_setting(environment(MKL_CBWR="COMPATIBLE")) == "COMPATIBLE"


def intel_cpu() -> bool:
    features = cpu_features()
    return features is not None and "Intel" in features.model


@pytest.mark.skipif(not (torch.backends.mkl.is_available() and intel_cpu()),
                    reason="MKL's strict reproducible mode is documented for Intel processors only")
def test_one_and_two_threads_train_the_demos_model_alike(tmp_path):
    weights = []
    for threads in (1, 2):
        model = tmp_path / f"t{threads}.pt"
        run = rescore("train", EXAMPLE_TABLE, "-o", model, "--max-updates", 30, "--batch-tokens", 500,
                      "--valid-every", 1000, env=environment(OMP_NUM_THREADS=str(threads)))
        assert run.returncode == 0, run.stderr
        weights.append(torch.load(model, map_location="cpu", weights_only=False)["weights"])
    one, two = weights
    assert one.keys() == two.keys()
    assert [name for name in one if not torch.equal(one[name], two[name])] == []
