"""`rescore train --parallel SRC TGT`: a sentence model trained on a parallel corpus, with the
shortlists counted on it, its length bound, errors and rejects, and resume."""

import re

import pytest
import torch

from rescorer.models.model_files import load_model, read_model_file
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.training.resume import recorded_training
from tests.helpers import EXAMPLE_TABLE, SHARED, first_lines, rescore

CORPUS = SHARED / "data" / "bible-en-fr" / "corpus"
TINY = ["--preset", "tiny", "--valid-pairs", "20", "--valid-every", "10", "--seed", "3"]

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")


@pytest.fixture()
def sides(tmp_path):
    return (first_lines(CORPUS / "train.en.gz", 120, tmp_path / "train.en.gz"),
            first_lines(CORPUS / "train.fr.gz", 120, tmp_path / "train.fr"))


def test_trains_a_sentence_model_on_the_corpus(tmp_path, sides):
    model = tmp_path / "s.pt"
    run = rescore("train", "--parallel", *sides, "-o", model, *TINY, "--max-updates", "20",
                  "--max-pair-length", "30", "--arch", "cho2014", "--subwords", "none")  # a model of words
    assert run.returncode == 0, run.stderr
    said = run.stderr
    assert "shortlists from parallel corpus train.en.gz, train.fr:" in said
    bundle = load_model(model)
    assert bundle.tgt_vocab.is_known("commencement") and bundle.src_vocab.is_known("beginning")
    long_pairs = sum(1 for e, f in zip(_lines(sides[0]), _lines(sides[1]))
                     if max(len(e.split()), len(f.split())) > 30)
    assert long_pairs > 0 and f"{long_pairs} longer than 30 words left out" in said
    trained, held = map(int, re.search(r"trained on (\d+) pairs \((\d+) held out", said).groups())
    assert trained + held == 120 - long_pairs
    assert "rescore train --parallel" in said  # what to run to train more
    record = read_model_file(model)["training"]
    assert record["corpus_source_name"] == "train.en.gz" and record["corpus_target_name"] == "train.fr"
    scores = score_pairs(bundle, [("in the beginning god created", "au commencement dieu créa")])
    assert torch.isfinite(torch.as_tensor(scores)).all()


def _lines(path):
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_the_default_length_bound_is_80_words(tmp_path, sides):
    run = rescore("train", "--parallel", *sides, "-o", tmp_path / "m.pt", *TINY, "--max-updates", "2")
    assert run.returncode == 0, run.stderr
    assert "longer than" not in run.stderr  # the bible corpus was cleaned to 80 words a side
    assert recorded_training(read_model_file(tmp_path / "m.pt")["training"])[0]["max_pair_length"] == 80


def test_an_empty_side_stops_training_or_goes_to_the_rejects(tmp_path, sides):
    target = tmp_path / "bad.fr"
    lines = _lines(sides[1])
    lines[6] = ""
    target.write_text("\n".join(lines) + "\n")
    run = rescore("train", "--parallel", sides[0], target, "-o", tmp_path / "m.pt", *TINY, "--max-updates", "2")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1].startswith(f"Error: {target}:7: empty target sentence")
    assert "Traceback" not in run.stderr and not (tmp_path / "m.pt").exists()
    rejects = tmp_path / "rejects.txt"
    run = rescore("train", "--parallel", sides[0], target, "-o", tmp_path / "m.pt", *TINY, "--max-updates", "2",
                  "--reject", rejects)
    assert run.returncode == 0, run.stderr
    assert rejects.read_text() == f"7\t{_lines(sides[0])[6]}\t\n"


def test_sides_of_different_lengths(tmp_path, sides):
    short = first_lines(CORPUS / "train.fr.gz", 119, tmp_path / "short.fr")
    run = rescore("train", "--parallel", sides[0], short, "-o", tmp_path / "m.pt", *TINY)
    assert run.returncode == 1
    assert f"Error: {short}:120: the target side ends after 119 lines" in run.stderr


@pytest.mark.parametrize("extra, said", [
    (["--pair-weights", "count"], "a parallel corpus has no pair counts"),
    (["--src-corpus", "SRC", "--tgt-corpus", "TGT"], "the shortlists are counted on the corpus itself"),
    (["TABLE"], "give a PHRASE_TABLE or --parallel SRC TGT (one of them)"),
])
def test_options_a_corpus_cannot_take(tmp_path, sides, extra, said):
    extra = [str(sides[0]) if a in ("SRC", "TABLE") else str(sides[1]) if a == "TGT" else a for a in extra]
    run = rescore("train", "--parallel", *sides, "-o", tmp_path / "m.pt", *TINY, *extra)
    assert run.returncode == 2 and said in run.stderr


def test_resume_continues_and_refuses_another_corpus(tmp_path, sides):
    model = tmp_path / "m.pt"
    common = ["-o", model, *TINY, "--checkpoint-every", "5"]
    assert rescore("train", "--parallel", *sides, *common, "--max-updates", "5").returncode == 0
    run = rescore("train", "--parallel", *sides, *common, "--max-updates", "10", "--resume")
    assert run.returncode == 0, run.stderr
    assert read_model_file(model)["training"]["state"]["updates"] == 10
    other = first_lines(CORPUS / "train.fr.gz", 120, tmp_path / "other.fr.gz")
    run = rescore("train", "--parallel", sides[0], other, *common, "--max-updates", "15", "--resume")
    assert run.returncode == 1 and "corpus-target-name 'train.fr' (checkpoint) vs 'other.fr.gz' (now)" in run.stderr
    table = first_lines(EXAMPLE_TABLE, 50, tmp_path / "t.gz")
    run = rescore("train", table, *common, "--max-updates", "15", "--resume")  # issue 32 case 11: a KeyError
    assert run.returncode == 1 and "Traceback" not in run.stderr
    # the recipe's checkpoint reads subwords, as a table's model may: the other source is named
    assert "trained on parallel corpus 'train.en.gz', 'train.fr' (checkpoint) vs phrase table 't.gz' (now)" in \
        run.stderr.splitlines()[-1]
