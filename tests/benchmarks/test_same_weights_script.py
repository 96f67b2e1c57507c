"""benchmarks/studies/proxy/same_weights.py: 0.0 only for the same weights, the largest difference else."""

import pytest
import torch

from benchmarks.studies.proxy.same_weights import max_difference


def save(path, **weights):
    torch.save({"weights": {name: torch.tensor(value) for name, value in weights.items()}}, path)
    return str(path)


def test_the_same_weights_give_zero_and_others_their_largest_difference(tmp_path):
    a = save(tmp_path / "a.pt", w=[1.0, 2.0], b=[0.5])
    same = save(tmp_path / "same.pt", w=[1.0, 2.0], b=[0.5])
    other = save(tmp_path / "other.pt", w=[1.0, 2.25], b=[0.0])
    assert max_difference(a, same) == 0.0
    assert max_difference(a, other) == 0.5


def test_other_parameters_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="hold different parameters"):
        max_difference(save(tmp_path / "a.pt", w=[1.0]), save(tmp_path / "b.pt", v=[1.0]))
