"""The bundled examples are what their cut scripts make of the real data, byte for byte, so the
guides and the quick start run on real Moses files, not hand-made ones."""

import importlib.util

from tests.helpers import REPO


def _cut_script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rerank_example_is_the_cut_of_the_stored_lists(shared_data, tmp_path):
    _cut_script("cut_example_nbest").main(shared_data, tmp_path)
    bundled = REPO / "examples" / "rerank"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in bundled.iterdir())
    for made in tmp_path.iterdir():
        assert made.read_bytes() == (bundled / made.name).read_bytes(), made.name


def test_the_rerank_lists_hold_twenty_hypotheses_of_each_of_the_first_hundred_verses():
    import gzip

    for part in ("dev", "test"):
        with gzip.open(REPO / "examples" / "rerank" / f"{part}.nbest.gz", "rt", encoding="utf-8") as lines:
            ids = [int(line.split(" ||| ", 1)[0]) for line in lines]
        assert sorted(set(ids)) == list(range(100))
        assert max(ids.count(i) for i in range(100)) == 20
        assert ids == sorted(ids)  # the decoder's order: a verse's lines together, best first
