"""Training the CSLM (`rescore train --lm`): the same seed gives the same model bit for bit, a
resumed run the model of an uninterrupted one, and self-normalization pulls log Z to 0."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import torch

from rescorer.errors import RescorerError
from rescorer.models.lm_files import load_lm
from rescorer.training.lm_pipeline import train_lm
from rescorer.training.settings import LmSettings, TrainSettings
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


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_a_resumed_run_gives_the_model_of_an_uninterrupted_one(corpus, tmp_path, dropout):
    """With dropout too (the --lm default): the checkpoint keeps torch's random state, from which
    dropout draws; without it the resumed run drew other masks and ended with other weights."""
    whole = train_lm(corpus, tmp_path / "whole.pt", preset="tiny", settings=settings(), dropout=dropout)
    train_lm(corpus, tmp_path / "parts.pt", preset="tiny", settings=settings(max_updates=8), dropout=dropout)
    resumed = train_lm(corpus, tmp_path / "parts.pt", preset="tiny", settings=settings(resume=True),
                       dropout=dropout)
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


def test_dropout_is_kept_in_the_model_file_and_never_used_when_scoring(corpus, tmp_path):
    from rescorer.scoring.lm_scoring import sentence_log_probs

    plain = train_lm(corpus, tmp_path / "plain.pt", preset="tiny", settings=settings())
    train_lm(corpus, tmp_path / "dropped.pt", preset="tiny", settings=settings(), dropout=0.3)
    assert load_lm(tmp_path / "dropped.pt").config.dropout == 0.3 and plain.bundle.config.dropout == 0.0
    assert not same(weights(tmp_path / "plain.pt"), weights(tmp_path / "dropped.pt"))  # it trained otherwise
    model = load_lm(tmp_path / "dropped.pt")
    sentences = ["le fils de la terre .", "et du ciel"]
    first = sentence_log_probs(model, sentences)
    model.model.train()  # even a model left in training mode scores without dropout
    assert (sentence_log_probs(model, sentences) == first).all()
    contexts = torch.full((4, 6), 3)
    model.model.train()
    assert not torch.equal(model.model(contexts), model.model(contexts))  # training draws its masks
    with pytest.raises(RescorerError, match=r"model dropout 0\.3 \(checkpoint\) vs 0\.0 \(now\)"):
        train_lm(corpus, tmp_path / "dropped.pt", preset="tiny", settings=settings(resume=True, max_updates=16))


def test_lr_decay_scales_the_rate_on_each_validation_without_a_new_best(corpus, tmp_path):
    """With a learning rate so high that held-out perplexity stops improving, every validation
    that is no new best multiplies the rate by --lr-decay; the state keeps the product, so a
    resumed run goes on at the decayed rate."""
    decayed = settings(learning_rate=3.0, lr_decay=0.5, max_updates=24, patience=100)
    report = train_lm(corpus, tmp_path / "m.pt", preset="tiny", settings=decayed)
    state = report.state
    assert state.lr_scale < 1 and math.log2(state.lr_scale).is_integer()  # halved once per plateau
    constant = train_lm(corpus, tmp_path / "c.pt", preset="tiny",
                        settings=settings(learning_rate=3.0, max_updates=24, patience=100))
    assert constant.state.lr_scale == 1.0
    assert not same(weights(tmp_path / "m.pt"), weights(tmp_path / "c.pt"))  # the rate did change
    parts = settings(learning_rate=3.0, lr_decay=0.5, max_updates=12, patience=100)
    train_lm(corpus, tmp_path / "p.pt", preset="tiny", settings=parts)
    resumed = train_lm(corpus, tmp_path / "p.pt", preset="tiny", settings=dataclasses.replace(decayed, resume=True))
    assert resumed.state.lr_scale == state.lr_scale
    assert same(weights(tmp_path / "m.pt"), weights(tmp_path / "p.pt"))
