"""Files written before the settings records (raw option names, no stored-settings format) still
resume: tests/fixtures/option-names.checkpoint and option-names.partial/, made by
tests/fixtures/make_option_name_fixtures.py with the rescorer of that time."""

import gzip
import json
import os
import shutil

import pytest
import torch

from tests.distributed_runs import rescore
from tests.helpers import EXAMPLE_TABLE, FIXTURE_FILES

OLD_CHECKPOINT = FIXTURE_FILES / "option-names.checkpoint"
OLD_PARTIAL = FIXTURE_FILES / "option-names.partial"


@pytest.fixture()
def old_checkpoint_dir(tmp_path):
    shutil.copy(EXAMPLE_TABLE, tmp_path / "phrase-table.gz")
    shutil.copy(OLD_CHECKPOINT, tmp_path / "m.pt.checkpoint")
    return tmp_path


def test_an_old_checkpoint_resumes_with_its_own_settings(old_checkpoint_dir):
    """The options the old run was given (--preset tiny, --batch-tokens 500, --max-time 600 stored
    as `max_time`) are the resumed run's, as they were before, and so is the default it trained
    with: Adam at 6e-3, where a new run of `tiny` takes 3e-3."""
    result = rescore("train", "phrase-table.gz", "-o", "m.pt", "--resume", "--max-updates", "5",
                     cwd=old_checkpoint_dir)
    assert result.returncode == 0, result.stderr
    for used in ("|preset:tiny|", "|batch-tokens:500|", "|max-seconds:600.0|", "|max-updates:5|",
                 "|learning-rate:0.006|"):
        assert used in result.stderr, result.stderr
    assert "5 updates (2 in this run), stopped: reached 5 updates" in result.stderr
    training = torch.load(old_checkpoint_dir / "m.pt", weights_only=True)["training"]
    assert training["state"]["updates"] == 5
    assert training["settings"]["format"] == 2  # rewritten by field name
    assert training["settings"]["fields"]["max_seconds"] == 600
    assert training["settings"]["fields"]["max_updates"] == 5


@pytest.mark.parametrize("args, named", [
    (["--optimizer", "adadelta"], "optimizer 'adam' (checkpoint) vs 'adadelta' (now)"),
    (["--batch-tokens", "600"], "batch-tokens 500 (checkpoint) vs 600 (now)"),
    (["--seed", "2"], "seed 1 (checkpoint) vs 2 (now)"),
])
def test_an_old_checkpoint_refuses_a_contradicting_setting_naming_it(old_checkpoint_dir, args, named):
    result = rescore("train", "phrase-table.gz", "-o", "m.pt", "--resume", *args, cwd=old_checkpoint_dir)
    assert result.returncode == 1, result.stderr
    assert "--resume asks for other settings than the checkpoint was trained with" in result.stderr
    assert named in result.stderr
    assert not (old_checkpoint_dir / "m.pt").exists()


def test_an_old_partial_scoring_directory_resumes(tmp_path):
    """A unit journal written before the settings records: its two finished units are kept and the
    table comes out as an uninterrupted run writes it."""
    journal = json.loads((OLD_PARTIAL / "journal.json").read_text())
    table = tmp_path / "phrase-table.gz"
    shutil.copy(EXAMPLE_TABLE, table)
    mtime = journal["input"]["mtime_ns"]
    os.utime(table, ns=(mtime, mtime))
    shutil.copytree(OLD_PARTIAL, tmp_path / ".option-names.gz.partial")
    args = ["--model", FIXTURE_FILES / "v1-model.pt", "--unit-lines", "500", "--unk-penalty",
            "--device", "cpu", "--precision", "fp32"]
    resumed = rescore("score", "phrase-table.gz", "-o", "option-names.gz", *args, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "1000 lines were done by the interrupted run" in resumed.stderr
    (tmp_path / "straight").mkdir()
    shutil.copy2(table, tmp_path / "straight" / "phrase-table.gz")
    straight = rescore("score", "phrase-table.gz", "-o", "option-names.gz", *args, cwd=tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr
    # the two finished units are kept as the old run wrote them, byte for byte, and the rest is
    # what an uninterrupted run writes; the kept units' scores equal this machine's up to the
    # last digits its CPU and torch round differently (on the machine that wrote them, the whole
    # file is the straight run's, byte for byte)
    kept = b"".join((OLD_PARTIAL / f"unit-00000{i}.gz").read_bytes() for i in (0, 1))
    resumed_bytes = (tmp_path / "option-names.gz").read_bytes()
    assert resumed_bytes.startswith(kept)
    resumed_lines = gzip.decompress(resumed_bytes).splitlines()
    straight_lines = gzip.decompress((tmp_path / "straight" / "option-names.gz").read_bytes()).splitlines()
    assert len(resumed_lines) == len(straight_lines) == 4000
    assert resumed_lines[1000:] == straight_lines[1000:]
    for old_line, new_line in zip(resumed_lines[:1000], straight_lines[:1000]):
        old_fields, new_fields = old_line.split(b" ||| "), new_line.split(b" ||| ")
        assert old_fields[:2] + old_fields[3:] == new_fields[:2] + new_fields[3:]
        assert [float(x) for x in old_fields[2].split()] == pytest.approx([float(x) for x in new_fields[2].split()], rel=1e-4)
    assert not (tmp_path / ".option-names.gz.partial").exists()


def test_an_old_partial_scoring_directory_refuses_other_settings_by_their_names(tmp_path):
    journal = json.loads((OLD_PARTIAL / "journal.json").read_text())
    assert journal["version"] == 1 and "ensemble" not in journal["settings"]  # as version 1 wrote it
    table = tmp_path / "phrase-table.gz"
    shutil.copy(EXAMPLE_TABLE, table)
    os.utime(table, ns=(journal["input"]["mtime_ns"],) * 2)
    shutil.copytree(OLD_PARTIAL, tmp_path / ".option-names.gz.partial")
    refused = rescore("score", "phrase-table.gz", "-o", "option-names.gz", "--model", FIXTURE_FILES / "v1-model.pt",
                      "--unit-lines", "500", "--unk-penalty", "--device", "cpu", "--precision", "fp32",
                      "--ensemble", "--model", FIXTURE_FILES / "v1-model.pt", "--resume", cwd=tmp_path)
    assert refused.returncode == 1 and "other inputs or settings" in refused.stderr
    assert "ensemble" in refused.stderr.splitlines()[-1]


def test_a_new_journal_records_the_settings_by_field_name(tmp_path):
    from rescorer.scoring.settings import ScoreSettings

    record = ScoreSettings(reject_path=tmp_path / "rej.txt").unit_record("cpu")
    assert record["reject_path"] == str((tmp_path / "rej.txt").resolve()) and "reject" not in record
    assert record["ensemble"] is False and record["per_word"] is False
    old = json.loads((OLD_PARTIAL / "journal.json").read_text())
    upgraded = ScoreSettings.upgraded_journal(old)
    assert upgraded["version"] == 2 and set(upgraded["settings"]) == set(record)
    assert ScoreSettings.upgraded_journal(upgraded) is upgraded
