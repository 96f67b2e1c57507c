"""What one `rescore train` run is asked for (TrainJob), and what it will really use once its
model kind has read it (TrainingPlan): the records that pass between the job
(rescorer.training.job) and the model kinds (rescorer.training.pair_job: phrase tables and
parallel corpora; rescorer.training.lm_job: the CSLM's text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from rescorer.io.table_reader import RejectSink
from rescorer.models.settings import ModelOptions
from rescorer.runtime.settings import RuntimeSettings
from rescorer.training.settings import LmSettings, TrainSettings

__all__ = ["TrainJob", "TrainingPlan"]


@dataclass(frozen=True)
class TrainJob:
    """Everything one training run is asked for, for every model kind."""

    source: Any  # a phrase table or a parallel corpus (rescorer.data.pair_sources), or an LM's text (lm_job.LmText)
    model_path: Path
    model_options: ModelOptions  # as given (None where not given; an LM takes its preset and dropout)
    settings: TrainSettings
    runtime: RuntimeSettings
    explicit: frozenset = frozenset()  # names given on the command line: under --resume the others
    reject: Optional[RejectSink] = None  # are the checkpoint's
    resume_hint: str = ""  # how to continue after an interrupt ("": `rescore train SOURCE -o MODEL --resume`)
    # what the model is trained for (rescorer.models.precision): `rescore run` trains the model it
    # then scores, so its --precision int8 trains in fp32
    precision_use: str = "train"
    lm_settings: Optional[LmSettings] = None  # the CSLM's own (--lm)


@dataclass
class TrainingPlan:
    """What a job's model kind will train with: under --resume, what the command line left at its
    defaults is the checkpoint's."""

    settings: TrainSettings
    model: Any  # the kind's own: ModelSettings, or lm_job.LmModel
    payload: Optional[dict]  # the checkpoint resumed, read once
    signature_name: str  # the settings line's job ("train", "train-lm") and its fields before the device
    signature: dict = field(default_factory=dict)
    recorded_options: Optional[dict] = None  # the model options as given, for the model file
