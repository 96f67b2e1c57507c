"""A seed gives the same initial weights whatever torch's thread count (issue 33): the orthogonal
init's QR rounds differently on two threads, and the default recipe grew that 2e-6 into a model
three times as perplexed (benchmarks/RESULTS.md, Speed III parts 6 and 7)."""

import pytest
import torch

from rescorer.models import ModelSettings, architecture_names, build_model


def initial_weights(arch: str, threads: int) -> dict[str, torch.Tensor]:
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(7)
        model = build_model(ModelSettings.make(arch, "small").config(15000, 15000))
    finally:
        torch.set_num_threads(before)
    return model.state_dict()


@pytest.mark.parametrize("arch", architecture_names())
def test_one_and_two_threads_initialise_bit_for_bit_alike(arch):
    one, two = initial_weights(arch, 1), initial_weights(arch, 2)
    assert one.keys() == two.keys()
    different = [name for name in one if not torch.equal(one[name], two[name])]
    assert different == []


def test_the_init_leaves_the_thread_count_as_it_found_it():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        build_model(ModelSettings.make("cho2014", "tiny").config(100, 100))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
