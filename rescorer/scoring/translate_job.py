"""`rescore translate`'s job below the command line: one record in (TranslateJob), the settings
signature and the summary out through a reporter (as rescorer.scoring.job does for scoring):
the model loaded on its device, in the precision its use allows, and its beam search run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rescorer.counts import counted
from rescorer.records import signature_items
from rescorer.runtime.settings import RuntimeSettings
from rescorer.scoring.settings import TranslateSettings

__all__ = ["TranslateJob", "translate_job"]


@dataclass(frozen=True)
class TranslateJob:
    """Everything one translation run is asked for."""

    model_path: Path
    input_path: Path
    output: Path  # '-': stdout
    nbest_path: Optional[Path]  # also the n best as a Moses n-best list
    settings: TranslateSettings
    runtime: RuntimeSettings
    force: bool = False


def translate_job(job: TranslateJob, reporter) -> None:
    """Translate every line of the input with the model's batched beam search."""
    from rescorer.models.model_files import load_model
    from rescorer.models.precision import autocast, precision_for, quantized
    from rescorer.runtime.device import resolve_device
    from rescorer.scoring.translation import translate_file, with_length_cap

    device = resolve_device(job.runtime.device)
    bundle = load_model(job.model_path, device)
    precision = precision_for(job.runtime.precision, device.type, "translate")
    quantized(bundle.model, precision)
    settings = with_length_cap(bundle, job.settings)  # the signature shows the cap used
    reporter.signature("translate", model=f"{job.model_path.name}({bundle.config.arch})", direction=bundle.direction,
                       **signature_items(settings), device=device.type, precision=precision)
    with reporter.bar(desc="translating", unit=" sentences") as bar, autocast(device, precision):
        summary = translate_file(bundle, job.input_path, job.output, settings, device, job.nbest_path,
                                 force=job.force, progress=bar.update)
    if bundle.subwords is not None:
        read = (f"source read as {summary.source_pieces} subword pieces "
                f"({summary.source_pieces / max(summary.source_words, 1):.2f} per word)")
    else:
        read = f"{summary.unknown_source_words / max(summary.source_words, 1):.1%} of source words outside the shortlist"
    reporter.say(f"{job.output}: {counted(summary.sentences, 'line')} translated "
                 f"({counted(summary.empty, 'empty line')} left empty, "
                 f"{summary.forced_ends} stopped by the length bound); {read}"
                 + (f"; n-best list {job.nbest_path}" if job.nbest_path else ""))
