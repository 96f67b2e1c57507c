"""The extractor in Python writes Moses' own files: byte for byte those mert-moses.pl's
extractor wrote for the real iteration-1 list (features, BLEU statistics, duplicates dropped)."""

import gzip

from moses_integration.line_files import read_lines
from moses_integration.nbest.python_extractor import extract_in_python
from tests.fake_moses import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

TUNING = FIXTURES / "tuning"


def test_the_files_are_the_real_extractors_to_the_byte(tmp_path):
    features, scores = tmp_path / "features.dat", tmp_path / "scores.dat"
    extract_in_python(TUNING / "run1.best100.out.gz", read_lines(FIXTURES / "corpus/dev.en.gz"),
                      [FIXTURES / "corpus/dev.fr.gz"], features, scores)
    assert features.read_bytes() == gzip.open(TUNING / "run1.features.dat.gz").read()
    assert scores.read_bytes() == gzip.open(TUNING / "run1.scores.dat.gz").read()
