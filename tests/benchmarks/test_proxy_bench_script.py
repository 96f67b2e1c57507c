"""benchmarks/studies/proxy/proxy_bench.py: its column indices and reference files are checked before
any work, in one line."""

import pytest

from benchmarks.studies.proxy.proxy_bench import column_reader, parse_system, read_side
from tests.fake_moses import FIXTURES, needs_fixtures


@pytest.mark.parametrize("spec", ["1", "11", "-1", "-11", "-3/word"])
def test_indices_inside_the_scores_are_taken(spec):
    value_of = column_reader(spec, 11, {("a", "b"): tuple(float(i + 1) / 20 for i in range(11))})
    assert value_of(("c", "d")) is None and value_of(("a", "b")) < 0


@pytest.mark.parametrize("spec", ["0", "12", "-12", "3/char"])
def test_indices_outside_the_scores_are_refused(spec):
    with pytest.raises(SystemExit, match=rf"--column index '{spec}': expected 1\.\.11 or -1\.\.-11"):
        column_reader(spec, 11, {})


def test_systems_add_and_drop_by_name():
    system = parse_system("+x=fwd,-LM0,inv")
    assert (system.name, system.added, system.dropped) == ("+x", ("fwd", "inv"), ("LM0",))


@needs_fixtures
def test_a_reference_of_another_length_is_named(tmp_path):
    short = tmp_path / "short.fr"
    short.write_text("one line\n")
    files = (FIXTURES / "nbest/dev.nbest200.gz", FIXTURES / "corpus/dev.en.gz", [short])
    with pytest.raises(SystemExit, match=rf"{short}: 1 line, but the source .*dev.en.gz has 842"):
        read_side(files)
