"""Streaming a real table through a model: one more column, right values, nothing lost."""

import gzip
import math

import numpy as np
import pytest

from rescorer.errors import PhraseTableFormatError
from rescorer.io.score_format import decode_moses_score
from rescorer.io.table_reader import PhraseTableReader
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.scoring.settings import ScoreSettings
from rescorer.scoring.table_rescoring import rescore_table
from tests.helpers import FIXTURE_FILES

FIELD = " ||| "


def read_lines(path):
    with gzip.open(path, "rb") as handle:
        return handle.read().split(b"\n")[:-1]


def split_scores(line: bytes):
    fields = line.split(b" ||| ")
    return fields[:2], fields[2].split(), fields[3:]


@pytest.fixture(scope="module")
def example_pairs(example_table):
    with PhraseTableReader(example_table) as reader:
        return [(e.src, e.tgt) for e in reader]


def test_appends_the_model_score_and_keeps_everything_else(tiny_bundle, example_table, example_pairs, tmp_path):
    out = tmp_path / "out.gz"
    summary = rescore_table(example_table, out, tiny_bundle, ScoreSettings(unk_penalty=True, chunk_size=1500))
    before, after = read_lines(example_table), read_lines(out)
    assert summary.lines_read == summary.lines_written == len(after) == len(before) == 4000
    assert summary.lines_rejected == 0
    want = score_pairs(tiny_bundle, example_pairs, device="cpu")
    got, penalties = [], []
    for old, new in zip(before, after, strict=True):
        old_phrases, old_scores, old_rest = split_scores(old)
        new_phrases, new_scores, new_rest = split_scores(new)
        assert (new_phrases, new_scores[:-2], new_rest) == (old_phrases, old_scores, old_rest)
        got.append(decode_moses_score(new_scores[-2].decode()))
        penalties.append(decode_moses_score(new_scores[-1].decode()))
    np.testing.assert_allclose(got, np.maximum(want, -100), atol=1e-4, rtol=0)
    unknown = [sum(not tiny_bundle.tgt_vocab.is_known(w) for w in tgt.split()) for _, tgt in example_pairs]
    np.testing.assert_allclose(penalties, unknown, atol=1e-4)
    assert sum(unknown) > 0  # the tiny model's 2,000-word shortlist leaves words out
    assert summary.mean_log_prob == pytest.approx(float(np.mean(want)), abs=1e-6)
    assert summary.tgt_coverage == pytest.approx(1 - sum(unknown) / sum(len(t.split()) for _, t in example_pairs))


def test_output_does_not_depend_on_chunk_size(tiny_bundle, example_table, tmp_path):
    rescore_table(example_table, tmp_path / "a.gz", tiny_bundle,
                  ScoreSettings(chunk_size=20000, score_format="log"))
    rescore_table(example_table, tmp_path / "b.gz", tiny_bundle,
                  ScoreSettings(chunk_size=77, token_budget=300, score_format="log"))
    a = [float(split_scores(line)[1][-1]) for line in read_lines(tmp_path / "a.gz")]
    b = [float(split_scores(line)[1][-1]) for line in read_lines(tmp_path / "b.gz")]
    np.testing.assert_allclose(a, b, atol=1e-4, rtol=0)
    assert min(a) < -5  # raw log p, not a probability


