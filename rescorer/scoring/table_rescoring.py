"""Streaming a phrase table through models and writing it back with the new score column(s).

A three-stage pipeline hides the CPU-side work behind the models: a reader thread parses and
encodes the next chunk, the main thread scores the current one (PyTorch releases the GIL inside
its kernels), and a writer thread formats and compresses the previous one.

Several models score in one pass: one column per model, in the order given, then the word
penalty when asked for. The word penalty counts target words outside the FIRST model's
shortlist (`RescoreSummary.shortlists_differ` says when the models' target shortlists differ,
so that the count would depend on the order).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

from rescorer.counts import counted
from rescorer.data.directions import oriented
from rescorer.errors import RescorerError
from rescorer.io.atomic_output import AtomicOutput, committed_together
from rescorer.io.path_checks import is_stream
from rescorer.io.score_format import MAX_COUNT
from rescorer.io.table_reader import PhraseTableReader
from rescorer.models.model_files import ModelBundle
from rescorer.runtime.distributed import SINGLE, Ranks
from rescorer.runtime.failure_reports import ending
from rescorer.runtime.progress import Progress, no_progress
from rescorer.scoring.batch_scoring import default_token_budget
from rescorer.scoring.chunk_encoding import encode_chunks
from rescorer.scoring.chunks import (ScoreTotals, ScoringModels, chunk_lines, in_background,
                                     long_lived_objects_frozen, output_columns, score_chunk, word_penalty)
from rescorer.scoring.settings import ScoreSettings


@dataclass
class RescoreSummary:
    lines_read: int
    lines_written: int
    lines_rejected: int
    mean_log_probs: list  # one per model, in column order
    src_coverages: list  # shortlist coverage of running words, one per model
    tgt_coverages: list
    seconds: float
    shortlists_differ: bool = False  # the models' target shortlists are not all the same
    unk_capped: int = 0  # lines whose word-penalty count was capped at unk_cap
    unk_cap: int = MAX_COUNT
    resumed_lines: int = 0  # lines of units an interrupted run had finished (--resume)
    resumed_written: int = 0

    @property
    def mean_log_prob(self) -> float:
        return self.mean_log_probs[0]

    @property
    def src_coverage(self) -> float:
        return self.src_coverages[0]

    @property
    def tgt_coverage(self) -> float:
        return self.tgt_coverages[0]

    @property
    def pairs_per_second(self) -> float:
        scored = self.lines_written - self.resumed_written  # by this run
        return scored / self.seconds if self.seconds > 0 else 0.0

    def report(self, names: Sequence[str], reject_path: Optional[Path], unk_penalty: bool,
               output: Path) -> str:
        """The one-line summary of a run; `names` names the models (a mean log p for each)."""
        rejected = f", {self.lines_rejected} rejected to {reject_path}" if self.lines_rejected else ""
        if self.unk_capped:
            rejected += (f"; {counted(self.unk_capped, 'line')} with more than {self.unk_cap} unknown target "
                         f"words got the word penalty exp({self.unk_cap})")
        if len(names) == 1:
            means = f"{self.mean_log_prob:.3f}"
        else:
            means = ", ".join(f"{name} {mean:.3f}" for name, mean in zip(names, self.mean_log_probs))
        if len(set(zip(self.src_coverages, self.tgt_coverages))) == 1:
            coverage = f"{self.src_coverage:.1%} source, {self.tgt_coverage:.1%} target tokens"
        else:
            coverage = ", ".join(f"{name} {src:.1%} source, {tgt:.1%} target tokens" for name, src, tgt
                                 in zip(names, self.src_coverages, self.tgt_coverages))
        penalty = (f"; the word penalty counts words outside {names[0]}'s target shortlist (the "
                   f"models' shortlists differ)" if unk_penalty and self.shortlists_differ else "")
        if self.resumed_lines:
            rejected += (f"; {counted(self.resumed_lines, 'line')} {'was' if self.resumed_lines == 1 else 'were'} done "
                         f"by the interrupted run")
        return (f"lines in {self.lines_read}, out {self.lines_written}{rejected}; "
                f"mean log p {means}; shortlist coverage {coverage}{penalty}; "
                f"{self.seconds:.1f} s, {self.pairs_per_second:.0f} pairs/s; wrote {output}")


def rescore_table(table_path: Path, output_path: Path,
                  bundles: Union[ModelBundle, Sequence[ModelBundle]],
                  settings: ScoreSettings = ScoreSettings(), *, progress: Progress = no_progress,
                  ranks: Ranks = SINGLE, model_names: Optional[Sequence[str]] = None) -> RescoreSummary:
    """Write `table_path` to `output_path` with each model's log p(tgt | src) appended to every
    line's scores, in the order of `bundles` (one bundle or several).

    Nothing appears at `output_path` unless every line was read, scored and written (a FIFO, a
    device or '-' is streamed into). Bad lines go to `reject_path`, which follows the output's
    rules and appears only if a line was rejected (`settings.reject_path`); without it the first bad line is an error.
    Word-penalty counts above MAX_COUNT are written as exp(MAX_COUNT), counted in `unk_capped`.
    An interrupt (KeyboardInterrupt) leaves with `.note` saying what reached the output.

    A regular output file is written in units of `unit_lines` lines, kept beside it until the
    end (`rescorer.io.unit_journal`), so that `settings.resume` continues a killed run; with several
    `ranks` (torchrun), each scores its share of the units and rank 0 assembles the output.
    A stream (stdin, stdout, a FIFO) is read and written in one pass, as it comes.
    """
    bundles = [bundles] if isinstance(bundles, ModelBundle) else list(bundles)
    if not bundles:
        raise RescorerError("no model to score with")
    models = ScoringModels.of(bundles, model_names)
    streamed = is_stream(Path(table_path)) or is_stream(Path(output_path))
    if streamed and (settings.resume or ranks.is_distributed):
        what = "--resume" if settings.resume else "scoring on several ranks"
        raise RescorerError(f"{what} needs a regular file as the table and as the output (units "
                            f"are kept beside it), not stdin, stdout, a FIFO or a device")
    if streamed:
        return _rescore_stream(table_path, output_path, models, settings, progress)
    from rescorer.scoring.host_pipeline import default_host_workers
    from rescorer.scoring.units import rescore_in_units

    device = next(bundles[0].model.parameters()).device
    settings = settings.with_token_budget(default_token_budget(device))
    settings = settings.with_host_workers(default_host_workers(device.type))
    records, finished, seconds = rescore_in_units(Path(table_path), Path(output_path), models, settings,
                                                  device.type, ranks=ranks, progress=progress)
    return _summary_of_units(records, finished, seconds, models)


def _summary_of_units(records: Optional[dict], finished: Sequence[int], seconds: float,
                      models: ScoringModels) -> Optional[RescoreSummary]:
    """The run's summary from its units' records, summed in unit order (None off rank 0)."""
    if records is None:
        return None
    ordered = [records[unit] for unit in sorted(records)]
    totals = ScoreTotals(
        **{key: sum(record[key] for record in ordered)
           for key in ("lines_read", "lines_written", "lines_rejected", "src_tokens", "tgt_tokens", "capped")},
        logp_sums=[sum(record["logp_sums"][model] for record in ordered) for model in range(len(models.bundles))],
        unknown_src=[sum(record["unknown_src"][i] for record in ordered) for i in range(len(models.vocabularies))],
        unknown_tgt=[sum(record["unknown_tgt"][i] for record in ordered) for i in range(len(models.vocabularies))])
    return _summary(totals, seconds, models,
                    resumed_lines=sum(records[unit]["lines_read"] for unit in finished),
                    resumed_written=sum(records[unit]["lines_written"] for unit in finished))


def _summary(totals: ScoreTotals, seconds: float, models: ScoringModels, **resumed) -> RescoreSummary:
    """Means and coverages from the run's totals (lists empty when no line was scored)."""
    vocabularies, vocab_index = models.vocabularies, models.vocab_index
    written, src_tokens, tgt_tokens = totals.lines_written, totals.src_tokens, totals.tgt_tokens
    logp_sums = totals.logp_sums or [0.0] * len(vocab_index)
    unknown_src = totals.unknown_src or [0] * len(vocabularies)
    unknown_tgt = totals.unknown_tgt or [0] * len(vocabularies)
    table_targets = [oriented(src, tgt, direction)[1] for src, tgt, direction in vocabularies]
    differ = any(vocab != table_targets[0] for vocab in table_targets[1:])
    return RescoreSummary(
        totals.lines_read, written, totals.lines_rejected,
        [value / written if written else float("nan") for value in logp_sums],
        [1 - unknown_src[i] / src_tokens if src_tokens else 1.0 for i in vocab_index],
        [1 - unknown_tgt[i] / tgt_tokens if tgt_tokens else 1.0 for i in vocab_index],
        seconds, differ, totals.capped, **resumed)


