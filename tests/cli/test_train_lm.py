"""`rescore train --lm`: gzip and stdin read, bad input refused in one line naming file and line,
nothing written then, options that mean nothing for an LM refused, and a model of one kind
refused where the other is expected."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from click.testing import CliRunner

from rescorer.cli.main import main

FAST = ["--preset", "tiny", "--max-updates", "4", "--valid-every", "2", "--valid-pairs", "3",
        "--batch-size", "8"]
TEXT = b"".join(f"le {w} de la terre et {w} du ciel .\n".encode() for w in ("fils", "roi", "dieu") * 10)


def run(*args, input: bytes = None):
    return CliRunner().invoke(main, ["-q", *map(str, args)], input=input)


def one_line_error(result) -> str:
    """The one error line of a failed run (exit 1; 2 for bad usage, after click's usage lines)."""
    assert result.exit_code in (1, 2) and "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    return errors[0]


@pytest.fixture()
def lm_model(tmp_path) -> Path:
    text = tmp_path / "text.fr.gz"
    text.write_bytes(gzip.compress(TEXT))
    result = run("train", "--lm", text, "-o", tmp_path / "lm.pt", *FAST)
    assert result.exit_code == 0, result.output
    return tmp_path / "lm.pt"


def test_gzip_and_stdin_give_the_same_model(tmp_path, lm_model):
    result = run("train", "--lm", "-", "-o", tmp_path / "stdin.pt", *FAST, input=TEXT)
    assert result.exit_code == 0, result.output
    assert lm_model.read_bytes() != b"" and (tmp_path / "stdin.pt").is_file()
    import torch

    gz, stdin = (torch.load(path)["weights"] for path in (lm_model, tmp_path / "stdin.pt"))
    assert all(torch.equal(gz[k], stdin[k]) for k in gz)


@pytest.mark.parametrize("text, expected", [
    (b"", r"text.fr: the corpus is empty"),
    (b"un deux\n\ntrois\n", r"text.fr:2: empty line"),
    (b"un\n" + b"mot " * 1001 + b"\n", r"text.fr:2: 1001 words, more than the 1000 a sentence may have"),
])
def test_bad_input_is_one_line_naming_file_and_line_and_writes_nothing(tmp_path, text, expected):
    (tmp_path / "text.fr").write_bytes(text)
    line = one_line_error(run("train", "--lm", tmp_path / "text.fr", "-o", tmp_path / "lm.pt", *FAST))
    assert expected in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["text.fr"]


@pytest.mark.parametrize("args, expected", [
    (["--direction", "inverse"], "--direction: not for a language model (--lm)"),
    (["--arch", "luong"], "--arch: not for a language model (--lm)"),
    (["--cell", "lstm", "--layer-norm"], "--cell, --layer-norm: not for a language model (--lm), whose sizes are its "
                                         "--preset's; drop them"),
    (["--reject", "rejects.txt"], "--reject: not for a language model (--lm)"),
])
def test_options_an_lm_has_no_use_for_are_refused(tmp_path, args, expected):
    (tmp_path / "text.fr").write_bytes(TEXT)
    assert expected in one_line_error(run("train", "--lm", tmp_path / "text.fr", "-o", tmp_path / "lm.pt",
                                          *FAST, *args))


def test_lm_options_without_lm_are_refused(tmp_path, example_table):
    line = one_line_error(run("train", example_table, "-o", tmp_path / "m.pt", "--order", "5"))
    assert "--order: only with --lm" in line


def test_an_lm_given_as_a_phrase_model_is_refused_in_one_line(tmp_path, lm_model, example_table):
    line = one_line_error(run("score", example_table, "--model", lm_model, "-o", tmp_path / "out.gz"))
    assert "lm.pt: a target language model (kind lm" in line
    assert not (tmp_path / "out.gz").exists()


def test_a_phrase_checkpoint_is_refused_where_an_lm_checkpoint_is_resumed(tmp_path, tiny_model_path):
    (tmp_path / "text.fr").write_bytes(TEXT)
    (tmp_path / "lm.pt.checkpoint").write_bytes(tiny_model_path.read_bytes())
    (tmp_path / "lm.pt").write_bytes(tiny_model_path.read_bytes())
    line = one_line_error(run("train", "--lm", tmp_path / "text.fr", "-o", tmp_path / "lm.pt", "--resume"))
    assert "a phrase model" in line and "not a language model" in line


def test_the_lm_recipe_is_the_default_and_each_part_can_be_changed(tmp_path, lm_model):
    """--lm's measured recipe (benchmarks/RESULTS.md, CSLM part 2): Adam at 5e-3 halved on each
    plateau, dropout 0.2; given options win."""
    from rescorer.models.lm_files import load_lm

    default = load_lm(lm_model)
    fields = default.training["settings"]["fields"]
    assert default.config.dropout == 0.2
    assert fields["learning_rate"] == 5e-3 and fields["lr_decay"] == 0.5 and fields["patience"] == 6
    text = tmp_path / "text.fr.gz"
    result = run("train", "--lm", text, "-o", tmp_path / "other.pt", *FAST, "--dropout", "0", "--lr-decay", "1",
                 "--learning-rate", "0.01")
    assert result.exit_code == 0, result.output
    other = load_lm(tmp_path / "other.pt")
    assert other.config.dropout == 0.0
    assert other.training["settings"]["fields"]["lr_decay"] == 1.0
    assert other.training["settings"]["fields"]["learning_rate"] == 0.01


def test_the_summary_gives_the_unigram_perplexity_and_the_coverage_of_the_held_out_words(tmp_path):
    """Issue 45: a CSLM's perplexity came with no reference point (a phrase model's comes with a
    unigram model's): now the unigram perplexity on the same held-out text, and how many of its
    words the shortlist covers, [UNK] counted as one word in both perplexities."""
    import re

    (tmp_path / "text.fr").write_bytes(TEXT)
    result = CliRunner().invoke(main, ["train", "--lm", str(tmp_path / "text.fr"), "-o", str(tmp_path / "lm.pt"),
                                       *FAST, "--shortlist-size", "8"])
    assert result.exit_code == 0, result.output
    summary = next(line for line in result.stderr.splitlines() if line.startswith("trained on "))
    found = re.search(r"\((\d+) held out, (\d+) words and sentence ends\): .* valid perplexity [\d.]+ \(update \d+\), "
                      r"unigram ([\d.]+) \(\[UNK\] one word in both; the shortlist covers ([\d.]+)% of the (\d+) "
                      r"held-out words\), mean \|log Z\| ", summary)
    assert found, summary
    sentences, ngrams, unigram, covered, words = found.groups()
    assert int(words) == int(ngrams) - int(sentences)  # the sentence ends are predicted, not words
    assert 0 < float(covered) < 100 and 1 < float(unigram) < 20  # of 10 ids: 8 words, [UNK] and [EOS]
