"""Model files: one self-contained file, loadable with weights_only=True, wrong files refused."""

import pickle

import numpy as np
import pytest
import torch

from rescorer.checkpoint import FORMAT_VERSION, load_model, read_model_file, save_model
from rescorer.errors import ModelFileError
from rescorer.scoring import score_pairs

PAIRS = [("the lord", "l' éternel"), ("and he said", "et il dit"), ("zzz unknown", "qqq inconnu")]


def test_save_and_load_give_identical_scores(tiny_bundle, tmp_path):
    before = score_pairs(tiny_bundle, PAIRS, device="cpu")
    save_model(tiny_bundle, tmp_path / "copy.pt")
    loaded = load_model(tmp_path / "copy.pt")
    np.testing.assert_array_equal(score_pairs(loaded, PAIRS, device="cpu"), before)
    assert loaded.src_vocab == tiny_bundle.src_vocab and loaded.tgt_vocab == tiny_bundle.tgt_vocab
    assert loaded.config == tiny_bundle.config


def test_file_holds_everything_as_plain_data(tiny_model_path):
    payload = torch.load(tiny_model_path, weights_only=True)
    assert payload["format_version"] == FORMAT_VERSION
    assert payload["src_vocab"][:3] == ["[PAD]", "[UNK]", "[EOS]"]
    assert payload["config"]["hidden_size"] == 48
    state = payload["training"]["state"]
    assert state["updates"] == 60 and state["best_valid_ppl"] > 1
    assert payload["training"]["table_name"] == "phrase-table.gz"
    assert payload["training"]["settings"]["seed"] == 3
    assert "optimizer" not in payload  # the release file; optimizer state stays in the checkpoint


class Foreign:
    pass


def write_bytes(path, data):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "absent.pt", "model file not found"),
    (lambda p: write_bytes(p / "pickle.pt", pickle.dumps(Foreign())), "refused for safety: the file would load .*Foreign"),
    (lambda p: write_bytes(p / "random.pt", bytes(range(256)) * 4), "not a readable model file"),
    (lambda p: write_bytes(p / "empty.pt", b""), "not a readable model file"),
])
def test_bad_files_are_refused_naming_them(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(ModelFileError, match=message) as error:
        read_model_file(path)
    assert str(path) in str(error.value)
    assert "\n" not in str(error.value)


def test_foreign_torch_pickle_with_code_is_refused(tmp_path):
    path = tmp_path / "foreign.pt"
    torch.save({"model": Foreign()}, path)
    with pytest.raises(ModelFileError, match="refused for safety"):
        read_model_file(path)


def test_other_torch_file_is_refused(tmp_path):
    path = tmp_path / "state_dict.pt"
    torch.save({"weight": torch.zeros(3)}, path)
    with pytest.raises(ModelFileError, match="not a rescorer model file"):
        load_model(path)


def test_truncated_file_is_refused(tiny_model_path, tmp_path):
    data = tiny_model_path.read_bytes()
    path = write_bytes(tmp_path / "cut.pt", data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="truncated or corrupt"):
        load_model(path)


def test_future_format_version_is_refused(tiny_model_path, tmp_path):
    payload = torch.load(tiny_model_path, weights_only=True)
    payload["format_version"] = FORMAT_VERSION + 1
    torch.save(payload, tmp_path / "future.pt")
    with pytest.raises(ModelFileError, match="format version"):
        load_model(tmp_path / "future.pt")


def test_weights_that_do_not_fit_the_config_are_refused(tiny_model_path, tmp_path):
    payload = torch.load(tiny_model_path, weights_only=True)
    payload["config"]["hidden_size"] = 64
    torch.save(payload, tmp_path / "mismatch.pt")
    with pytest.raises(ModelFileError, match="does not match"):
        load_model(tmp_path / "mismatch.pt")
