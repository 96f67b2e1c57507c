"""Scoring a table unit by unit into its partial output, on one rank or many, then assembling it.

Each rank scores its units (`rescorer.io.table_units`) through a host pipeline
(`rescorer.scoring.host_pipeline`): a reader thread, or host worker processes, parse and encode
ahead, the main thread scores, a writer thread writes the unit's gzip member and, once it is
durable, the unit's record (`rescorer.io.unit_journal`). After each unit the ranks check in (`rescorer.runtime.distributed`), so a
failure on any rank stops them all within a unit. Rank 0 then concatenates the units in order
into the output and sums their records (in unit order, so the summary does not depend on the
number of ranks) into the run's summary.
"""

from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from rescorer.counts import counted
from rescorer.errors import PhraseTableFormatError, RescorerError
from rescorer.io.atomic_output import AtomicOutput, check_output_target
from rescorer.io.table_reader import no_good_line
from rescorer.io.table_units import TableUnits, UnitChunk
from rescorer.io.unit_journal import UnitJournal, UnitWriter, input_identity, model_identity
from rescorer.models.model_files import ModelBundle, weight_bytes
from rescorer.runtime.distributed import SINGLE, Ranks
from rescorer.runtime.failure_reports import ending, injected_fault
from rescorer.scoring.chunks import (ScoreTotals, ScoringModels, long_lived_objects_frozen, output_columns,
                                     score_chunk, word_penalty)
from rescorer.scoring.host_pipeline import host_pipeline
from rescorer.scoring.settings import ScoreSettings

__all__ = ["bundle_identity", "rescore_in_units", "recorded_precision"]


def bundle_identity(bundle: ModelBundle, name: str) -> dict:
    """The journal's identity of a model: its config, direction, vocabularies (and subword
    models: word models keep the identity they had) and weight bytes."""
    vocabularies = [bundle.src_vocab.tokens, bundle.tgt_vocab.tokens]
    if bundle.subwords is not None:
        vocabularies.append([hashlib.sha256(model.proto).hexdigest()
                             for model in (bundle.subwords.source, bundle.subwords.target)])
    return model_identity(name, bundle.config.identity_dict(), bundle.direction, vocabularies,
                          weight_bytes(bundle.model))


def recorded_precision(output_path: Path) -> Optional[str]:
    """The precision an interrupted run's units were scored in, as its journal records it
    (None: no partial run beside `output_path`, or a journal that records none)."""
    recorded = UnitJournal(output_path).recorded(ScoreSettings.upgraded_journal)
    settings = recorded.get("settings") if isinstance(recorded, dict) else None
    precision = settings.get("precision") if isinstance(settings, dict) else None
    return precision if isinstance(precision, str) else None


@dataclass
class UnitCounts(ScoreTotals):
    """A unit's record besides its place: the summary's terms for its lines, and its run."""

    run: str = ""


def rescore_in_units(table_path: Path, output_path: Path, models: ScoringModels, settings: ScoreSettings,
                     device_type: str, *, ranks: Ranks = SINGLE, progress=lambda lines: None):
    """Score `table_path` into `output_path` through its partial directory; returns
    (the records of every unit in order, the units finished by an earlier run, seconds)."""
    force, reject_path = settings.force, settings.reject_path
    started = time.perf_counter()
    journal = UnitJournal(output_path)

    def prepare() -> tuple[list, str]:
        check_output_target(output_path, force, table_path)
        if reject_path is not None:
            check_output_target(reject_path, force, table_path)
        identity = {"input": input_identity(table_path),
                    "models": [bundle_identity(bundle, name) for bundle, name in zip(models.bundles, models.names)],
                    "settings": settings.unit_record(device_type)}
        finished = journal.start(identity, settings.resume, settings.models_retrained,
                                 upgrade=ScoreSettings.upgraded_journal)
        return sorted(finished), f"{os.getpid()}-{time.time_ns()}"

    finished, run = ranks.on_main(prepare, "preparing the partial output")
    units = TableUnits(table_path, settings.unit_lines, ranks.rank, ranks.world_size, finished,
                       keep_rejects=reject_path is not None)
    try:
        _score_units(units, journal, models, run, ranks, settings, table_path=table_path, progress=progress)
        records = ranks.on_main(lambda: _assemble(journal, units, table_path, output_path, force,
                                                  reject_path), "assembling the output")
    except KeyboardInterrupt as interrupt:
        ending()
        if ranks.is_main:
            interrupt.note = journal.kept_note() or f"no output was written ({output_path} is as it was)"
        raise
    except RescorerError as error:
        ending()
        note = journal.kept_note() if ranks.is_main else None
        if note is None:
            raise
        failure = RescorerError(f"{error}; {note}")
        failure.agreed = True
        raise failure from None
    return records, finished, time.perf_counter() - started


