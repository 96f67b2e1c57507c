"""Model files: one self-contained file, loadable with weights_only=True, wrong files refused."""

import pickle

import numpy as np
import pytest
import torch

from rescorer.data.vocabulary import Vocabulary
from rescorer.errors import ModelFileError
from rescorer.io.table_reader import PhraseTableReader
from rescorer.models import ModelSettings, build_model
from rescorer.models.model_files import FORMAT_VERSION, ModelBundle, load_model, read_model_file, save_model
from rescorer.scoring.batch_scoring import score_pairs
from tests.helpers import FIXTURE_FILES

DATA = FIXTURE_FILES
V1_MODEL = DATA / "v1-model.pt"  # made by rescorer 0.1.0: see data/make_v1_fixture.py

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
    assert payload["format_version"] == FORMAT_VERSION == 2
    assert payload["config"]["arch"] == "cho2014" and payload["config"]["cell"] == "gru"
    assert payload["src_vocab"][:3] == ["[PAD]", "[UNK]", "[EOS]"]
    assert payload["config"]["hidden_size"] == 48
    state = payload["training"]["state"]
    assert state["updates"] == 60 and state["best_valid_ppl"] > 1
    assert payload["training"]["table_name"] == "phrase-table.gz"
    assert payload["training"]["settings"]["fields"]["seed"] == 3
    assert "optimizer" not in payload  # the release file; optimizer state stays in the checkpoint


class Foreign:
    pass


def write_bytes(path, data):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "absent.pt", "model file not found"),
    (lambda p: write_bytes(p / "pickle.pt", pickle.dumps(Foreign())), "refused for safety: the file would load .*Foreign"),
    (lambda p: write_bytes(p / "random.pt", bytes(range(256)) * 4), r"random.pt: not a model file \(a rescorer model is a PyTorch archive; this file begins"),
    (lambda p: write_bytes(p / "empty.pt", b""), r"empty.pt: not a model file \(a rescorer model is a PyTorch archive; this file is empty\)"),
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


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1, 0, "2"])
def test_unknown_format_versions_are_refused(tiny_model_path, tmp_path, version):
    payload = torch.load(tiny_model_path, weights_only=True)
    payload["format_version"] = version
    torch.save(payload, tmp_path / "future.pt")
    with pytest.raises(ModelFileError, match=f"model format version {version!r}, this rescorer .* reads "
                                             f"versions 1, 2$"):
        load_model(tmp_path / "future.pt")


def first_pairs(example_table, count=200):
    with PhraseTableReader(example_table) as reader:
        return [(entry.src, entry.tgt) for _, entry in zip(range(count), reader)]


def test_version_1_file_scores_as_0_1_0_did(example_table):
    assert torch.load(V1_MODEL, weights_only=True)["format_version"] == 1
    bundle = load_model(V1_MODEL)
    assert bundle.config.arch == "cho2014" and bundle.config.cell == "gru"
    assert bundle.subwords is None and bundle.src_encoding.units("the  lord") == ["the", "lord"]  # words
    want = np.loadtxt(DATA / "v1-scores.txt")  # 0.1.0's scores of these pairs
    np.testing.assert_allclose(score_pairs(bundle, first_pairs(example_table), device="cpu"), want,
                               atol=1e-4, rtol=0)


def test_version_1_file_is_upgraded_and_saved_as_version_2(tmp_path, example_table):
    payload = read_model_file(V1_MODEL)
    assert payload["format_version"] == 2 and payload["upgraded_from"] == 1
    assert "encoder.forward_layers.0.input_proj.weight" in payload["weights"]
    assert not any(name.startswith("encoder.input_proj") for name in payload["weights"])
    save_model(load_model(V1_MODEL), tmp_path / "v2.pt")
    assert torch.load(tmp_path / "v2.pt", weights_only=True)["format_version"] == 2
    pairs = first_pairs(example_table, 50)
    np.testing.assert_array_equal(score_pairs(load_model(tmp_path / "v2.pt"), pairs, device="cpu"),
                                  score_pairs(load_model(V1_MODEL), pairs, device="cpu"))


def test_training_cho2014_gives_the_weights_0_1_0_gave(example_table, tmp_path, monkeypatch):
    """The same settings and seed as the version-1 file: the same weights (same init order,
    same batches, same arithmetic)."""
    from rescorer.models.registry import get_architecture
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.resume import effective_settings
    from rescorer.training.trainer import TrainSettings

    old = read_model_file(V1_MODEL)
    config = old["config"]
    sizes = {k: config[k] for k in ("embed_dim", "embed_rank", "hidden_size", "maxout_units", "output_rank")}
    monkeypatch.setitem(get_architecture("cho2014").presets, "tiny", {**sizes, "shortlist_size": config["src_vocab_size"] - 3})
    # read as a resume reads it: a 0.1.0 file drew 64 random pairs, with no length bound
    settings = TrainSettings(**effective_settings(old["training"]["settings"]))
    train_on_table(example_table, tmp_path / "new.pt", preset="tiny", settings=settings)
    new = read_model_file(tmp_path / "new.pt")
    assert new["src_vocab"] == old["src_vocab"] and sorted(new["weights"]) == sorted(old["weights"])
    for name, weight in old["weights"].items():
        torch.testing.assert_close(new["weights"][name], weight, atol=1e-5, rtol=0, msg=name)


