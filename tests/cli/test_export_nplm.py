"""`rescore export-nplm`: a CSLM model file to NPLM's text format, and its bad inputs."""

import pytest
import torch

from rescorer.cli.main import main
from rescorer.data.vocabulary import EOS, PAD, UNK
from rescorer.data.vocabulary import Vocabulary
from rescorer.models.lm_files import LmBundle, save_lm
from rescorer.models.ngram_lm import BOS, NgramLM, NgramLmConfig
from rescorer.models.nplm_format import read_nplm
from tests.helpers import FIXTURE_FILES, invoke, rescore

TOKENS = [PAD, UNK, EOS, BOS, "et", "la", "terre", "."]


@pytest.fixture()
def lm_path(tmp_path):
    torch.manual_seed(5)
    model = NgramLM(NgramLmConfig(vocab_size=len(TOKENS), order=3, embedding_size=4, hidden_sizes=(6, 5)))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.uniform_(-1, 1)
    path = tmp_path / "cslm.pt"
    save_lm(LmBundle(model, Vocabulary(TOKENS)), path)
    return path


def test_the_exported_file_reads_back_as_the_model_with_its_log_probs(lm_path, tmp_path):
    out = tmp_path / "cslm.nplm"
    result = invoke(main, "export-nplm", lm_path, "-o", out)
    assert result.exit_code == 0
    assert f"{out}: NPLM 3-gram model, 8 words" in result.output
    exported, tokens = read_nplm(out)
    model = NgramLM(NgramLmConfig(vocab_size=len(TOKENS), order=3, embedding_size=4, hidden_sizes=(6, 5)))
    model.load_state_dict(torch.load(lm_path, weights_only=True)["weights"])
    contexts = torch.tensor([[3, 3], [3, 4], [6, 7], [1, 0]])
    with torch.no_grad():
        assert torch.allclose(exported.log_probs(contexts), model.log_probs(contexts), atol=1e-4)
    assert tokens == TOKENS
    assert out.read_text().splitlines()[:3] == ["\\config", "version 1", "ngram_size 3"]


def test_an_existing_output_is_kept_unless_forced(lm_path, tmp_path):
    out = tmp_path / "cslm.nplm"
    out.write_text("precious\n")
    result = invoke(main, "export-nplm", lm_path, "-o", out, catch_exceptions=True)
    assert result.exit_code == 1 and "the output exists; pass --force" in result.output
    assert out.read_text() == "precious\n"
    assert invoke(main, "export-nplm", lm_path, "-o", out, "--force").exit_code == 0
    assert out.read_text().startswith("\\config\n")


@pytest.mark.parametrize("model, message", [
    (FIXTURE_FILES / "v1-model.pt", "a phrase model (written by `rescore train PHRASE_TABLE` or `--parallel`), "
                                    "not a language model"),
    (FIXTURE_FILES / "nplm" / "README.md", "not a model file"),
])
def test_a_file_that_is_not_a_language_model_is_one_line_and_writes_nothing(tmp_path, model, message):
    out = tmp_path / "out.nplm"
    result = invoke(main, "export-nplm", model, "-o", out, catch_exceptions=True)
    assert result.exit_code == 1
    assert message in result.output and str(model) in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_vocabulary_nplm_cannot_hold_names_the_model_and_writes_nothing(tmp_path):
    path = tmp_path / "cslm.pt"
    save_lm(LmBundle(NgramLM(NgramLmConfig(vocab_size=5, order=3, embedding_size=2, hidden_sizes=(3, 2))),
                     Vocabulary([PAD, UNK, EOS, BOS, "</s>"])), path)
    result = invoke(main, "export-nplm", path, "-o", tmp_path / "out.nplm", catch_exceptions=True)
    assert result.exit_code == 1
    assert f"{path}: cannot be written in NPLM's format (word 4 of the vocabulary, '</s>'" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cslm.pt"]


def test_a_gzip_output_is_refused_as_bad_usage(lm_path, tmp_path):
    result = invoke(main, "export-nplm", lm_path, "-o", tmp_path / "out.nplm.gz", catch_exceptions=True)
    assert result.exit_code == 2 and "NPLM reads plain text only" in result.output
    assert not (tmp_path / "out.nplm.gz").exists()


def test_an_unwritable_output_is_one_line_from_the_installed_command(lm_path, tmp_path):
    out = tmp_path / "missing" / "out.nplm"
    result = rescore("export-nplm", lm_path, "-o", out)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"Error: {out}: cannot write the output (no directory {out.parent})"]
