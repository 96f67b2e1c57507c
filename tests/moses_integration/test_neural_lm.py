"""`moses add-feature --nplm`: Moses' NeuralLM line for an NPLM model, the rest of moses.ini kept."""

import functools

import pytest

from moses_integration.errors import MosesConfigError
from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.neural_lm import add_neural_lm_line, neural_lm_start, nplm_order
from rescorer.cli.moses_commands import moses
from tests import helpers
from tests.helpers import FIXTURE_FILES

invoke = functools.partial(helpers.invoke, moses)
NPLM = FIXTURE_FILES / "nplm" / "tiny.nplm"  # written by NPLM's trainer: ngram_size 5

INI = """[input-factors]
0

[feature]
WordPenalty
PhraseDictionaryMemory name=TranslationModel0 num-features=4 path=model/phrase-table.gz input-factor=0 output-factor=0
KENLM name=LM0 factor=0 path=lm/fr.binlm order=4

# dense weights
[weight]
WordPenalty0= -1
TranslationModel0= 0.2 0.2 0.2 0.2
LM0= 0.5

[distortion-limit]
6
"""


@pytest.fixture()
def ini(tmp_path):
    path = tmp_path / "moses.ini"
    path.write_text(INI)
    return path


def test_the_neural_lm_line_and_its_weight_follow_the_sections_last_lines(ini, tmp_path):
    out = tmp_path / "moses.nplm.ini"
    result = invoke("add-feature", ini, "--nplm", NPLM, "-o", out, "--base-dir", FIXTURE_FILES)
    assert result.exit_code == 0, result.output
    expected = INI.replace("order=4\n", "order=4\nNeuralLM factor=0 order=5 path=nplm/tiny.nplm name=NeuralLM0\n")
    assert out.read_text() == expected.replace("LM0= 0.5\n", "LM0= 0.5\nNeuralLM0= 0.1\n")
    assert "NeuralLM factor=0 order=5 path=nplm/tiny.nplm name=NeuralLM0 (line 8), NeuralLM0= 0.1" in result.output
    assert MosesIni.read(out).weights("NeuralLM0") == [0.1]


def test_name_weight_and_an_absolute_path_outside_the_base_dir(ini, tmp_path):
    out = tmp_path / "moses.nplm.ini"
    result = invoke("add-feature", ini, "--nplm", NPLM, "-o", out, "--feature", "CSLM",
                    "--initial-weight", "0.25", "--base-dir", tmp_path)
    assert result.exit_code == 0, result.output
    feature = MosesIni.read(out).feature("CSLM")
    assert (feature.kind, feature.args) == ("NeuralLM", {"factor": "0", "order": "5", "path": str(NPLM.resolve()),
                                                         "name": "CSLM"})
    assert MosesIni.read(out).weights("CSLM") == [0.25]


def test_a_crlf_ini_without_a_final_newline_keeps_its_line_endings(tmp_path):
    path = tmp_path / "moses.ini"
    path.write_bytes(INI.strip().replace("\n", "\r\n").replace("\r\n\r\n[distortion-limit]\r\n6", "").encode())
    out = tmp_path / "out.ini"
    assert invoke("add-feature", path, "--nplm", NPLM, "-o", out).exit_code == 0
    written = out.read_bytes()
    assert written.endswith(b"\r\nLM0= 0.5\r\nNeuralLM0= 0.1\r\n")
    assert b"order=4\r\nNeuralLM factor=0 order=5" in written
    assert b"\n" not in written.replace(b"\r\n", b"")


@pytest.mark.parametrize("args, message", [
    (["--feature", "LM0"], "a feature is already named 'LM0'"),
    (["--feature", "my lm"], "Moses takes a name without spaces"),
])
def test_a_name_moses_would_not_take_is_one_line_and_writes_nothing(ini, tmp_path, args, message):
    result = invoke("add-feature", ini, "--nplm", NPLM, "-o", tmp_path / "out.ini", *args, catch_exceptions=True)
    assert result.exit_code == 1 and message in result.output
    assert not (tmp_path / "out.ini").exists()


@pytest.mark.parametrize("args, message", [
    ([], "give either --table (a rescored phrase table) or --nplm"),
    (["--table", NPLM], "give either --table (a rescored phrase table) or --nplm"),
    (["--new-columns", "rnn"], "does not go with --nplm"),
])
def test_table_and_nplm_are_one_or_the_other(ini, tmp_path, args, message):
    nplm = [] if args == [] else ["--nplm", NPLM]
    result = invoke("add-feature", ini, *nplm, "-o", tmp_path / "out.ini", *args, catch_exceptions=True)
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "out.ini").exists()


@pytest.mark.parametrize("text, message", [
    ("\\config\nversion 1\nngram_size 1\n", r"x.nplm:3: expected ngram_size <order of 2 or more>"),
    ("\\config\nversion 1\n\n\\end\n", r"x.nplm: its \\config gives no ngram_size"),
    ("ngram_size 5\n", r"x.nplm:1: not an NPLM model file"),
])
def test_the_order_comes_from_the_nplm_file_or_one_line_says_why_not(tmp_path, text, message):
    path = tmp_path / "x.nplm"
    path.write_text(text)
    with pytest.raises(MosesConfigError, match=message):
        nplm_order(path)
    assert nplm_order(NPLM) == 5


def test_the_ablations_neural_lm_starts_with_the_ngram_lms_weight(ini):
    """neural_lm_start: the weight of the ini's one n-gram LM (the same units, ln p of the target
    words); --initial-weight instead when given; create_nplm_ini.py's 0.1 with no or two n-gram LMs."""
    system = MosesIni.read(ini)
    assert neural_lm_start(system) == 0.5 and neural_lm_start(system, 0.02) == 0.02
    add_neural_lm_line(system, NPLM, "nplm/tiny.nplm", "NeuralLM0", neural_lm_start(system))
    assert system.weights("NeuralLM0") == [0.5] and neural_lm_start(system) == 0.5  # NeuralLM is no n-gram LM
    two = MosesIni(INI.replace("order=4\n", "order=4\nKENLM name=LM1 factor=0 path=lm/b.binlm order=3\n")
                   .replace("LM0= 0.5\n", "LM0= 0.5\nLM1= 0.3\n"))
    assert neural_lm_start(two) == 0.1
