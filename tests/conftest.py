"""Shared fixtures. The real data lives in ../shared beside the repository root."""

from pathlib import Path

import pytest
import torch

from tests.helpers import EXAMPLE_TABLE, SHARED

# Test models are tiny: one thread is as fast, repeatable, and immune to a busy machine.
torch.set_num_threads(1)



@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The bible-en-fr Moses data (phrase tables, moses.ini); skips the test when it is absent."""
    path = SHARED / "data" / "bible-en-fr"
    if not path.is_dir():
        pytest.skip(f"real data not found at {path} (needs ../shared beside the repository)")
    return path


@pytest.fixture(scope="session")
def example_table() -> Path:
    """The bundled 4,000-line slice of the real bible-en-fr phrase table."""
    return EXAMPLE_TABLE


@pytest.fixture(scope="session")
def tiny_model_path(tmp_path_factory, example_table) -> Path:
    """A tiny model trained briefly (seeded) on the example table: saved once per test session."""
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.trainer import TrainSettings

    model_path = tmp_path_factory.mktemp("model") / "tiny.pt"
    settings = TrainSettings(max_updates=60, valid_every=30, valid_pairs=200, seed=3)
    train_on_table(example_table, model_path, preset="tiny", settings=settings)
    return model_path


@pytest.fixture()
def tiny_bundle(tiny_model_path):
    from rescorer.models.model_files import load_model

    return load_model(tiny_model_path)


@pytest.fixture(scope="session")
def subword_bundle(example_table):
    """A tiny model (random weights) over the pieces of subword models learned on the example
    table's two sides: BPE on the source, unigram on the target."""
    from rescorer.data.subwords import SubwordSides, learn_subwords
    from rescorer.io.table_reader import PhraseTableReader
    from rescorer.models import ModelSettings, build_model
    from rescorer.models.model_files import ModelBundle

    with PhraseTableReader(example_table) as reader:
        pairs = [(entry.src, entry.tgt) for entry in reader]
    subwords = SubwordSides(learn_subwords([src for src, _ in pairs], 400),
                            learn_subwords([tgt for _, tgt in pairs], 450, "unigram"))
    src_vocab, tgt_vocab = subwords.source.vocabulary(), subwords.target.vocabulary()
    torch.manual_seed(0)
    model = build_model(ModelSettings.make("rnnsearch", "tiny").config(len(src_vocab), len(tgt_vocab)))
    return ModelBundle(model.eval(), src_vocab, tgt_vocab, subwords=subwords)


@pytest.fixture(params=["isal", "zlib"])
def gzip_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with python-isal (when installed) and with the standard-library fallback."""
    from rescorer.io import gzip_io

    if request.param == "isal":
        if gzip_io._igzip is None:
            pytest.skip("python-isal is not installed")
    else:
        monkeypatch.setattr(gzip_io, "_igzip", None)
    assert gzip_io.gzip_backend() == request.param
    return request.param
