"""Checkpoint averaging: the mean of the weights, only of models that share a shape and vocabulary."""

import copy

import pytest
import torch

from rescorer.cli.main import main
from rescorer.errors import ModelFileError
from rescorer.models.model_files import load_model, save_model
from rescorer.training.averaging import average_models, average_weights
from tests.helpers import rescore


def _perturbed(tiny_model_path, tmp_path, name, seed):
    bundle = load_model(tiny_model_path)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in bundle.model.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator))
    save_model(bundle, tmp_path / name)
    return tmp_path / name


def test_the_average_is_the_mean_of_the_weights(tiny_model_path, tmp_path):
    paths = [tiny_model_path, _perturbed(tiny_model_path, tmp_path, "b.pt", 1),
             _perturbed(tiny_model_path, tmp_path, "c.pt", 2)]
    states = [load_model(path).model.state_dict() for path in paths]
    averaged = average_models(paths)
    for name, tensor in averaged.model.state_dict().items():
        expected = (states[0][name] + states[1][name] + states[2][name]) / 3
        assert torch.allclose(tensor, expected, atol=1e-6), name
        assert not torch.equal(tensor, states[0][name])
    assert averaged.training["averaged_from"] == [str(path) for path in paths]


def test_weights_keep_their_dtype():
    states = [{"w": torch.tensor([1.0, -3.0], dtype=torch.bfloat16)},
              {"w": torch.tensor([2.0, 5.0], dtype=torch.bfloat16)}]
    mean = average_weights(states)["w"]
    assert mean.dtype == torch.bfloat16 and mean.tolist() == [1.5, 1.0]


def test_unlike_models_are_refused_by_name(tiny_model_path, tmp_path):
    bundle = load_model(tiny_model_path)
    bundle.direction = "inverse"
    save_model(bundle, tmp_path / "inverse.pt")
    with pytest.raises(ModelFileError, match=r"inverse\.pt: its direction differ from .*tiny\.pt's"):
        average_models([tiny_model_path, tmp_path / "inverse.pt"])
    with pytest.raises(ModelFileError, match="at least two"):
        average_models([tiny_model_path])


def test_the_average_command_writes_a_model_that_scores(tiny_model_path, tmp_path):
    other = _perturbed(tiny_model_path, tmp_path, "b.pt", 1)
    out = tmp_path / "avg.pt"
    run = rescore("average", tiny_model_path, other, "-o", out)
    assert run.returncode == 0, run.stderr
    assert "the mean of 2 models' weights" in run.stderr
    assert torch.equal(load_model(out).model.state_dict()["output_left.bias"],
                       average_models([tiny_model_path, other]).model.state_dict()["output_left.bias"])
    again = rescore("average", tiny_model_path, other, "-o", out)
    assert again.returncode != 0 and "exists" in again.stderr.strip().splitlines()[-1]
    assert main.get_command(None, "average") is not None


def test_the_average_of_subword_models_keeps_their_subword_models(subword_bundle, tmp_path):
    save_model(subword_bundle, tmp_path / "a.pt")
    shifted = copy.deepcopy(subword_bundle)
    with torch.no_grad():
        for parameter in shifted.model.parameters():
            parameter.add_(1.0)
    save_model(shifted, tmp_path / "b.pt")
    save_model(average_models([tmp_path / "a.pt", tmp_path / "b.pt"]), tmp_path / "avg.pt")
    averaged = load_model(tmp_path / "avg.pt")
    assert averaged.subwords == subword_bundle.subwords
    name = "output_left.bias"
    assert torch.allclose(averaged.model.state_dict()[name], subword_bundle.model.state_dict()[name] + 0.5)
