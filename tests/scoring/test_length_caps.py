"""translate's length cap a + b * source length: measured on the training pairs and kept in the
model file; files from before keep 2 * source + 10; --max-length-ratio R gives R * source + 10."""

import dataclasses

import numpy as np
import pytest
import torch

from rescorer.data.length_caps import COVERAGE, measure_length_cap
from rescorer.data.vocabulary import EOS_ID
from rescorer.models.model_files import load_model, read_model_file
from rescorer.scoring.translation import SearchSettings, translate_file, with_length_cap
from tests.helpers import gz_lines


def test_the_smallest_grid_choice_that_covers_the_pairs():
    src = np.full(1000, 10)
    tgt = np.full(1000, 19)  # 1.5 * 10 + 5 = 20 covers, 1.2 * 10 + 10 = 22 too but is wider on average
    assert measure_length_cap(src, tgt) == {"slack": 5, "ratio": 1.5, "coverage": 1.0}
    tgt[:2] = 21  # 0.2% over 20: 1.2 * 10 + 10 = 22 is the smallest that covers 99.9%
    assert measure_length_cap(src, tgt) == {"slack": 10, "ratio": 1.2, "coverage": 1.0}
    tgt[0] = 30  # one pair in 1000 over 22: 99.9% still covered
    assert measure_length_cap(src, tgt) == {"slack": 10, "ratio": 1.2, "coverage": COVERAGE}
    assert measure_length_cap(np.array([5]), np.array([5]))["ratio"] == 1.2  # 1.2 * 5 + 5 = 11
    # none covers: the widest, 2 * source + 10, with the share it covers
    assert measure_length_cap(np.array([1, 1]), np.array([1, 50])) == {"slack": 10, "ratio": 2.0, "coverage": 0.5}


def test_training_keeps_the_cap_of_its_pairs(tiny_model_path, example_table):
    """The tiny model trained on every pair of the example table (phrases of at most 7 words)."""
    pairs = [line.split(b" ||| ")[:2] for line in gz_lines(example_table)]
    want = measure_length_cap(np.array([len(src.split()) for src, _ in pairs]),
                              np.array([len(tgt.split()) for _, tgt in pairs]))
    assert read_model_file(tiny_model_path)["training"]["length_cap"] == want
    assert want["coverage"] >= COVERAGE


def test_translate_bounds_by_the_model_files_cap_unless_told(tiny_bundle, tmp_path):
    """A model that never chooses [EOS] runs every translation to the cap: a + b * source words
    from the model file, 2 * source + 10 for an older file, R * source + 10 when told R."""
    bundle = tiny_bundle
    with torch.no_grad():
        bundle.model.output_left.bias[EOS_ID] = -1e4  # [EOS] only where the bound forces it
    source = tmp_path / "in.en"
    source.write_text("the lord\nand he said unto them\n")

    def lengths(model_bundle, settings, name):
        summary = translate_file(model_bundle, source, tmp_path / name, settings)
        assert summary.forced_ends == 2
        return [len(line.split()) for line in (tmp_path / name).read_text().splitlines()]

    bundle.training = {**bundle.training, "length_cap": {"slack": 1, "ratio": 1.5, "coverage": 1.0}}
    assert lengths(bundle, SearchSettings(beam=2), "measured") == [1 + 3, 1 + 7]  # int(1.5 * 5) = 7
    assert lengths(bundle, SearchSettings(beam=2, length_ratio=1.0), "told") == [10 + 2, 10 + 5]
    older = dataclasses.replace(bundle, training={k: v for k, v in bundle.training.items() if k != "length_cap"})
    assert lengths(older, SearchSettings(beam=2), "older") == [10 + 4, 10 + 10]
    resolved = with_length_cap(bundle, SearchSettings())
    assert (resolved.length_slack, resolved.length_ratio) == (1, 1.5)


@pytest.fixture()
def tiny_bundle(tiny_model_path):
    return load_model(tiny_model_path)
