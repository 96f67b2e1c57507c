"""moses.ini editing on the real inis of the bible-en-fr system: only the edited lines change."""

import difflib

import pytest

from moses_integration.errors import MosesConfigError
from moses_integration.ini.moses_ini import MosesIni
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

REAL_INIS = {
    "model/moses.ini": ("TranslationModel0= 0.2 0.2 0.2 0.2", "model/phrase-table.gz"),
    "tuning/moses.ini": ("TranslationModel0= 0.0217852 0.0771391 0.0807805 0.0130301",
                         "model/phrase-table.gz"),
    "tuning/run11.moses.ini": ("TranslationModel0= 0.0513031 0.0400807 0.0469892 0.0153746",
                               "tuning/filtered/phrase-table.0-0.1.1.gz"),
}


def changed_lines(before: str, after: str) -> list:
    """The diff as (old line, new line) replacements; fails if lines were added or removed."""
    opcodes = difflib.SequenceMatcher(a=before.splitlines(keepends=True),
                                      b=after.splitlines(keepends=True), autojunk=False)
    old, new = opcodes.a, opcodes.b
    result = []
    for tag, i1, i2, j1, j2 in opcodes.get_opcodes():
        if tag == "equal":
            continue
        assert tag == "replace" and i2 - i1 == j2 - j1, (tag, old[i1:i2], new[j1:j2])
        result += list(zip(old[i1:i2], new[j1:j2]))
    return result


@pytest.mark.parametrize("relative", sorted(REAL_INIS))
@pytest.mark.parametrize("num_new", [1, 2])
def test_add_columns_changes_exactly_the_feature_and_weight_lines(relative, num_new, tmp_path):
    weight_line, old_path = REAL_INIS[relative]
    original = (FIXTURES / relative).read_bytes()
    ini = MosesIni.read(FIXTURES / relative)
    table = ini.phrase_table()
    ini.add_score_columns(table, "model/phrase-table.rnn.gz", num_new, [0.2] * num_new)
    out = tmp_path / "moses.ini"
    ini.write(out)
    before, after = original.decode(), out.read_bytes().decode()
    old_feature = before.splitlines(keepends=True)[table.line_no]
    new_feature = old_feature.replace(f"path={old_path}", "path=model/phrase-table.rnn.gz") \
        .replace("num-features=4", f"num-features={4 + num_new}")
    assert changed_lines(before, after) == [
        (old_feature, new_feature),
        (weight_line + "\n", weight_line + " 0.2" * num_new + "\n"),
    ]


@pytest.mark.parametrize("relative", sorted(REAL_INIS))
def test_unedited_ini_is_written_back_byte_for_byte(relative, tmp_path):
    out = tmp_path / "moses.ini"
    MosesIni.read(FIXTURES / relative).write(out)
    assert out.read_bytes() == (FIXTURES / relative).read_bytes()


def test_features_are_named_like_moses_names_them():
    ini = MosesIni.read(FIXTURES / "model/moses.ini")
    assert [f.name for f in ini.features()] == [
        "UnknownWordPenalty0", "WordPenalty0", "PhrasePenalty0", "TranslationModel0",
        "LexicalReordering0", "Distortion0", "LM0"]
    assert ini.weights("LexicalReordering0") == [0.3] * 6


def test_set_weights_keeps_name_and_line_ending():
    ini = MosesIni.read(FIXTURES / "model/moses.ini")
    ini.set_weights("TranslationModel0", [0.1, -0.25, 1, 2, 3])
    assert "TranslationModel0= 0.1 -0.25 1 2 3\n" in ini.lines


def test_make_paths_absolute_touches_only_path_values(tmp_path):
    ini = MosesIni.read(FIXTURES / "model/moses.ini")
    ini.make_paths_absolute(FIXTURES)
    lines = changed_lines((FIXTURES / "model/moses.ini").read_text(), ini.text())
    assert [new for _, new in lines] == [
        f"PhraseDictionaryMemory name=TranslationModel0 num-features=4 path={FIXTURES}/model/phrase-table.gz input-factor=0 output-factor=0\n",
        f"LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff input-factor=0 output-factor=0 path={FIXTURES}/model/reordering-table.wbe-msd-bidirectional-fe.gz\n",
        f"KENLM name=LM0 factor=0 path={FIXTURES}/lm/fr.binlm order=4\n",
    ]
    assert [old for old, _ in lines] == [
        "PhraseDictionaryMemory name=TranslationModel0 num-features=4 path=model/phrase-table.gz input-factor=0 output-factor=0\n",
        "LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff input-factor=0 output-factor=0 path=model/reordering-table.wbe-msd-bidirectional-fe.gz\n",
        "KENLM name=LM0 factor=0 path=lm/fr.binlm order=4\n",
    ]


def _edited(old: str, new: str) -> tuple[str, str]:
    """An edit of the real moses.ini, applied when the test runs: collecting the tests must not
    read ../shared, which a machine without it lacks (the module is skipped there)."""
    return old, new


def _ini_text(case: str | tuple[str, str]) -> str:
    if isinstance(case, str):
        return case
    old, new = case
    text = (FIXTURES / "model/moses.ini").read_text()
    assert old in text
    return text.replace(old, new)


BAD_INIS = [
    ("pre-2013 format",
     "[ttable-file]\n0 0 0 5 model/phrase-table.gz\n",
     "bad.ini:1: [ttable-file] is the pre-2013 moses.ini format"),
    ("no feature section", "[weight]\nLM0= 0.5\n",
     "bad.ini: expected a [feature] section, found none"),
    ("unsupported table kind",
     _edited("PhraseDictionaryMemory name=", "PhraseDictionaryOnDisk name="),
     "bad.ini:21: cannot add score columns to a PhraseDictionaryOnDisk table"),
    ("two tables, none chosen",
     _edited("Distortion\n", "Distortion\nPhraseDictionaryMemory name=TM1 num-features=4 path=x\n"),
     "bad.ini: expected exactly one phrase table in [feature], found TranslationModel0"),
    ("num-features not a number", _edited("num-features=4 path=model", "num-features=four path=model"),
     "bad.ini:21: expected num-features=<integer> on the TranslationModel0 line, found num-features='four'"),
    ("weight line missing", _edited("TranslationModel0= 0.2 0.2 0.2 0.2\n", ""),
     "bad.ini: expected a line 'TranslationModel0= ...' in [weight], found none"),
    ("argument without =", _edited("input-factor=0 output-factor=0 path=model/re", "input-factor 0 output-factor=0 path=model/re"),
     "bad.ini:22: expected key=value after LexicalReordering, found 'input-factor'"),
]


@pytest.mark.parametrize("text, message", [case[1:] for case in BAD_INIS],
                         ids=[case[0] for case in BAD_INIS])
def test_bad_ini_is_one_clear_line(text, message):
    with pytest.raises(MosesConfigError) as info:
        ini = MosesIni(_ini_text(text), origin="bad.ini")
        ini.features()
        ini.add_score_columns(ini.phrase_table(), "t.gz", 1, [0.2])
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)
