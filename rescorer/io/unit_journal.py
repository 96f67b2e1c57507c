"""Finished units of a scoring run, kept beside the output so that a killed run can resume.

`.OUT.partial/` beside OUT holds:
- `journal.json`: what the run is: the input's identity (size, mtime, SHA-256 of its first
  and last MiB), each model's identity (SHA-256 of its config, shortlists and weights), and
  every setting that changes the output's bytes. A run that differs refuses to resume.
- `unit-000003.gz` (or `.txt` for plain output): unit 3's lines, one complete gzip member;
  `unit-000003.rej`: its rejected lines, verbatim, when it has some;
- `unit-000003.json`: its counts. It is written last (each file through a temporary, fsync
  and rename), so a unit is finished exactly when its record exists and its data file has the
  recorded size. A kill -9, SIGTERM, power cut or full disk loses at most the units in progress.

The final output is the units' files concatenated in order: a multi-member gzip is one valid
gzip file, which zcat, Python's gzip and zlib's gzread (hence Moses) read as one stream.
"""

from __future__ import annotations

import hashlib
import logging
import json
import os
import re
import shutil
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from rescorer import __version__
from rescorer.counts import counted
from rescorer.errors import RescorerError
from rescorer.io.atomic_output import AtomicOutput, committed_together

__all__ = ["DEFAULT_UNIT_LINES", "partial_dir", "check_leftover", "input_identity", "model_identity",
           "UnitJournal", "UnitWriter"]

DEFAULT_UNIT_LINES = 200_000
JOURNAL_FORMAT = "rescorer-partial-scoring"
JOURNAL_VERSION = 2  # 2: settings by their record's field names (1: by option names)
_MIB = 1 << 20
_RECORD = re.compile(r"unit-(\d{6,})\.json$")
log = logging.getLogger("rescorer")


def partial_dir(output: Path) -> Path:
    return Path(output).with_name(f".{Path(output).name}.partial")


def _kept(records: dict) -> str:
    lines = sum(record["lines_read"] for record in records.values())
    return f"{counted(len(records), 'finished unit')} ({counted(lines, 'line')})"


def remove_finished_leftover(output: Path) -> Optional[str]:
    """A run killed after renaming OUT into place, but before removing its partial directory,
    had finished: OUT is newer than everything in the directory (a new run's units are newer
    than an older OUT). Such a directory is removed; returns what was done, or None."""
    directory, output = partial_dir(output), Path(output)
    if not (directory.is_dir() and output.is_file()):
        return None
    newest = max((path.stat().st_mtime_ns for path in directory.iterdir()),
                 default=directory.stat().st_mtime_ns)
    if output.stat().st_mtime_ns < newest:
        return None
    shutil.rmtree(directory, ignore_errors=True)
    return f"{directory}: removed; the run that left it had finished {output}"


def check_leftover(output: Path, resume: bool, force: bool) -> None:
    """Before any work: a partial run left beside OUT is continued only under --resume and
    replaced only under --force; otherwise the run refuses, naming it."""
    directory = partial_dir(output)
    if resume or force or not directory.exists():
        return
    records = UnitJournal(output).records()
    raise RescorerError(f"{output}: an interrupted run left {_kept(records)} in {directory}; pass "
                        f"--resume to continue it, or --force to start over")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(_MIB):
            digest.update(block)
    return digest.hexdigest()


def _sha256_of(path: Path, start: int, size: int) -> str:
    with open(path, "rb") as file:
        file.seek(start)
        return hashlib.sha256(file.read(size)).hexdigest()


def input_identity(path: Path) -> dict:
    """Size, modification time and hashes of the first and last MiB of the table."""
    stat = path.stat()
    return {"name": path.name, "bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "head_sha256": _sha256_of(path, 0, _MIB),
            "tail_sha256": _sha256_of(path, max(0, stat.st_size - _MIB), _MIB)}


