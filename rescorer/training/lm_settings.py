"""How the CSLM (`rescore train --lm`) is trained beyond what every model shares
(rescorer.training.settings.TrainSettings): its order and its self-normalization. Torch-free,
like the other records, so that the command line builds its options without loading torch."""

from __future__ import annotations

from dataclasses import dataclass

from rescorer.records import NONNEGATIVE_FLOAT, Kind, check_record, setting, stored

__all__ = ["LmSettings", "LM_SETTINGS_FORMAT", "DEFAULT_LOG_Z_PENALTY", "LM_TRAIN_DEFAULTS"]

LM_SETTINGS_FORMAT = 1
# alpha of the log-partition penalty alpha * (log Z)^2 (Devlin et al. 2014, who used 0.1): it
# keeps log Z near 0 so that an exported model's unnormalized scores are log-probabilities
# (NPLM, Moses' NeuralLM) at little cost in perplexity: benchmarks/RESULTS.md, "CSLM".
DEFAULT_LOG_Z_PENALTY = 0.1
# TrainSettings defaults that differ for the LM when not given: n-grams per update (random, as
# the CSLM toolkit draws them), Adam's learning rate, held-out sentences (about 29,000 words on
# the Bible: perplexity to about 1%), and updates between validations (about 128,000 n-grams).
# The learning rate: held-out perplexity after 400 updates of the small preset on train.fr was
# 302 at 1e-3, 197 at 3e-3, 165 at 1e-2, 231 at 2e-2 (benchmarks/RESULTS.md, "CSLM").
LM_TRAIN_DEFAULTS = {"batch_size": 256, "learning_rate": 0.01, "valid_pairs": 1000, "valid_every": 500}


@dataclass(frozen=True)
class LmSettings:
    """The CSLM's own training settings (with --lm)."""

    order: int = setting(7, Kind("int", minimum=2),
                         "With --lm: the n of the n-gram model, n-1 words of context (Cho et al.: 7).",
                         option="--order")
    log_z_penalty: float = setting(
        DEFAULT_LOG_Z_PENALTY, NONNEGATIVE_FLOAT,
        "With --lm: alpha of the self-normalization penalty alpha * (log Z)^2 added to the loss (Devlin et "
        "al. 2014), so that the model's unnormalized scores are log-probabilities (the NPLM export); 0: "
        "none.", option="--log-z-penalty")

    def __post_init__(self) -> None:
        check_record(self)

    def stored(self) -> dict:
        return stored(self, LM_SETTINGS_FORMAT)
