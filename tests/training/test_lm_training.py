"""Training the CSLM (`rescore train --lm`): the same seed gives the same model bit for bit, a
resumed run the model of an uninterrupted one, and self-normalization pulls log Z to 0."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rescorer.errors import RescorerError
from rescorer.models.lm_files import load_lm
from rescorer.training.lm_pipeline import train_lm
from rescorer.training.lm_settings import LmSettings
from rescorer.training.settings import TrainSettings
from tests.helpers import SHARED

CORPUS = SHARED / "data" / "bible-en-fr" / "corpus" / "dev.fr.gz"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """200 verses of the bench's French (gzipped), or a small stand-in where the bench is absent."""
    import gzip

    path = tmp_path_factory.mktemp("lm") / "text.fr.gz"
    if CORPUS.is_file():
        with gzip.open(CORPUS, "rb") as handle:
            lines = [next(handle) for _ in range(200)]
    else:
        lines = [f"le {w} de la terre et {w} du ciel .\n".encode() for w in ("fils", "roi", "dieu") * 60]
    path.write_bytes(gzip.compress(b"".join(lines), mtime=0))
    return path


def settings(**changes) -> TrainSettings:
    values = dict(batch_size=32, max_updates=12, valid_every=4, valid_pairs=10, checkpoint_every=4, seed=5)
    return TrainSettings(**{**values, **changes})


def weights(path: Path) -> dict:
    return load_lm(path).model.state_dict()


def same(left: dict, right: dict) -> bool:
    return left.keys() == right.keys() and all(torch.equal(left[k], right[k]) for k in left)


def test_the_same_seed_gives_the_same_model_bit_for_bit(corpus, tmp_path):
    for name in ("a.pt", "b.pt"):
        train_lm(corpus, tmp_path / name, preset="tiny", settings=settings())
    train_lm(corpus, tmp_path / "c.pt", preset="tiny", settings=settings(seed=6))
    assert same(weights(tmp_path / "a.pt"), weights(tmp_path / "b.pt"))
    assert not same(weights(tmp_path / "a.pt"), weights(tmp_path / "c.pt"))


def test_a_resumed_run_gives_the_model_of_an_uninterrupted_one(corpus, tmp_path):
    whole = train_lm(corpus, tmp_path / "whole.pt", preset="tiny", settings=settings())
    train_lm(corpus, tmp_path / "parts.pt", preset="tiny", settings=settings(max_updates=8))
    resumed = train_lm(corpus, tmp_path / "parts.pt", preset="tiny", settings=settings(resume=True))
    assert resumed.state.updates == whole.state.updates == 12
    assert resumed.state.best_valid_ppl == whole.state.best_valid_ppl
    assert same(weights(tmp_path / "whole.pt"), weights(tmp_path / "parts.pt"))


def test_resume_refuses_another_order_or_penalty_in_one_line(corpus, tmp_path):
    train_lm(corpus, tmp_path / "m.pt", preset="tiny", settings=settings(max_updates=4))
    with pytest.raises(RescorerError) as refused:
        train_lm(corpus, tmp_path / "m.pt", preset="tiny", settings=settings(resume=True),
                 lm_settings=LmSettings(order=5, log_z_penalty=0.5))
    message = str(refused.value)
    assert "\n" not in message and "model order 7 (checkpoint) vs 5 (now)" in message
    assert "log-z-penalty 0.1 (checkpoint) vs 0.5 (now)" in message and "--max-time" in message


def test_the_log_partition_penalty_brings_log_z_towards_zero(corpus, tmp_path):
    """Uniform init gives log Z = log |V| (the scores are about 0): the penalty pulls it down."""
    runs = {alpha: train_lm(corpus, tmp_path / f"{alpha}.pt", preset="tiny",
                            settings=settings(max_updates=60, valid_every=60, learning_rate=0.01),
                            lm_settings=LmSettings(log_z_penalty=alpha))
            for alpha in (0.0, 1.0)}
    assert runs[1.0].held_out.mean_abs_log_z < 0.5 * runs[0.0].held_out.mean_abs_log_z
