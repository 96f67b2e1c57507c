"""Settings records (rescorer.records): kinds, the signature, the stored form and its upgrade."""

import dataclasses
import math
from pathlib import Path
from typing import Optional

import pytest

from rescorer.records import (COUNT, FILE_TO_WRITE, MAY_CHANGE, NOT_RECORDED, POSITIVE_FLOAT, POSITIVE_INT,
                              SettingError, check_record, choice, from_stored, setting, settings_of,
                              signature_items, stored)


@dataclasses.dataclass(frozen=True)
class Example:
    size: int = setting(3, POSITIVE_INT, "How many.", option="--size")
    rate: Optional[float] = setting(None, POSITIVE_FLOAT, option="--rate", resume=MAY_CHANGE)
    max_seconds: Optional[float] = setting(None, POSITIVE_FLOAT, option="--max-time", legacy_names=("max_time",))
    mode: str = setting("a", choice("a", "b"), option="--mode")
    out_path: Optional[Path] = setting(None, FILE_TO_WRITE, option="--out", resume=NOT_RECORDED)
    skip: int = setting(0, COUNT)

    def __post_init__(self):
        check_record(self)


@pytest.mark.parametrize("field, value, refusal", [
    ("size", 0, "--size 0: expected >= 1"),
    ("size", 2.5, "--size 2.5: expected an integer"),
    ("rate", 0.0, "--rate 0.0: expected > 0"),
    ("rate", math.inf, "--rate inf: expected a finite number"),
    ("rate", math.nan, "--rate nan: expected a finite number"),
    ("mode", "c", "--mode 'c': valid: a, b"),
    ("skip", -1, "skip -1: expected >= 0"),
])
def test_a_value_its_kind_does_not_take_is_refused_naming_the_option(field, value, refusal):
    with pytest.raises(SettingError) as error:
        Example(**{field: value})
    assert str(error.value) == refusal


def test_the_signature_follows_the_fields_in_order():
    record = Example(size=4, out_path=Path("o.txt"))
    assert signature_items(record) == {"size": "4", "rate": "-", "max_seconds": "-", "mode": "a",
                                       "out_path": "o.txt", "skip": "0"}


def test_the_stored_form_holds_the_recorded_fields_by_name_with_a_format():
    assert stored(Example(max_seconds=5.0), 2) == {
        "format": 2, "fields": {"size": 3, "rate": None, "max_seconds": 5.0, "mode": "a", "skip": 0}}


def test_an_older_file_s_option_names_are_upgraded_on_read():
    """A field renamed from its option (--max-time: max_time then, max_seconds now) reads the old name;
    unknown names are dropped, paths come back as paths."""
    old = {"max_time": 60.0, "size": 5, "gone": 1, "out_path": "x.txt"}
    assert from_stored(Example, old) == {"size": 5, "max_seconds": 60.0, "out_path": Path("x.txt")}


def test_every_declaration_is_kept_in_the_field_metadata():
    declared = dict((field.name, declared) for field, declared in settings_of(Example))
    assert declared["max_seconds"].option == "--max-time" and declared["rate"].resume == MAY_CHANGE
    assert not declared["out_path"].recorded
