"""How a failure reaches the user as one line: an allocation failure wherever it arises (torch's CPU
allocator raises a plain RuntimeError, which went out as an internal error, issue 32 case 14), and a
missing optional package."""

import sys

import click
import pytest
import torch
from click.testing import CliRunner

from rescorer.cli.main import main
from rescorer.runtime.failure_reports import one_line, reports_errors


@pytest.fixture(scope="module")
def allocation_failure() -> RuntimeError:
    """What torch raises when the CPU allocator cannot give the memory: 2^60 bytes is more than any
    machine's address space."""
    with pytest.raises(RuntimeError) as failure:
        torch.empty(2 ** 57, dtype=torch.float64)
    assert type(failure.value) is RuntimeError and "can't allocate memory" in str(failure.value)
    return failure.value


@pytest.mark.parametrize("command, options", [
    (("train",), "--batch-tokens or --batch-size"),
    (("score",), "--token-budget or --chunk-size"),
    (("run",), "--batch-tokens, --batch-size, --token-budget or --chunk-size"),
    (("translate",), "--batch-size or --beam"),
])
def test_an_allocation_failure_names_the_options_of_the_command_that_lower_it(allocation_failure, command, options):
    group = main
    for name in command:
        group = group.commands[name]
    with click.Context(group, info_name=command[-1]):
        line = one_line(allocation_failure)
    assert line == f"out of memory (an allocation of 1152921.5 TB failed): lower {options}"


def test_a_gpu_s_and_numpy_s_failures_are_out_of_memory_too():
    assert one_line(MemoryError()) == "out of memory"
    assert one_line(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0)")) == \
        "out of memory (an allocation of 20.00 GiB failed)"
    assert one_line(RuntimeError("shape mismatch")).startswith("internal error RuntimeError: shape mismatch")


def test_a_command_that_cannot_allocate_exits_in_one_line():
    @click.command()
    @click.option("--batch-size", type=int, default=1)
    @reports_errors
    def allocating(batch_size):
        torch.empty(2 ** 57 * batch_size, dtype=torch.float64)

    result = CliRunner().invoke(allocating, [])
    assert result.exit_code == 1
    assert result.output == "Error: out of memory (an allocation of 1152921.5 TB failed): lower --batch-size\n"


def test_a_missing_optional_package_names_it_and_its_extra(monkeypatch):
    """`rescore moses evaluate` without the [moses] extra went out as "internal error
    ModuleNotFoundError ... a bug in rescore"; it is a missing install, and the line says which."""
    from moses_integration.evaluation.scores import score

    @click.command()
    @reports_errors
    def scoring():
        score(["a b"], [["a b"]])

    monkeypatch.setitem(sys.modules, "sacrebleu", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "sacrebleu.metrics", None)
    result = CliRunner().invoke(scoring, [])
    assert result.exit_code == 1
    assert result.output == ("Error: this command needs sacrebleu, which is not installed: "
                             "pip install 'sacrebleu' or 'rescorer[moses]'\n")
    assert one_line(ModuleNotFoundError("No module named 'sklearn.manifold'", name="sklearn.manifold")) == \
        "this command needs scikit-learn, which is not installed: pip install 'scikit-learn' or 'rescorer[analysis]'"
    assert one_line(ModuleNotFoundError("No module named 'nonesuch'", name="nonesuch")).startswith("internal error")


def test_the_modules_that_check_for_their_own_optional_package_word_it_the_same_way(monkeypatch, tmp_path):
    """figures, t-SNE maps and int8 catch their own ImportError to name what needed the package;
    the pip line and extra are still OPTIONAL_PACKAGES', as one_line gives them."""
    import numpy as np

    from rescorer.analysis.figures import pyplot
    from rescorer.analysis.tsne_maps import project_2d
    from rescorer.errors import RescorerError

    for module in ("matplotlib", "sklearn", "sklearn.manifold"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(RescorerError) as figure:
        pyplot()
    assert str(figure.value) == ("drawing a figure needs matplotlib, which is not installed: "
                                 "pip install 'matplotlib' or 'rescorer[analysis]'")
    with pytest.raises(RescorerError) as tsne:
        project_2d(np.zeros((40, 3)))
    assert str(tsne.value) == ("a t-SNE map needs scikit-learn, which is not installed: "
                               "pip install 'scikit-learn' or 'rescorer[analysis]'")