def model_identity(name: str, config: dict, direction: str, vocabularies: Sequence[Sequence[str]],
                   weights: Iterable[tuple[str, bytes]]) -> dict:
    """What decides a model's scores, hashed: its config, direction, vocabularies (source,
    target) and weights, given as (name, bytes) in name order by the caller (io knows no tensors)."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
    if direction != "forward":  # forward models keep the hash they had before directions
        digest.update(direction.encode())
    for tokens in vocabularies:
        digest.update("\n".join(tokens).encode("utf-8", "surrogateescape") + b"\0")
    for key, data in weights:
        digest.update(key.encode())
        digest.update(data)
    return {"name": name, "sha256": digest.hexdigest()}


def _differences(recorded: dict, now: dict) -> list[str]:
    lines = []
    for key in ("bytes", "mtime_ns", "head_sha256", "tail_sha256"):
        if recorded["input"].get(key) != now["input"][key]:
            lines.append(f"the table's {key.replace('_', ' ')} {recorded['input'].get(key)!r} "
                         f"(partial run) vs {now['input'][key]!r} (now)")
    old_models, new_models = recorded.get("models", []), now["models"]
    if len(old_models) != len(new_models):
        lines.append(f"{counted(len(old_models), 'model')} (partial run) vs {len(new_models)} (now)")
    for index, (old, new) in enumerate(zip(old_models, new_models), 1):
        if old["sha256"] != new["sha256"]:
            lines.append(f"model {index} {old['name']} (partial run) differs from {new['name']} "
                         f"(now): other weights, shortlists or config")
    old_settings = recorded.get("settings", {})
    for key in sorted(set(old_settings) | set(now["settings"])):
        if old_settings.get(key) != now["settings"].get(key):
            lines.append(f"{key.replace('_', '-')} {old_settings.get(key)!r} (partial run) vs "
                         f"{now['settings'].get(key)!r} (now)")
    return lines


def _write_json(path: Path, value: dict) -> None:
    """Write through a temporary, fsync, rename, fsync the directory: durable once it exists."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "w") as file:
            json.dump(value, file, indent=1)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        reason = (error.strerror or str(error)).lower()
        raise RescorerError(f"{path}: cannot write it ({reason})") from None


