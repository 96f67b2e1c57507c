"""How the CSLM (`rescore train --lm`) is trained beyond what every model shares
(rescorer.training.settings.TrainSettings): its order and its self-normalization. Its defaults
of the shared settings are a recipe (rescorer.training.recipes.LM_RECIPE). Torch-free,
like the other records, so that the command line builds its options without loading torch."""

from __future__ import annotations

from dataclasses import dataclass

from rescorer.records import NONNEGATIVE_FLOAT, Kind, check_record, setting, stored

__all__ = ["LmSettings", "LM_SETTINGS_FORMAT", "DEFAULT_LOG_Z_PENALTY"]

LM_SETTINGS_FORMAT = 1
# alpha of the log-partition penalty alpha * (log Z)^2 (Devlin et al. 2014, who used 0.1): it
# keeps log Z near 0 so that an exported model's unnormalized scores are log-probabilities
# (NPLM, Moses' NeuralLM) at little cost in perplexity: benchmarks/RESULTS.md, "CSLM".
DEFAULT_LOG_Z_PENALTY = 0.1


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
