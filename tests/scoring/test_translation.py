"""`rescore translate`: one output line per input line, in input order whatever the batching;
beam 1 is greedy decoding; the n-best list holds K distinct hypotheses in Moses' format."""

import os
import subprocess

import pytest

from rescorer.models.search import greedy_decode
from rescorer.records import SettingError
from rescorer.scoring.translation import SearchSettings, max_output_length, translate_file, with_length_cap
from tests.helpers import rescore

SENTENCES = ["in the beginning god created the heavens", "", "and the earth", "god said ,",
             "let there be light , and there was light", "the evening"]


@pytest.fixture()
def source(tmp_path):
    path = tmp_path / "input.en"
    path.write_text("\n".join(SENTENCES) + "\n")
    return path


def words(bundle, tokens):
    return " ".join(bundle.tgt_vocab.tokens[t] for t in tokens)


def test_beam_one_is_greedy_in_input_order(tiny_bundle, source, tmp_path):
    out = tmp_path / "out.fr"
    settings = SearchSettings(beam=1, batch_size=2, alpha=0.0)
    summary = translate_file(tiny_bundle, source, out, settings)
    settings = with_length_cap(tiny_bundle, settings)  # the cap translate_file used
    lines = out.read_text().split("\n")
    assert lines[-1] == "" and len(lines) - 1 == len(SENTENCES)
    assert (summary.sentences, summary.empty) == (6, 1)
    for sentence, line in zip(SENTENCES, lines):
        if not sentence:
            assert line == ""
            continue
        ids = tiny_bundle.src_vocab.encode(sentence.split())
        greedy = greedy_decode(tiny_bundle.model, ids, max_output_length(len(ids), settings))
        assert line == words(tiny_bundle, greedy.tokens)


def test_nbest_list_in_moses_format(tiny_bundle, source, tmp_path):
    nbest = tmp_path / "out.nbest"
    translate_file(tiny_bundle, source, tmp_path / "out.fr", SearchSettings(beam=4, nbest_size=3, batch_size=4),
                   nbest_path=nbest)
    rows = [line.split(" ||| ") for line in nbest.read_text().splitlines()]
    by_id = {}
    for sentence_id, hypothesis, features, total in rows:
        assert features.startswith("RNN= ")
        by_id.setdefault(int(sentence_id), []).append((hypothesis, float(total)))
    assert sorted(by_id) == [0, 2, 3, 4, 5]  # no hypotheses for the empty line
    first_best = (tmp_path / "out.fr").read_text().splitlines()
    for sentence_id, hypotheses in by_id.items():
        assert len(hypotheses) == 3 and len({h for h, _ in hypotheses}) == 3
        assert [t for _, t in hypotheses] == sorted((t for _, t in hypotheses), reverse=True)
        assert hypotheses[0][0] == first_best[sentence_id]


def test_the_command(tiny_model_path, source, tmp_path):
    out = tmp_path / "out.fr"
    run = rescore("translate", tiny_model_path, "--input", source, "-o", out, "--beam", "2")
    assert run.returncode == 0, run.stderr
    assert f"{out}: 6 lines translated (1 empty line left empty" in run.stderr
    assert len(out.read_text().splitlines()) == 6
    again = rescore("translate", tiny_model_path, "--input", source, "-o", out)
    assert again.returncode != 0 and "--force" in again.stderr
    wide = rescore("translate", tiny_model_path, "--input", source, "-o", tmp_path / "x", "--beam", "2",
                   "--nbest-size", "3", "--nbest-out", tmp_path / "nb")
    assert wide.returncode == 2 and "--nbest-size 3 is more than the beam keeps (--beam 2)" in wide.stderr
    assert not (tmp_path / "x").exists()


def test_both_outputs_on_stdout_are_refused(tiny_model_path, source):
    """Issue 32, case 9: the 1-best lines and the n-best list would interleave in one stream."""
    run = rescore("translate", tiny_model_path, "--input", source, "-o", "-", "--nbest-out", "-",
                  "--nbest-size", "2")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines()[-1] == ("Error: -o - and --nbest-out - would interleave the 1-best lines and "
                                           "the n-best list on standard output: give one of them a file")


def test_the_beam_is_bounded_as_generate_bounds_it(tiny_model_path, source, tmp_path):
    """Issue 32, case 13: --beam 100000 ran out of memory (bad_alloc) in the search."""
    run = rescore("translate", tiny_model_path, "--input", source, "-o", tmp_path / "out.fr", "--beam", "100000")
    assert run.returncode == 2 and "'--beam': 100000 is not in the range 1<=x<=1000." in run.stderr
    assert not (tmp_path / "out.fr").exists()
    with pytest.raises(SettingError, match="beam.*expected <= 1000"):
        SearchSettings(beam=1001)
    assert SearchSettings(beam=1000).beam == 1000


def test_a_device_or_a_fifo_is_written_as_a_stream(tiny_model_path, source, tmp_path):
    """Issue 32, case 22: as `score` does (docs/guarantees.md), and as `-o -` already did."""
    expected = tmp_path / "out.fr"
    assert rescore("translate", tiny_model_path, "--input", source, "-o", expected, "--beam", "2").returncode == 0
    run = rescore("translate", tiny_model_path, "--input", source, "-o", "/dev/null", "--beam", "2",
                  "--nbest-out", tmp_path / "out.nbest", "--nbest-size", "2")
    assert run.returncode == 0, run.stderr
    assert len((tmp_path / "out.nbest").read_text().splitlines()) == 2 * 5  # 5 non-empty lines, 2 each
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    run = rescore("translate", tiny_model_path, "--input", source, "-o", fifo, "--beam", "2", timeout=120)
    if run.returncode != 0:
        reader.kill()  # nobody opened the FIFO for writing
    assert run.returncode == 0, run.stderr
    assert reader.communicate(timeout=60)[0] == expected.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "input.en", "out.fr", "out.nbest"]


def test_min_length_holds_every_translation_back_from_ending(tiny_model_path, source, tmp_path):
    plain, longer = tmp_path / "plain.fr", tmp_path / "longer.fr"
    assert rescore("translate", tiny_model_path, "--input", source, "-o", plain, "--beam", "2").returncode == 0
    run = rescore("translate", tiny_model_path, "--input", source, "-o", longer, "--beam", "2", "--min-length", "6")
    assert run.returncode == 0, run.stderr
    assert "min-length:6" in run.stderr  # the signature line
    lengths = [len(line.split()) for line, sentence in zip(longer.read_text().splitlines(), SENTENCES) if sentence]
    assert len(lengths) == 5 and min(lengths) >= 6
    assert min(len(line.split()) for line in plain.read_text().splitlines() if line) < 6
    refused = rescore("translate", tiny_model_path, "--input", source, "-o", tmp_path / "x", "--min-length", "0")
    assert refused.returncode == 2 and "'--min-length': 0 is not in the range x>=1." in refused.stderr
