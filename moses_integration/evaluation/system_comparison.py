"""`moses evaluate`'s job: decode one test set with each tuned system, score every output
against all the references and test each system against the first (the baseline)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..ini.moses_install import MosesInstall
from ..line_files import read_lines
from .scores import EvalResult, compare, decode, evaluate_file, read_references

__all__ = ["EvaluationJob", "SystemScores", "evaluate_systems"]


@dataclass(frozen=True)
class EvaluationJob:
    """The systems as (name, moses.ini), baseline first, and the test set they decode."""

    systems: Sequence[tuple[str, Path]]
    src_path: Path
    ref_paths: Sequence[Path]
    out_dir: Path  # NAME.hyp and its log go here
    base_dir: Path  # what the inis' relative paths are relative to
    threads: int = 4
    decoder_flags: Sequence[str] = field(default_factory=tuple)
    detokenize_lang: Optional[str] = None
    test_type: str = "ar"


@dataclass
class SystemScores:
    results: dict  # name -> EvalResult
    p_values: dict  # name -> {"bleu": p, "chrf": p} for every system but the baseline

    def rows(self) -> list[str]:
        """The command's tab-separated table, header first."""
        lines = ["system\tBLEU\tchrF\tp_BLEU\tp_chrF"]
        for name, result in self.results.items():
            p = self.p_values.get(name, {})
            lines.append(f"{name}\t{result.bleu:.2f}\t{result.chrf:.2f}\t"
                         f"{p.get('bleu') if p.get('bleu') is not None else '-'}\t"
                         f"{p.get('chrf') if p.get('chrf') is not None else '-'}")
        return lines

    @property
    def signature(self) -> str:
        result: EvalResult = next(iter(self.results.values()))
        return result.bleu_signature


def evaluate_systems(job: EvaluationJob, install: MosesInstall) -> SystemScores:
    """Decode with each system in turn (its output NAME.hyp in job.out_dir), then compare."""
    hyps, results = [], {}
    for name, ini in job.systems:
        hyp = decode(install, Path(ini).resolve(), job.src_path, job.out_dir / f"{name}.hyp",
                     job.threads, job.base_dir, decoder_flags=job.decoder_flags)
        results[name] = evaluate_file(hyp, job.ref_paths, job.detokenize_lang)
        hyps.append((name, read_lines(hyp)))
    p_values = compare(hyps, read_references(job.ref_paths), job.test_type,
                       detokenize_lang=job.detokenize_lang) if len(hyps) > 1 else {}
    return SystemScores(results, p_values)
