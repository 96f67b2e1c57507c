"""`--pair-weights`: each pair once (the paper), by the table's c(pair), or by 1 + ln c(pair)."""

import gzip
import math

import numpy as np
import pytest
import torch

from rescorer.cli.main import main
from rescorer.errors import PhraseTableFormatError
from rescorer.io.table_reader import PhraseTableReader, pair_count
from rescorer.models import ModelSettings
from rescorer.models.model_files import ModelBundle, read_model_file
from rescorer.training.pipeline import PairEncoding, build_vocabularies, encode_table, new_model
from rescorer.training.trainer import Trainer, TrainSettings, batch_tensors
from rescorer.training.resume import recorded_training
from tests.helpers import first_lines, gz_lines, invoke


def table_counts(table):
    return [float(line.split(b" ||| ")[4].split()[2]) for line in gz_lines(table)]


@pytest.fixture(scope="module")
def table(example_table, tmp_path_factory):
    return first_lines(example_table, 800, tmp_path_factory.mktemp("weights") / "t.gz")


def test_the_count_is_the_third_number_of_the_counts_field(table):
    with PhraseTableReader(table) as reader:
        counts = [pair_count(entry, "t.gz") for entry in reader]
    assert counts == table_counts(table) and max(counts) > 1


def test_a_line_without_counts_is_named(tmp_path):
    path = tmp_path / "pt.gz"
    path.write_bytes(gzip.compress(b"a ||| b ||| 0.5 ||| 0-0 ||| 3 2 1 ||| |||\nc ||| d ||| 0.5 ||| 0-0\n"))
    with PhraseTableReader(path) as reader:
        first, second = list(reader)
        assert pair_count(first, "pt.gz") == 1.0
        with pytest.raises(PhraseTableFormatError, match=r"pt.gz:2: expected the counts field .* found 'no counts"):
            pair_count(second, "pt.gz")


@pytest.mark.parametrize("kind, weight", [("count", lambda c: c), ("log-count", lambda c: 1 + math.log(c))])
def test_the_loss_is_the_weighted_mean(table, tmp_path, kind, weight):
    vocabularies = build_vocabularies(table, 2000)
    cache = encode_table(table, PairEncoding(vocabularies.src_vocab, vocabularies.tgt_vocab, with_counts=True),
                         tmp_path / "cache")
    assert cache.counts.tolist() == table_counts(table)
    torch.manual_seed(0)
    model = new_model(ModelSettings.make("cho2014", "tiny"), vocabularies.src_vocab, vocabularies.tgt_vocab)
    trainer = Trainer(ModelBundle(model, vocabularies.src_vocab, vocabularies.tgt_vocab), cache,
                      TrainSettings(pair_weights=kind, valid_pairs=50, batch_tokens=400), torch.device("cpu"),
                      "fp32", tmp_path / "ckpt")
    indices = trainer.schedule.batch(0)
    weights = np.array([weight(c) for c in np.asarray(cache.counts)[indices]])
    with torch.no_grad():
        logp = trainer.model(*batch_tensors(cache, indices, torch.device("cpu")),
                             sampled=trainer.sampled_words()).numpy()
    assert weights.std() > 0  # the batch mixes counts, so the weighting shows
    assert trainer.step() == pytest.approx(-(weights * logp).sum() / weights.sum(), rel=1e-4)


def test_training_records_the_weights_and_resume_keeps_them(table, tmp_path):
    model = tmp_path / "m.pt"
    args = ["-q", "train", table, "-o", model, "--preset", "tiny", "--valid-pairs", "50", "--checkpoint-every", "3"]
    result = invoke(main, *args, "--pair-weights", "log-count", "--max-updates", "3", catch_exceptions=True)
    assert result.exit_code == 0, result.output
    assert recorded_training(read_model_file(model)["training"])[0]["pair_weights"] == "log-count"
    result = invoke(main, *args, "--pair-weights", "unique", "--max-updates", "6", "--resume",
                    catch_exceptions=True)
    assert result.exit_code == 1 and "pair-weights 'log-count' (checkpoint) vs 'unique' (now)" in result.output
    assert invoke(main, *args, "--max-updates", "6", "--resume").exit_code == 0


def _table_with_count(tmp_path, table, count: bytes):
    """The table with line 5's c(pair) replaced."""
    lines = gz_lines(table, 40)
    fields = lines[4].split(b" ||| ")
    fields[4] = b" ".join(fields[4].split()[:2] + [count])
    lines[4] = b" ||| ".join(fields)
    path = tmp_path / "counts.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return path


@pytest.mark.parametrize("kind, count, said", [
    ("count", b"1e39", "pair count '1e39' is out of range (a count that weighs a pair is at most 1e+30)"),
    ("log-count", b"inf", "pair count 'inf' is not a finite number"),
    ("count", b"nan", "pair count 'nan' is not a finite number"),
    ("log-count", b"0.2", "pair count '0.2' is not above 0.3679 (1/e): --pair-weights log-count would weigh the "
                          "pair 1 + ln c(pair) <= 0"),
])
def test_a_count_no_weight_can_come_from_is_named_with_its_line(table, tmp_path, kind, count, said):
    """Issue 32 case 18: c(pair) = inf or 1e39 made the loss nan ("training diverged ... lower
    --learning-rate"), and a count below 1/e a negative log-count weight, the line never named."""
    bad = _table_with_count(tmp_path, table, count)
    result = invoke(main, "train", bad, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-updates", "2",
                    "--valid-pairs", "5", "--pair-weights", kind, catch_exceptions=True)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == f"Error: {bad}:5: {said}" + (
        " (--pair-weights count takes it)" if count == b"0.2" else "")
    assert not (tmp_path / "m.pt").exists() and not (tmp_path / "m.pt.cache").exists()


def test_a_count_below_one_over_e_is_a_fine_count_weight(table, tmp_path):
    bad = _table_with_count(tmp_path, table, b"0.2")
    result = invoke(main, "-q", "train", bad, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-updates", "2",
                    "--valid-pairs", "5", "--pair-weights", "count", catch_exceptions=True)
    assert result.exit_code == 0, result.output
