"""Settings records (rescorer.records): kinds, the signature, the stored form and its upgrade, shared
declarations."""

import dataclasses
import math
from pathlib import Path
from typing import Optional

import pytest

from rescorer.records import (COUNT, FILE_TO_WRITE, MAY_CHANGE, NOT_RECORDED, POSITIVE_FLOAT, POSITIVE_INT, Kind,
                              SettingError, check_record, choice, from_stored, like, setting, settings_of,
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


def _words(text):
    if "!" in text:
        raise ValueError(f"--words: no '!' in {text!r}")
    return tuple(text.split())


@dataclasses.dataclass(frozen=True)
class Shaped:
    """The kinds a Moses command's options need: repeatable, paired and parsed values."""

    refs: tuple = setting((), Kind("path", multiple=True), "Another reference.", option="--ref", metavar="REF")
    pair: Optional[tuple] = setting(None, Kind("path", nargs=2), "Source and reference.", option="--pair",
                                    metavar="SRC REF", required=True)
    words: tuple = setting((), Kind("text", parse=_words), "Words.", option="--words", show_default=False)
    sizes: tuple = setting((), Kind("int", minimum=1, multiple=True), option="--size")

    def __post_init__(self):
        check_record(self)


def test_a_repeated_or_paired_value_is_checked_value_by_value():
    assert Shaped(refs=(Path("a"), Path("b")), sizes=(1, 2)).sizes == (1, 2)
    with pytest.raises(SettingError, match=r"--size \(1, 0\): expected >= 1"):
        Shaped(sizes=(1, 0))


def test_a_shared_setting_is_declared_once_and_taken_with_like():
    @dataclasses.dataclass(frozen=True)
    class Taker:
        size: int = like(Example, "size", help="Another help.")
        pair: Optional[tuple] = like(Shaped, "pair", required=False)

    declared = dict((field.name, declared) for field, declared in settings_of(Taker))
    assert (Taker().size, declared["size"].option, declared["size"].help) == (3, "--size", "Another help.")
    assert declared["pair"].metavar == "SRC REF" and not declared["pair"].required
    assert declared["pair"].kind.nargs == 2
