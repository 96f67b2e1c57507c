"""The example table encoded once per module, for the trainer tests (tests/training/trainers.py
builds their Trainers on it)."""

import pytest

from rescorer.training.pipeline import PairEncoding, build_vocabularies, encode_table


@pytest.fixture(scope="module")
def example_cache(example_table, tmp_path_factory):
    vocabularies = build_vocabularies(example_table, 2000)
    cache = encode_table(example_table, PairEncoding(vocabularies.src_vocab, vocabularies.tgt_vocab),
                         tmp_path_factory.mktemp("cache") / "pairs")
    return vocabularies, cache