def _score_units(units: TableUnits, journal: UnitJournal, models: ScoringModels, run: str, ranks: Ranks,
                 settings: ScoreSettings, *, table_path, progress) -> None:
    """Score this rank's units, checking in with the other ranks after each."""
    bundles, vocab_index = models.bundles, models.vocab_index
    writers: dict[int, UnitWriter] = {}  # touched by the writer thread only
    pending = None
    counts: Optional[UnitCounts] = None
    with ThreadPoolExecutor(max_workers=1) as writer, long_lived_objects_frozen(), \
            host_pipeline(units, models, settings, table_path) as pipeline:
        try:
            for chunk, encoding in pipeline.chunks():
                if counts is None:
                    counts = UnitCounts(run=run)
                logps = score_chunk(encoding, bundles, vocab_index, settings.token_budget,
                                    settings.precision, table_path)
                penalty = word_penalty(encoding, vocab_index, settings.unk_penalty)
                counts.add(encoding, logps, penalty)
                counts.lines_read += chunk.lines
                counts.lines_rejected += len(chunk.rejected)
                if pending is not None:
                    pending.result()
                record = asdict(counts) if chunk.last else None
                columns = output_columns(encoding, logps, vocab_index, settings.ensemble, settings.per_word)
                pending = writer.submit(_write, journal, writers, chunk,
                                        pipeline.lines(chunk, encoding, columns, penalty), record)
                if not ranks.is_distributed:
                    progress(chunk.lines)
                if chunk.last:
                    lines, counts = counts.lines_read, None
                    _, all_lines = ranks.check_in(False, lines, "scoring")
                    if ranks.is_distributed:
                        progress(all_lines)
            if pending is not None:
                pending.result()
        except Exception as error:
            _stop_writing(pending, writers)
            ranks.fail(error, "scoring")  # raises, on every rank
        except BaseException:
            _stop_writing(pending, writers)
            raise
    while True:
        done, all_lines = ranks.check_in(True, 0, "waiting for the other ranks' units")
        if ranks.is_distributed:
            progress(all_lines)
        if done:
            return


def _stop_writing(pending, writers: dict) -> None:
    """After a failure: let the writer thread finish its chunk, then drop unfinished units."""
    if pending is not None:
        try:
            pending.result()
        except BaseException:
            pass
    for unit_writer in writers.values():
        unit_writer.discard()
    writers.clear()


def _write(journal: UnitJournal, writers: dict, chunk: UnitChunk, write_lines, record: Optional[dict]) -> None:
    """In the writer thread: a chunk's lines (`write_lines(output)`) and rejects into its unit;
    the record at its end."""
    unit_writer = writers.get(chunk.unit)
    if unit_writer is None:
        unit_writer = writers[chunk.unit] = UnitWriter(journal, chunk.unit)
    write_lines(unit_writer.data)
    unit_writer.rejects.write_lines(chunk.rejected)
    injected_fault("mid-unit", chunk.unit)
    if record is not None:
        del writers[chunk.unit]
        unit_writer.finish(record, before_record=lambda: injected_fault("before-record", chunk.unit))
        injected_fault("after-record", chunk.unit)


def _assemble(journal: UnitJournal, units: TableUnits, table_path: Path, output_path: Path, force: bool,
              reject_path: Optional[Path]) -> dict:
    """On rank 0, once every unit is finished: the checks of a whole table, then the output."""
    if units.total_lines == 0:
        raise PhraseTableFormatError(f"{table_path}: the phrase table is empty")
    records = journal.records()
    in_units = sum(records[unit]["lines_read"] for unit in range(units.num_units) if unit in records)
    if sum(records[unit]["lines_written"] for unit in records) == 0:
        journal.remove()  # a resume would only fail the same way
        raise PhraseTableFormatError(no_good_line(str(table_path), units.total_lines))
    if all(unit in records for unit in range(units.num_units)) and in_units != units.total_lines:
        raise RescorerError(f"{table_path}: read {counted(units.total_lines, 'line')} but the units hold "
                            f"{in_units}; output discarded")
    output = AtomicOutput(output_path, force=force, input_path=table_path, encoded=True)
    rejects = (AtomicOutput(reject_path, force=force, input_path=table_path, only_if_written=True)
               if reject_path is not None else None)
    # The output is complete once renamed: a signal from then on would only cut short the clean-up
    # and the report, and `ending` is called before any signal is let in after the rename.
    records = journal.assemble(output, rejects, units.num_units, on_committed=ending)
    injected_fault("after-output", 0)
    journal.remove()
    return records