def test_bad_line_fails_and_leaves_no_output(tiny_bundle, tmp_path):
    table = tmp_path / "bad.gz"
    table.write_bytes(gzip.compress(b"a ||| b ||| 0.5 0.5\nc ||| d ||| 0.5 zero\n"))
    out = tmp_path / "out.gz"
    with pytest.raises(PhraseTableFormatError, match=r"bad.gz:2: non-numeric score"):
        rescore_table(table, out, tiny_bundle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.gz"]


def test_rejected_lines_are_accounted_for(tiny_bundle, tmp_path):
    lines = [b"a ||| b ||| 0.5 0.5", b"broken line", b"c ||| d ||| 0.5", b"e ||| f ||| 0.1 0.2 ||| 0-0"]
    table = tmp_path / "t.txt"
    table.write_bytes(b"\n".join(lines) + b"\n")
    summary = rescore_table(table, tmp_path / "out.txt", tiny_bundle,
                            ScoreSettings(reject_path=tmp_path / "rejects"))
    assert (summary.lines_read, summary.lines_written, summary.lines_rejected) == (4, 2, 2)
    assert (tmp_path / "rejects").read_bytes() == lines[1] + b"\n" + lines[2] + b"\n"
    out = (tmp_path / "out.txt").read_bytes().split(b"\n")
    assert out[0].startswith(b"a ||| b ||| 0.5 0.5 ") and out[1].endswith(b" ||| 0-0")
    assert math.isfinite(float(out[1].split(b" ||| ")[2].split()[-1]))


def test_several_models_append_one_column_each_in_the_order_given(tiny_bundle, example_table,
                                                                   example_pairs, tmp_path):
    from rescorer.models.model_files import load_model

    other = load_model(FIXTURE_FILES / "v1-model.pt")  # a 300-word shortlist
    out = tmp_path / "multi.gz"
    summary = rescore_table(example_table, out, [other, tiny_bundle, other],
                            ScoreSettings(unk_penalty=True, score_format="log", chunk_size=1500))
    columns = np.array([[float(score) for score in split_scores(line)[1][-4:]] for line in read_lines(out)])
    assert columns.shape == (4000, 4) and summary.lines_written == 4000
    want = [score_pairs(bundle, example_pairs, device="cpu") for bundle in (other, tiny_bundle, other)]
    for column, scores in enumerate(want):
        np.testing.assert_allclose(columns[:, column], scores, atol=1e-4, rtol=0)
    assert summary.mean_log_probs == pytest.approx([float(np.mean(scores)) for scores in want], abs=1e-6)
    # The word penalty (written as exp(count)): target words outside the FIRST model's shortlist.
    unknown = [sum(not other.tgt_vocab.is_known(w) for w in tgt.split()) for _, tgt in example_pairs]
    np.testing.assert_allclose(np.log(columns[:, 3]), unknown, atol=1e-4)
    assert summary.shortlists_differ
    assert summary.tgt_coverages[0] == summary.tgt_coverages[2] < summary.tgt_coverages[1]
    report = summary.report(["a.pt", "b.pt", "c.pt"], None, True, out)
    assert "mean log p a.pt " in report and ", c.pt " in report and "outside a.pt's target shortlist" in report


def test_models_sharing_shortlists_share_one_encoding(tiny_bundle, example_table, tmp_path):
    summary = rescore_table(example_table, tmp_path / "twice.gz", [tiny_bundle, tiny_bundle],
                            ScoreSettings(unk_penalty=True, score_format="log"))
    columns = [split_scores(line)[1][-3:] for line in read_lines(tmp_path / "twice.gz")]
    assert all(scores[0] == scores[1] for scores in columns)
    assert not summary.shortlists_differ and summary.mean_log_probs[0] == summary.mean_log_probs[1]
    assert "differ" not in summary.report(["a.pt", "b.pt"], None, True, tmp_path / "twice.gz")


def test_a_subword_model_scores_its_pieces_beside_a_word_model(tiny_bundle, subword_bundle, example_table,
                                                               example_pairs, tmp_path):
    out = tmp_path / "mixed.gz"
    summary = rescore_table(example_table, out, [subword_bundle, tiny_bundle],
                            ScoreSettings(score_format="log", chunk_size=1500))
    columns = np.array([[float(score) for score in split_scores(line)[1][-2:]] for line in read_lines(out)])
    for column, bundle in enumerate((subword_bundle, tiny_bundle)):
        want = np.maximum(score_pairs(bundle, example_pairs, device="cpu"), -100)  # the column's floor
        np.testing.assert_allclose(columns[:, column], want, atol=1e-4, rtol=0)
    # coverage is of the table's words: the word model's as alone, the subword model's whole
    alone = rescore_table(example_table, tmp_path / "alone.gz", tiny_bundle, ScoreSettings(score_format="log"))
    assert summary.tgt_coverages == [1.0, alone.tgt_coverage] and alone.tgt_coverage < 1.0
