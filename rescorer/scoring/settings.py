"""How a table is scored and written, in one record, as TrainSettings is for training: what
`rescore score` takes besides the table, the output, the models and where it runs. Its fields
declare their options (rescorer/cli/record_options.py builds them) and what a resumable run
records (`unit_record`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from rescorer.io.score_format import SCORE_FORMATS, format_log_scores, format_moses_scores
from rescorer.io.unit_journal import DEFAULT_UNIT_LINES
from rescorer.records import (COUNT, FILE_TO_WRITE, FLAG, NONNEGATIVE_FLOAT, NOT_RECORDED, POSITIVE_FLOAT,
                              POSITIVE_INT, TEXT, Kind, SettingError, check_record, choice, recorded_values,
                              setting, settings_of)

__all__ = ["ScoreSettings", "TranslateSettings", "MAX_BEAM"]

# A beam keeps K hypotheses x the target shortlist of scores per sentence and step, so K is bounded
# where that memory is still small next to the model's (`generate` takes the same bound).
MAX_BEAM = 1000


@dataclass(frozen=True)
class ScoreSettings:
    unk_penalty: bool = setting(False, FLAG, "Also append the count of target words outside the shortlist "
                                             "(as exp(count)).", option="--unk-penalty/--no-unk-penalty")
    ensemble: bool = setting(False, FLAG, "One column for all the --model models: their mixture "
                                          "log((p1 + ... + pn) / n).",
                             option="--ensemble", show_default=False)
    per_word: bool = setting(False, FLAG, "After the log p columns, append each divided by its target "
                                          "phrase's word count (of the log p before Moses' floor of -100, "
                                          "which each column gets on its own).",
                             option="--per-word", show_default=False)
    score_format: str = setting("prob", choice(*SCORE_FORMATS),
                                "prob: exp(log p) for Moses, which takes logs; log: raw log p.",
                                option="--score-format")
    # Bad lines go here; without it the first is an error. A resumable run records it: the
    # finished units hold their rejected lines for it, and a resume without it would drop them.
    reject_path: Optional[Path] = setting(
        None, FILE_TO_WRITE, "Write unparseable lines here verbatim and go on, instead of failing (created "
                             "only if a line is rejected).", option="--reject", show_default=False,
        legacy_names=("reject",))
    force: bool = setting(False, FLAG, "Replace an existing output and reject file.",
                          option="--force/--no-force", show_default=False, resume=NOT_RECORDED, signature=False)
    chunk_size: int = setting(20000, POSITIVE_INT, "Lines read, sorted and scored together.",
                              option="--chunk-size")
    token_budget: Optional[int] = setting(
        None, POSITIVE_INT, "Padded tokens per scoring batch [default: 6000 on the CPU, 131072 on CUDA].",
        option="--token-budget", show_default=False)
    host_workers: Optional[int] = setting(
        None, COUNT, "Processes that parse, encode and write the table beside the model (0: threads of the "
                     "model's process; a table read from or written to a stream always uses those) [default: "
                     "on CUDA, the cores per rank less 2; on the CPU, 0].",
        option="--host-workers", show_default=False, resume=NOT_RECORDED)
    unit_lines: int = setting(DEFAULT_UNIT_LINES, POSITIVE_INT,
                              "Lines per unit of work: a killed run redoes at most one unit (per rank) under "
                              "--resume; torchrun ranks share the units.", option="--unit-lines")
    resume: bool = setting(False, FLAG, "Continue an interrupted run from the units it finished (kept in "
                                        ".OUT.partial/).", option="--resume", show_default=False,
                           resume=NOT_RECORDED)
    precision: str = setting("fp32", TEXT)  # the resolved precision (RuntimeSettings holds the asked one)
    # `rescore TABLE --resume` trained on: older units are redone
    models_retrained: bool = setting(False, FLAG, resume=NOT_RECORDED, signature=False)

    def __post_init__(self) -> None:
        check_record(self)

    def format_scores(self) -> Callable:
        """The function that writes a column of log p as this format asks."""
        return format_moses_scores if self.score_format == "prob" else format_log_scores

    def with_token_budget(self, default: int) -> "ScoreSettings":
        """These settings with the device's default budget filled in when none was given."""
        return dataclasses.replace(self, token_budget=self.token_budget or default)

    def with_host_workers(self, default: int) -> "ScoreSettings":
        """These settings with the device's default number of host workers when none was given."""
        return dataclasses.replace(self, host_workers=default if self.host_workers is None else self.host_workers)

    def unit_record(self, device_type: str) -> dict:
        """What a resumable run records, so that a resume with other settings is refused: the
        recorded fields by name, paths resolved, and the device."""
        def journal_value(declared, value):
            return str(Path(value).resolve()) if declared.kind.base == "path" and value is not None else value

        return {**recorded_values(self, value=journal_value), "device": device_type}

    @classmethod
    def upgraded_journal(cls, recorded: dict) -> dict:
        """A unit journal of version 1 (settings under option names, `ensemble` and `per_word`
        left out when off) as version 2 records it, so that a run interrupted by an older
        rescorer resumes; a journal of another version is returned as it is."""
        if recorded.get("version") != 1:
            return recorded
        try:
            old = recorded["settings"]
            settings = {field.name: old.get(next((name for name in (field.name, *declared.legacy_names)
                                                   if name in old), field.name), field.default)
                        for field, declared in settings_of(cls) if declared.recorded}
            return {**recorded, "version": 2, "settings": {**settings, "device": old["device"]}}
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a unit journal's settings ({error!r})") from None


