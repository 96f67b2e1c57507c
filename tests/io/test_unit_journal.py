"""The partial directory: what counts as a finished unit, what a resume keeps, what it refuses."""

import gzip
import json

import pytest
import torch

from rescorer.errors import RescorerError
from rescorer.io.atomic_output import AtomicOutput
from rescorer.io.unit_journal import UnitJournal, UnitWriter, check_leftover, input_identity
from rescorer.scoring.units import bundle_identity

SETTINGS = {"unit_lines": 2, "score_format": "prob", "unk_penalty": False}


@pytest.fixture()
def identity(tmp_path, tiny_bundle):
    table = tmp_path / "t.gz"
    table.write_bytes(gzip.compress(b"a ||| b ||| 1\n" * 5))
    return {"input": input_identity(table), "models": [bundle_identity(tiny_bundle, "m.pt")],
            "settings": dict(SETTINGS)}


def finish_unit(journal, unit, lines, rejected=()):
    writer = UnitWriter(journal, unit)
    writer.data.write_lines(lines)
    writer.rejects.write_lines(rejected)
    writer.finish({"lines_read": len(lines) + len(rejected), "lines_written": len(lines),
                   "lines_rejected": len(rejected)})


def test_a_unit_is_finished_when_its_record_matches_its_data(tmp_path, identity):
    journal = UnitJournal(tmp_path / "o.gz")
    assert journal.start(identity, resume=False) == {}
    finish_unit(journal, 0, [b"x 1", b"y 2"])
    finish_unit(journal, 1, [b"z 3"], [b"bad"])
    assert sorted(journal.records()) == [0, 1]
    with gzip.open(journal.data_path(1)) as unit:
        assert unit.read() == b"z 3\n"
    assert journal.reject_path(1).read_bytes() == b"bad\n" and not journal.reject_path(0).exists()
    journal.data_path(0).write_bytes(journal.data_path(0).read_bytes()[:-1])  # torn by a power cut
    assert sorted(journal.records()) == [1]


def test_resume_keeps_finished_units_and_drops_the_rest(tmp_path, identity):
    journal = UnitJournal(tmp_path / "o.gz")
    journal.start(identity, resume=False)
    finish_unit(journal, 0, [b"x 1", b"y 2"])
    (journal.directory / ".unit-000001.gz.tmp-abcd").write_bytes(b"half")  # killed mid-unit
    journal.data_path(2).write_bytes(b"data without a record")  # killed before its record
    records = journal.start(identity, resume=True)
    assert sorted(records) == [0]
    assert sorted(path.name for path in journal.directory.iterdir()) == [
        "journal.json", "unit-000000.gz", "unit-000000.json"]


def test_resume_lists_every_difference(tmp_path, identity, tiny_bundle):
    journal = UnitJournal(tmp_path / "o.gz")
    journal.start(identity, resume=False)
    other = json.loads(json.dumps(identity))
    other["settings"].update(score_format="log", unit_lines=3)
    other["input"]["bytes"] += 1
    other["models"][0]["sha256"] = "0" * 64
    with pytest.raises(RescorerError) as refused:
        journal.start(other, resume=True)
    message = str(refused.value)
    for part in ("the table's bytes", "model 1 m.pt (partial run) differs from m.pt (now)",
                 "score-format 'prob' (partial run) vs 'log' (now)", "unit-lines 2 (partial run) vs 3 (now)",
                 "pass --force instead of --resume to start over"):
        assert part in message, message
    assert len(message.splitlines()) == 1


def test_model_identity_follows_the_weights(tiny_bundle):
    before = bundle_identity(tiny_bundle, "m.pt")
    assert bundle_identity(tiny_bundle, "renamed.pt")["sha256"] == before["sha256"]
    with torch.no_grad():
        next(tiny_bundle.model.parameters())[0, 0] += 1e-6
    assert bundle_identity(tiny_bundle, "m.pt")["sha256"] != before["sha256"]


def test_leftover_without_resume_or_force_is_refused(tmp_path, identity):
    journal = UnitJournal(tmp_path / "o.gz")
    journal.start(identity, resume=False)
    finish_unit(journal, 0, [b"x 1", b"y 2"])
    with pytest.raises(RescorerError, match=r"o.gz: an interrupted run left 1 finished unit \(2 lines\) in "):
        check_leftover(tmp_path / "o.gz", resume=False, force=False)
    check_leftover(tmp_path / "o.gz", resume=True, force=False)
    check_leftover(tmp_path / "o.gz", resume=False, force=True)


def test_assembly_concatenates_units_in_order_and_checks_none_is_missing(tmp_path, identity):
    journal = UnitJournal(tmp_path / "o.gz")
    journal.start(identity, resume=False)
    finish_unit(journal, 1, [b"c 3"], [b"bad 2"])
    finish_unit(journal, 0, [b"a 1", b"b 2"], [b"bad 1"])
    with pytest.raises(RescorerError, match=r"units \[2\] are missing"):
        journal.assemble(AtomicOutput(tmp_path / "o.gz", encoded=True), None, 3)
    assert not (tmp_path / "o.gz").exists()
    rejects = AtomicOutput(tmp_path / "rej.txt", only_if_written=True)
    journal.assemble(AtomicOutput(tmp_path / "o.gz", encoded=True), rejects, 2)
    assert gzip.decompress((tmp_path / "o.gz").read_bytes()) == b"a 1\nb 2\nc 3\n"
    assert (tmp_path / "rej.txt").read_bytes() == b"bad 1\nbad 2\n" and rejects.lines_written == 2
