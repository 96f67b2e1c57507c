"""How a table is scored and written, in one record, as TrainSettings is for training: what
`rescore score` takes besides the table, the output and the models."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from rescorer.errors import RescorerError
from rescorer.io.score_format import SCORE_FORMATS, format_log_scores, format_moses_scores
from rescorer.io.unit_journal import DEFAULT_UNIT_LINES

__all__ = ["ScoreSettings"]


@dataclass(frozen=True)
class ScoreSettings:
    score_format: str = "prob"  # prob: exp(log p), for Moses, which takes logs; log: raw log p
    unk_penalty: bool = False  # also append the count of target words outside the shortlist
    ensemble: bool = False  # one column for all the models: their mixture log((p_1 + ... + p_n) / n)
    per_word: bool = False  # append each log p column again, divided by its target's word count
    chunk_size: int = 20000  # lines read, sorted and scored together
    token_budget: Optional[int] = None  # padded tokens per batch; None: the device's default
    unit_lines: int = DEFAULT_UNIT_LINES  # lines per unit of a resumable run
    precision: str = "fp32"
    force: bool = False  # replace an existing output and reject file
    resume: bool = False  # continue from the units an interrupted run finished
    reject_path: Optional[Path] = None  # bad lines go here; without it the first is an error
    models_retrained: bool = False  # `rescore TABLE --resume` trained on: older units are redone

    def __post_init__(self) -> None:
        if self.score_format not in SCORE_FORMATS:
            raise RescorerError(f"unknown score format {self.score_format!r}; valid: "
                                f"{', '.join(SCORE_FORMATS)}")

    def format_scores(self) -> Callable:
        """The function that writes a column of log p as this format asks."""
        return format_moses_scores if self.score_format == "prob" else format_log_scores

    def with_token_budget(self, default: int) -> "ScoreSettings":
        """These settings with the device's default budget filled in when none was given."""
        return dataclasses.replace(self, token_budget=self.token_budget or default)

    def unit_record(self, device_type: str) -> dict:
        """What a resumable run records, so that a resume with other settings is refused. The
        reject file is one of them: the finished units hold their rejected lines for it, and a
        resume without it would drop them."""
        return {"unit_lines": self.unit_lines, "score_format": self.score_format,
                "unk_penalty": self.unk_penalty, "chunk_size": self.chunk_size,
                **({"ensemble": True} if self.ensemble else {}),  # absent: the bytes of a run before
                **({"per_word": True} if self.per_word else {}),
                "token_budget": self.token_budget, "precision": self.precision,
                "device": device_type,
                "reject": None if self.reject_path is None else str(Path(self.reject_path).resolve())}
