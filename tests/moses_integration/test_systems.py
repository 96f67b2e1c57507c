"""The new columns' layout and the systems it makes: today's RNN[,WP], several model columns."""

from pathlib import Path

import pytest

from moses_integration.errors import MosesConfigError
from moses_integration.tables.columns import (ColumnLayout, infer_layout, names_from_models, parse_column_names,
                                       plan_systems)

LAYOUTS = [
    ("one column: the RNN", 5, None, ("rnn",)),
    ("two columns: RNN and word penalty", 6, None, ("rnn", "wp")),
    ("named models and penalty", 7, ("a", "b", "wp"), ("a", "b", "wp")),
    ("two models, no penalty", 6, ("a", "b"), ("a", "b")),
]


@pytest.mark.parametrize("num_found, names, expected", [c[1:] for c in LAYOUTS], ids=[c[0] for c in LAYOUTS])
def test_infer_layout(num_found, names, expected):
    assert infer_layout(4, num_found, names).names == expected


@pytest.mark.parametrize("num_found, names, message", [
    (7, None, "t.gz:1: expected 5 or 6 scores (the 4 of num-features plus the RNN score and "
              "optionally the word penalty), found 7; name the new columns with --new-columns"),
    (4, None, "t.gz:1: expected 5 or 6 scores"),
    (6, ("a", "b", "wp"), "t.gz:1: expected 7 scores (the 4 of num-features plus a,b,wp), found 6"),
])
def test_infer_layout_errors(num_found, names, message):
    with pytest.raises(MosesConfigError) as info:
        infer_layout(4, num_found, names, "t.gz")
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("text, message", [
    ("a,,wp", "--new-columns: expected names of letters, digits, '.', '_' or '-' separated by commas, found ''"),
    ("a b", "--new-columns: expected names of letters"),
    ("a,A", "--new-columns: each column needs its own name, found ['a'] more than once"),
    ("wp,a", "--new-columns: expected the word-penalty column 'wp' last"),
    ("wp", "--new-columns: expected at least one model column"),
    ("rnn,b", "--new-columns: ['rnn'] name the fixed systems"),
    ("a,Baseline,wp", "--new-columns: ['Baseline'] name the fixed systems"),
])
def test_bad_column_names(text, message):
    with pytest.raises(MosesConfigError) as info:
        parse_column_names(text)
    assert str(info.value).startswith(message)


def test_one_model_may_be_called_rnn():
    assert parse_column_names("rnn,wp") == ("rnn", "wp")


PLANS = [
    ("rnn,wp", None, ["Baseline", "+RNN", "+WP", "+RNN+WP"], ["baseline", "rnn", "wp", "rnn-wp"]),
    ("rnn", None, ["Baseline", "+RNN"], ["baseline", "rnn"]),
    ("rnn,wp", ["+WP"], ["Baseline", "+WP"], ["baseline", "wp"]),
    ("bible.small,gru-b,wp", None,
     ["Baseline", "+bible.small", "+gru-b", "+RNN", "+WP", "+RNN+WP"],
     ["baseline", "bible.small", "gru-b", "rnn", "wp", "rnn-wp"]),
    ("a,b", ["+b"], ["Baseline", "+b"], ["baseline", "b"]),
    # combinations: exactly the named columns, in table order, any case
    ("a,b,c,wp", ["+a+c"], ["Baseline", "+a+c"], ["baseline", "a-c"]),
    ("a,b,c,wp", ["+C+a+wp", "+a"], ["Baseline", "+a", "+C+a+wp"], ["baseline", "a", "a-c-wp"]),
    # the columns of a fixed system are that system, under its own name
    ("a,b,wp", ["+b+a", "+a+b+wp"], ["Baseline", "+RNN", "+RNN+WP"], ["baseline", "rnn", "rnn-wp"]),
    ("a,b,c", ["+a+b", "+b+a"], ["Baseline", "+a+b"], ["baseline", "a-b"]),
]


@pytest.mark.parametrize("names, wanted, systems, slugs", PLANS)
def test_plan_systems(names, wanted, systems, slugs):
    specs = plan_systems(ColumnLayout(parse_column_names(names)), wanted)
    assert [s.name for s in specs] == systems and [s.slug for s in specs] == slugs


def test_all_model_columns_make_rnn():
    specs = {s.name: s.new_columns for s in plan_systems(ColumnLayout(("a", "b", "wp")))}
    assert specs == {"Baseline": (), "+a": ("a",), "+b": ("b",), "+RNN": ("a", "b"),
                     "+WP": ("wp",), "+RNN+WP": ("a", "b", "wp")}


@pytest.mark.parametrize("names, wanted, message", [
    ("rnn", ["+WP"], "unknown system(s) ['+WP']; expected some of ['Baseline', '+RNN']; t.gz has "
                     "no word-penalty column (rescore with --unk-penalty)"),
    ("rnn,wp", ["+XYZ"], "unknown system(s) ['+XYZ']; expected some of ['Baseline', '+RNN', '+WP', '+RNN+WP']"),
    ("a,b,wp", ["+b+XYZ"], "unknown system(s) ['+b+XYZ']; expected some of ['Baseline', '+a', '+b', '+RNN', '+WP', "
                           "'+RNN+WP'], or a combination of the columns ['a', 'b', 'wp'] such as +a+b"),
    ("a,b,c", ["+a+d", "+a+a", "++a"],
     "unknown system(s) ['+a+d', '+a+a', '++a']; expected some of ['Baseline', '+a', '+b', '+c', '+RNN'], "
     "or a combination of the columns ['a', 'b', 'c'] such as +a+b"),
    ("a,b", ["+a+WP"], "unknown system(s) ['+a+WP']; expected some of ['Baseline', '+a', '+b', '+RNN'], or a "
                       "combination of the columns ['a', 'b'] such as +a+b; t.gz has no word-penalty column "
                       "(rescore with --unk-penalty)"),
])
def test_plan_systems_errors(names, wanted, message):
    with pytest.raises(MosesConfigError) as info:
        plan_systems(ColumnLayout(parse_column_names(names)), wanted, "t.gz")
    assert str(info.value) == message


def test_a_combination_may_not_take_a_fixed_systems_directory():
    with pytest.raises(MosesConfigError, match=r"system \+a\+b's directory name 'a-b' is taken by another system"):
        plan_systems(ColumnLayout(("a", "b", "a-b")), ["+a+b"])
    with pytest.raises(MosesConfigError, match=r"system \+a\+b-c's directory name 'a-b-c' is taken"):
        plan_systems(ColumnLayout(("a-b", "c", "a", "b-c")), ["+a-b+c", "+a+b-c"])


def test_names_from_model_files():
    assert names_from_models([Path("/m/gru.pt"), Path("lstm.small.pt")]) == ("gru", "lstm.small", "wp")
    with pytest.raises(MosesConfigError, match=r"--model file names \(rename with --new-columns\): "
                                               r"each column needs its own name"):
        names_from_models([Path("a/model.pt"), Path("b/model.pt")])