def _rescore_stream(table_path, output_path, models: ScoringModels, settings: ScoreSettings,
                    progress) -> RescoreSummary:
    """The one-pass path for a stream: read, score and write as the lines come."""
    bundles, vocabularies, vocab_index = models.bundles, models.vocabularies, models.vocab_index
    s, format_scores = settings, settings.format_scores()
    force, reject_path = s.force, s.reject_path
    started = time.perf_counter()
    totals = ScoreTotals()
    output = AtomicOutput(output_path, force=force, input_path=table_path)
    rejects = (AtomicOutput(reject_path, force=force, input_path=table_path, only_if_written=True)
               if reject_path is not None else None)
    try:
        with PhraseTableReader(table_path, reject_path=rejects) as reader, long_lived_objects_frozen(), \
                committed_together(output, rejects, on_committed=ending), ThreadPoolExecutor(max_workers=1) as writer:
            pending = None
            for chunk in in_background(encode_chunks(reader, vocabularies, s.chunk_size)):
                logps = score_chunk(chunk, bundles, vocab_index, s.token_budget, s.precision, table_path)
                if pending is not None:
                    pending.result()
                penalty = word_penalty(chunk, vocab_index, s.unk_penalty)
                columns = output_columns(chunk, logps, vocab_index, s.ensemble, s.per_word)
                pending = writer.submit(output.write_lines, chunk_lines(chunk.entries, columns, format_scores, penalty))
                totals.add(chunk, logps, penalty)
                progress(len(chunk.entries))
            if pending is not None:
                pending.result()
            totals.lines_read, totals.lines_rejected = reader.lines_read, reader.lines_rejected
            written = output.lines_written
            if written + totals.lines_rejected != totals.lines_read:
                raise RescorerError(f"{table_path}: read {counted(totals.lines_read, 'line')} but wrote {written} and "
                                    f"rejected {totals.lines_rejected}; output discarded")
    except KeyboardInterrupt as interrupt:
        interrupt.note = (f"{output.lines_flushed} whole lines had already been written to {output_path}"
                          if output.is_stream else
                          f"no output was written ({output_path} is as it was)")
        raise
    # the output is complete once renamed: `ending` ran before any signal was let in after the
    # rename, so a signal now would only cut short the report
    return _summary(totals, time.perf_counter() - started, models)