class UnitJournal:
    """The partial output of one scoring run: its journal and finished units."""

    def __init__(self, output: Path):
        self.output = Path(output)
        self.directory = partial_dir(self.output)
        self.suffix = ".gz" if self.output.name.endswith(".gz") else ".txt"

    def data_path(self, unit: int) -> Path:
        return self.directory / f"unit-{unit:06d}{self.suffix}"

    def reject_path(self, unit: int) -> Path:
        return self.directory / f"unit-{unit:06d}.rej"

    def record_path(self, unit: int) -> Path:
        return self.directory / f"unit-{unit:06d}.json"

    def digests(self, unit: int) -> dict:
        """sha256 of a unit's data and rejects: a unit damaged on disk (same size, other bytes)
        is found before it is assembled."""
        rejects = self.reject_path(unit)
        return {"sha256": _file_sha256(self.data_path(unit)),
                "rejects_sha256": _file_sha256(rejects) if rejects.exists() else None}

    def damaged(self, unit: int, record: dict) -> bool:
        """True when the unit's files differ from what its record says (records of a rescorer
        that kept no digests cannot tell, and are trusted)."""
        if "sha256" not in record:
            return False
        try:
            return self.digests(unit) != {key: record.get(key) for key in ("sha256", "rejects_sha256")}
        except OSError:
            return True

    def drop(self, unit: int) -> None:
        """Forget a unit: its record first, so that a kill halfway leaves it unfinished."""
        for path in (self.record_path(unit), self.data_path(unit), self.reject_path(unit)):
            path.unlink(missing_ok=True)

    def records(self) -> dict[int, dict]:
        """The finished units' records, by unit (a record whose data file is missing or of
        another size is not finished)."""
        records = {}
        if not self.directory.is_dir():
            return records
        for path in self.directory.iterdir():
            match = _RECORD.match(path.name)
            if not match:
                continue
            unit = int(match.group(1))
            try:
                record = json.loads(path.read_text())
                if self.data_path(unit).stat().st_size != record["bytes"]:
                    continue
            except (OSError, ValueError, KeyError):
                continue
            records[unit] = record
        return records

    def start(self, identity: dict, resume: bool, models_retrained: bool = False,
              upgrade: Callable[[dict], dict] = lambda recorded: recorded) -> dict[int, dict]:
        """Make the partial directory for a run of `identity`, or, under `resume`, check that
        the one there was made by the same run and keep its finished units (their records are
        returned). Anything else in it (temporaries of a killed run) is removed. With
        `models_retrained` (`rescore TABLE --resume` trained further), units scored by the
        model as it was are not refused but scored again. `upgrade` turns a journal of an
        older version into today's, so that a run interrupted before an upgrade resumes."""
        journal = self.directory / "journal.json"
        now = {"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION, "rescorer": __version__, **identity}
        if resume and models_retrained and journal.is_file() and self._only_models_differ(journal, now, upgrade):
            log.warning(f"{self.directory}: its units were scored by the model before this run's "
                        f"training; scoring starts over")
            resume = False
        if not (resume and journal.is_file()):
            self.remove()
            try:
                self.directory.mkdir()
                _write_json(journal, now)
            except OSError as error:
                self.remove()
                raise RescorerError(f"{self.directory}: cannot create it ({error.strerror})") from None
            except RescorerError:
                self.remove()
                raise
            return {}
        try:
            recorded = upgrade(json.loads(journal.read_text()))
        except (OSError, ValueError) as error:
            raise RescorerError(f"{journal}: unreadable ({error}); pass --force to start over") from None
        if recorded.get("format") != JOURNAL_FORMAT or recorded.get("version") != JOURNAL_VERSION:
            raise RescorerError(f"{journal}: not a partial run this rescorer {__version__} can resume "
                                f"(format {recorded.get('format')!r} version {recorded.get('version')!r}); "
                                f"pass --force to start over")
        differences = _differences(recorded, now)
        if differences:
            raise RescorerError(f"{self.output}: --resume: the partial run in {self.directory} was made "
                                f"with other inputs or settings: {'; '.join(differences)}; use the "
                                f"same ones, or pass --force instead of --resume to start over")
        records = self.records()
        for unit in sorted(records):
            if self.damaged(unit, records[unit]):
                log.warning(f"{self.directory}: unit {unit} was damaged on disk (its checksum "
                            f"differs from its record); it is scored again")
                self.drop(unit)
                del records[unit]
        keep = {journal.name} | {path.name for unit in records for path in
                                 (self.data_path(unit), self.reject_path(unit), self.record_path(unit))}
        for path in self.directory.iterdir():
            if path.name not in keep:
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        return records

    def recorded(self, upgrade: Callable[[dict], dict] = lambda recorded: recorded) -> Optional[dict]:
        """The journal of the run that left the partial directory (None: none, or unreadable)."""
        try:
            return upgrade(json.loads((self.directory / "journal.json").read_text()))
        except (OSError, ValueError):
            return None

    @staticmethod
    def _only_models_differ(journal: Path, now: dict, upgrade: Callable[[dict], dict]) -> bool:
        try:
            recorded = upgrade(json.loads(journal.read_text()))
        except (OSError, ValueError):
            return False
        return (recorded.get("models") != now["models"]
                and not _differences({**recorded, "models": now["models"]}, now))

    def kept_note(self) -> Optional[str]:
        """What an interrupted or failed run leaves for --resume, or None (then it removes the
        directory: nothing in it is worth keeping)."""
        records = self.records()
        if not records:
            self.remove()
            return None
        return (f"{_kept(records)} {'is' if len(records) == 1 else 'are'} kept in {self.directory}: rerun with "
                "--resume to continue")

    def assemble(self, output: AtomicOutput, rejects: Optional[AtomicOutput], num_units: int,
                 on_committed: Callable[[], None] = lambda: None) -> dict:
        """Concatenate the units in order into `output` (and their rejects into `rejects`), then
        commit both together, `on_committed` called with the signals held (committed_together);
        returns the records, checked to cover every unit."""
        records = self.records()
        missing = [unit for unit in range(num_units) if unit not in records]
        if missing:
            raise RescorerError(f"{self.directory}: units {missing[:5]} are missing; the partial "
                                f"run is damaged (pass --force to start over)")
        damaged = [unit for unit in range(num_units) if self.damaged(unit, records[unit])]
        if damaged:
            for unit in damaged:
                self.drop(unit)
            raise RescorerError(f"{self.directory}: units {damaged[:5]} were damaged on disk while "
                                f"the run lasted (their checksums differ from their records); they "
                                f"are dropped: rerun with --resume to score them again")
        with committed_together(output, rejects, on_committed=on_committed):
            for unit in range(num_units):
                output.copy_from(self.data_path(unit), records[unit]["lines_written"])
                if records[unit]["lines_rejected"] and rejects is not None:
                    rejects.write(self.reject_path(unit).read_bytes())  # whole lines, verbatim
                    rejects.lines_written += records[unit]["lines_rejected"]
        return {unit: records[unit] for unit in range(num_units)}

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


class UnitWriter:
    """Writes one unit: its lines, its rejects, then its record (which makes it finished)."""

    def __init__(self, journal: UnitJournal, unit: int):
        self.journal, self.unit = journal, unit
        label = f"{journal.output} (unit {unit} in {journal.directory.name})"
        self.data = AtomicOutput(journal.data_path(unit), force=True, label=label,
                                 header_name=str(journal.output))
        self.rejects = AtomicOutput(journal.reject_path(unit), force=True, label=label,
                                    only_if_written=True)
        self.data.open()
        self.rejects.open()

    def finish(self, record: dict, before_record=lambda: None) -> None:
        """Make the unit durable, then its record (counts, and the data file's size)."""
        try:
            self.data.finish()
            self.rejects.finish()
        except BaseException:
            self.discard()
            raise
        self.data.commit()
        self.rejects.commit()
        record = dict(record, unit=self.unit, bytes=self.journal.data_path(self.unit).stat().st_size,
                      **self.journal.digests(self.unit))
        before_record()
        _write_json(self.journal.record_path(self.unit), record)

    def discard(self) -> None:
        self.data.discard()
        self.rejects.discard()
