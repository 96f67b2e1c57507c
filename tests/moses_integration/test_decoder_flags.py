"""--decoder-flags: split into words, and refused in one line when mert-moses.pl would die on
them or when they would replace what the ablation sets itself."""

import pytest

from moses_integration.ini.decoder_flags import parse_decoder_flags
from moses_integration.errors import MosesConfigError


@pytest.mark.parametrize("text, words", [
    ("", ()),
    ("-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400",
     ("-search-algorithm", "1", "-cube-pruning-pop-limit", "400", "-s", "400")),
    ("  -distortion-limit   -1 ", ("-distortion-limit", "-1")),  # a negative value is a value
    ("--beam-threshold 0.03", ("--beam-threshold", "0.03")),
])
def test_good_flags(text, words):
    assert parse_decoder_flags(text) == words


@pytest.mark.parametrize("text, message", [
    ("-f other.ini", "--decoder-flags: -f cannot be used here: the ini is given by the command"),
    ("-s 400 -config x.ini", "--decoder-flags: -config cannot be used here"),
    ("-threads 8", "--decoder-flags: -threads cannot be used here: use --threads"),
    ("-ttable-file pt.gz", "--decoder-flags: -ttable-file cannot be used here: mert-moses.pl refuses it"),
    ("-weight-overwrite LM0=", "--decoder-flags: -weight-overwrite cannot be used here: weights come from the ini"),
    ("-xml-input 'a b'", "--decoder-flags: 'a b' cannot be passed through mert-moses.pl, which splits"),
    ("400 -s", "--decoder-flags: expected a -flag first, found '400' in '400 -s'"),
    ("-s 400; rm x", "--decoder-flags: '400;' cannot be passed through mert-moses.pl"),
    ("-s '400", "--decoder-flags: cannot split \"-s '400\" into words (No closing quotation)"),
])
def test_refused_flags(text, message):
    with pytest.raises(MosesConfigError) as info:
        parse_decoder_flags(text)
    assert str(info.value).startswith(message)