MAX_LENGTH_RATIO = 100.0


@dataclass(frozen=True)
class TranslateSettings:
    """How `rescore translate` searches: its beam search's settings (rescorer.scoring.translation)."""

    beam: int = setting(5, Kind("int", minimum=1, maximum=MAX_BEAM), "Beam size K (1: greedy).",
                        option="--beam")
    nbest_size: int = setting(1, POSITIVE_INT, "Hypotheses per sentence written to --nbest-out (at most --beam).",
                              option="--nbest-size")
    alpha: float = setting(0.6, NONNEGATIVE_FLOAT,
                           "alpha of Wu et al. (2016): hypotheses are ranked by log p / ((5 + |y|) / 6)^alpha; "
                           "0 ranks by log p, which prefers short outputs.", option="--length-penalty")
    batch_size: int = setting(32, POSITIVE_INT, "Sentences decoded together.", option="--batch-size")
    # a translation has at most length_ratio * source tokens + length_slack tokens (a subword
    # model's pieces, as the search counts them); None: the model file's, measured on its
    # training pairs (rescorer.data.length_caps), 2 and 10 in older files.
    # bounded: a translation 100 times its source's length is never one, and ratio * words must
    # stay a number of words (1e308 overflowed)
    length_ratio: Optional[float] = setting(
        None, dataclasses.replace(POSITIVE_FLOAT, maximum=MAX_LENGTH_RATIO),
        "A translation has at most ratio * source tokens + 10 tokens (a subword model's pieces) [default: "
        "a + b * source tokens as the model's training pairs gave it: the smallest b in 1.2, 1.5, 2 and "
        "a in 5, 10 covering 99.9% of them; 2 * source + 10 for models trained before].", option="--max-length-ratio", show_default=False)
    length_slack: Optional[int] = setting(None, COUNT)
    min_length: int = setting(1, POSITIVE_INT, "A translation has at least this many tokens (a subword model's "
                              "pieces) before [EOS] may end it; the --max-length-ratio bound wins where it is shorter.",
                              option="--min-length")

    def __post_init__(self) -> None:
        check_record(self)
        if self.nbest_size > self.beam:
            raise SettingError(f"--nbest-size {self.nbest_size} is more than the beam keeps (--beam {self.beam})")