@pytest.mark.parametrize("arch, settings", [("rnnsearch", {"cell": "lstm"}),
                                            ("luong", {"attention": "local-p", "bidirectional": True}),
                                            ("transformer", {}), ("cho2014", {"dropout": 0.3})])
def test_every_architecture_saves_and_loads_with_its_settings(tmp_path, arch, settings):
    vocab = Vocabulary(["[PAD]", "[UNK]", "[EOS]"] + [f"w{i}" for i in range(20)])
    config = ModelSettings.make(arch, "tiny", **settings).config(len(vocab), len(vocab))
    torch.manual_seed(0)
    bundle = ModelBundle(build_model(config).eval(), vocab, vocab)
    save_model(bundle, tmp_path / "m.pt")
    loaded = load_model(tmp_path / "m.pt")
    assert loaded.config == config and type(loaded.model) is type(bundle.model)
    if arch == "transformer":  # still one matrix, not two copies
        assert loaded.model.output_left.weight is loaded.model.tgt_embed.table.weight
    pairs = [("w1 w2 w3", "w4 w5"), ("w6", "w7 w8 w9 w10")]
    np.testing.assert_array_equal(score_pairs(loaded, pairs, device="cpu"), score_pairs(bundle, pairs, device="cpu"))


def test_a_config_naming_an_unknown_architecture_is_refused(tiny_model_path, tmp_path):
    payload = torch.load(tiny_model_path, weights_only=True)
    payload["config"]["arch"] = "gpt"
    torch.save(payload, tmp_path / "other.pt")
    with pytest.raises(ModelFileError, match="other.pt: model file does not match its own config "
                                             r"\(unknown architecture 'gpt'; valid: cho2014, rnnsearch, luong, "
                                             r"transformer\)"):
        load_model(tmp_path / "other.pt")


def test_weights_that_do_not_fit_the_config_are_refused(tiny_model_path, tmp_path):
    payload = torch.load(tiny_model_path, weights_only=True)
    payload["config"]["hidden_size"] = 64
    torch.save(payload, tmp_path / "mismatch.pt")
    with pytest.raises(ModelFileError, match="does not match"):
        load_model(tmp_path / "mismatch.pt")


def test_a_config_its_weights_do_not_fit_is_refused_before_building(tiny_model_path, tmp_path, monkeypatch):
    """hidden_size 6000 over 48-wide weights: refused from shapes alone, never built for real."""
    import rescorer.models.model_files as model_files

    payload = torch.load(tiny_model_path, weights_only=True)
    width = payload["config"]["hidden_size"]
    payload["config"]["hidden_size"] = 6000
    torch.save(payload, tmp_path / "lie.pt")
    built = []
    real_build = model_files.build_model
    monkeypatch.setattr(model_files, "build_model",
                        lambda config: built.append(torch.empty(0).device.type) or real_build(config))
    with pytest.raises(ModelFileError, match=rf"lie.pt: model file does not match its own config \(\S+: "
                                             rf"shape \[{width}\] in the file, shape \[6000\] by the config\)"):
        load_model(tmp_path / "lie.pt")
    assert built == ["meta"]  # only the skeleton, on the meta device


def test_subword_models_are_stored_in_the_model_file_and_read_back(subword_bundle, tmp_path):
    save_model(subword_bundle, tmp_path / "m.pt")
    stored = torch.load(tmp_path / "m.pt", weights_only=True)["subwords"]  # plain data: bytes and text
    assert stored["source"]["sentencepiece"] == subword_bundle.subwords.source.proto
    assert stored["target"] == {"kind": "unigram", "sentencepiece": subword_bundle.subwords.target.proto}
    loaded = load_model(tmp_path / "m.pt")
    assert loaded.subwords == subword_bundle.subwords
    assert loaded.tgt_encoding.units("le seigneur") == subword_bundle.subwords.target.segment("le seigneur")
    pairs = [("the lord said", "l' éternel dit"), ("zzz unknown", "qqq inconnu")]
    np.testing.assert_array_equal(score_pairs(loaded, pairs, device="cpu"),
                                  score_pairs(subword_bundle, pairs, device="cpu"))


def test_a_word_model_file_has_no_subword_models(tiny_model_path):
    assert "subwords" not in torch.load(tiny_model_path, weights_only=True)
    bundle = load_model(tiny_model_path)
    assert bundle.subwords is None and bundle.tgt_encoding.encode("l' éternel") == \
        bundle.tgt_vocab.encode(["l'", "éternel"])


@pytest.mark.parametrize("damage, message", [
    (lambda stored: stored["target"].update(sentencepiece=b"not a model"), "its subword models cannot be read"),
    (lambda stored: stored.update(target=stored["source"]), "its target vocabulary is not its target subword "
                                                            "model's pieces"),
])
def test_subword_models_that_do_not_fit_the_file_are_refused(subword_bundle, tmp_path, damage, message):
    save_model(subword_bundle, tmp_path / "m.pt")
    payload = torch.load(tmp_path / "m.pt", weights_only=True)
    damage(payload["subwords"])
    torch.save(payload, tmp_path / "bad.pt")
    with pytest.raises(ModelFileError, match=f"bad.pt: {message}"):
        load_model(tmp_path / "bad.pt")
