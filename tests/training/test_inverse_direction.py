"""`--direction inverse`: a model of log p(source | target), trained on the table with its two
phrases swapped, and scored beside the forward model in one pass (the table's p(e|f) and p(f|e))."""

import gzip
import math

import pytest
import torch

from rescorer.cli.main import main
from rescorer.models.model_files import load_model
from tests.helpers import gz_lines, invoke

TRAIN = ["--preset", "tiny", "--max-updates", "12", "--valid-pairs", "50", "--seed", "7"]


def swapped(table, out):
    """The table with its source and target phrases swapped, every other byte kept."""
    lines = []
    for line in gz_lines(table, 600):
        src, tgt, rest = line.split(b" ||| ", 2)
        lines.append(b" ||| ".join([tgt, src, rest]))
    out.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return out


@pytest.fixture(scope="module")
def tables(example_table, tmp_path_factory):
    directory = tmp_path_factory.mktemp("directions")
    table = directory / "table.gz"
    table.write_bytes(gzip.compress(b"\n".join(gz_lines(example_table, 600)) + b"\n"))
    return table, swapped(table, directory / "swapped.gz")


@pytest.fixture(scope="module")
def models(tables, tmp_path_factory):
    table, swapped_table = tables
    directory = tmp_path_factory.mktemp("models")
    paths = {name: directory / f"{name}.pt" for name in ("forward", "inverse", "swapped")}
    for name, path, source, direction in [("forward", paths["forward"], table, "forward"),
                                          ("inverse", paths["inverse"], table, "inverse"),
                                          ("swapped", paths["swapped"], swapped_table, "forward")]:
        result = invoke(main, "-q", "train", source, "-o", path, "--direction", direction, *TRAIN,
                        catch_exceptions=True)
        assert result.exit_code == 0, result.output
    return paths


def test_an_inverse_model_is_the_forward_model_of_the_swapped_table(models):
    inverse, swapped_forward = load_model(models["inverse"]), load_model(models["swapped"])
    assert (inverse.direction, swapped_forward.direction) == ("inverse", "forward")
    assert inverse.src_vocab.tokens == swapped_forward.src_vocab.tokens
    assert inverse.tgt_vocab.tokens == swapped_forward.tgt_vocab.tokens
    for (name, a), b in zip(inverse.model.state_dict().items(), swapped_forward.model.state_dict().values()):
        assert torch.equal(a, b), name
    forward = load_model(models["forward"])
    assert forward.src_vocab.tokens != inverse.src_vocab.tokens  # English words, then French ones


def test_one_pass_appends_both_directions(tables, models, tmp_path):
    """Column 1: log p(target | source); column 2: log p(source | target), equal to what the
    forward model of the swapped table gives the swapped line."""
    table, swapped_table = tables
    both, reference = tmp_path / "both.gz", tmp_path / "reference.gz"
    # One precision for the three runs: under auto, on a CPU with bf16 units, a run's precision is
    # decided by all its models' checks together, so a model alone may score in bf16 and beside
    # another in fp32.
    fp32 = ("--precision", "fp32")
    result = invoke(main, "-q", "score", table, "--model", models["forward"], "--model", models["inverse"],
                    "-o", both, "--score-format", "log", "--unk-penalty", *fp32, catch_exceptions=True)
    assert result.exit_code == 0, result.output
    result = invoke(main, "-q", "score", swapped_table, "--model", models["swapped"], "-o", reference,
                    "--score-format", "log", *fp32, catch_exceptions=True)
    assert result.exit_code == 0, result.output
    forward_only = tmp_path / "forward.gz"
    invoke(main, "-q", "score", table, "--model", models["forward"], "-o", forward_only, "--score-format", "log",
           "--unk-penalty", *fp32)
    for line, swapped_line, forward_line in zip(gz_lines(both), gz_lines(reference), gz_lines(forward_only)):
        scores = line.split(b" ||| ")[2].split()
        forward_scores = forward_line.split(b" ||| ")[2].split()
        assert scores[-3] == forward_scores[-2]  # the forward column, as when scored alone
        assert scores[-2] == swapped_line.split(b" ||| ")[2].split()[-1]  # p(source | target)
        assert scores[-1] == forward_scores[-1]  # the word penalty counts the table's target words
        assert math.isfinite(float(scores[-2]))


def test_resume_keeps_the_direction(tables, tmp_path):
    table, _ = tables
    model = tmp_path / "m.pt"
    assert invoke(main, "-q", "train", table, "-o", model, "--direction", "inverse", *TRAIN,
                  "--checkpoint-every", "5").exit_code == 0
    result = invoke(main, "-q", "train", table, "-o", model, "--direction", "forward", "--resume",
                    "--preset", "tiny", "--max-updates", "20", catch_exceptions=True)
    assert result.exit_code == 1
    assert "direction forward, the checkpoint was trained inverse" in result.output
    result = invoke(main, "-q", "train", table, "-o", model, "--resume", "--max-updates", "20",
                    catch_exceptions=True)
    assert result.exit_code == 0, result.output
    assert load_model(model).direction == "inverse"
