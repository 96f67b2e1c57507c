"""How the CSLM (`rescore train --lm`) is trained beyond what every model shares
(rescorer.training.settings.TrainSettings): its order and its self-normalization. Torch-free,
like the other records, so that the command line builds its options without loading torch."""

from __future__ import annotations

from dataclasses import dataclass

from rescorer.records import NONNEGATIVE_FLOAT, Kind, check_record, setting, stored

__all__ = ["LmSettings", "LM_SETTINGS_FORMAT", "DEFAULT_LOG_Z_PENALTY", "LM_TRAIN_DEFAULTS", "LM_DROPOUT"]

LM_SETTINGS_FORMAT = 1
# alpha of the log-partition penalty alpha * (log Z)^2 (Devlin et al. 2014, who used 0.1): it
# keeps log Z near 0 so that an exported model's unnormalized scores are log-probabilities
# (NPLM, Moses' NeuralLM) at little cost in perplexity: benchmarks/RESULTS.md, "CSLM".
DEFAULT_LOG_Z_PENALTY = 0.1
# TrainSettings defaults that differ for the LM when not given: n-grams per update (random, as
# the CSLM toolkit draws them), Adam's learning rate and its halving on each validation that is
# no new best, held-out sentences (about 29,000 words on the Bible: perplexity to about 1%),
# updates between validations (about 400,000 n-grams, half an epoch of train.fr) and patience.
# Chosen on the small preset and train.fr (benchmarks/RESULTS.md, "CSLM, part 2"): 1,024 n-grams
# at 5e-3, halved on plateaus, with dropout 0.2 (LM_DROPOUT), reached held-out perplexity 38.8 in
# 12 epochs, below the bench's 4-gram KenLM; the first recipe (256 at 1e-2, constant, no dropout)
# was at 82.8 after 1.3 epochs where this one was at 58.8.
LM_TRAIN_DEFAULTS = {"batch_size": 1024, "learning_rate": 5e-3, "lr_decay": 0.5, "valid_pairs": 1000,
                     "valid_every": 400, "patience": 6}
LM_DROPOUT = 0.2  # the network's dropout with --lm unless --dropout says otherwise

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
