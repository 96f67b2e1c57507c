"""The `moses` click group: kebab-case subcommands, one-line errors with exit status 1."""

import gzip
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fake_moses import FIXTURES, install_fake_moses, needs_fixtures
from moses_integration.commands import moses
from moses_integration.moses_ini import MosesIni

pytestmark = needs_fixtures


def invoke(*args):
    return CliRunner().invoke(moses, [str(a) for a in args], catch_exceptions=False)


def test_subcommands_are_kebab_case():
    assert sorted(moses.commands) == ["ablation", "add-feature", "evaluate", "plot-scores",
                                      "preflight", "rescore-nbest", "tune"]


def rescored_table(tmp_path: Path, extra: str = " 0.5 1") -> Path:
    out = tmp_path / "phrase-table.rnn.gz"
    with gzip.open(FIXTURES / "model/phrase-table.gz", "rt") as src, gzip.open(out, "wt") as dst:
        for _ in range(3):
            fields = next(src).split(" ||| ")
            fields[2] += extra
            dst.write(" ||| ".join(fields))
    return out


def test_add_feature_then_preflight_passes(tmp_path):
    table = rescored_table(tmp_path)
    out = tmp_path / "moses.rnn.ini"
    result = invoke("add-feature", FIXTURES / "model/moses.ini", "--table", table, "-o", out,
                    "--base-dir", FIXTURES)
    assert result.exit_code == 0, result.output
    ini = MosesIni.read(out)
    assert ini.phrase_table().args["num-features"] == "6"
    assert ini.phrase_table().args["path"] == str(table.resolve())  # outside --base-dir
    assert ini.weights("TranslationModel0") == [0.2] * 6
    result = invoke("preflight", out, "--base-dir", FIXTURES, "--no-check-install",
                    "--dev", FIXTURES / "corpus/dev.en.gz", FIXTURES / "corpus/dev.fr.gz")
    assert result.exit_code == 0, result.output


def test_add_feature_with_compact_table_runs_process_phrase_table_min(tmp_path):
    root = install_fake_moses(tmp_path / "moses")
    ini = tmp_path / "compact.ini"
    ini.write_text((FIXTURES / "model/moses.ini").read_text().replace(
        "PhraseDictionaryMemory name=TranslationModel0 num-features=4 path=model/phrase-table.gz",
        "PhraseDictionaryCompact name=TranslationModel0 num-features=4 path=model/phrase-table.minphr"))
    table = rescored_table(tmp_path)
    result = invoke("add-feature", ini, "--table", table, "-o", tmp_path / "out.ini",
                    "--moses-dir", root, "--threads", "2", "--base-dir", tmp_path)
    assert result.exit_code == 0, result.output
    from fake_moses import calls
    [call] = calls(root, "processPhraseTableMin")
    prefix = str(tmp_path / "phrase-table.rnn")
    assert call["argv"] == ["-in", str(table), "-out", prefix, "-nscores", "6", "-threads", "2"]
    assert "TranslationModel0 num-features=6 path=phrase-table.rnn.minphr input-factor" in (tmp_path / "out.ini").read_text()


@pytest.mark.parametrize("args, message", [
    (["add-feature", FIXTURES / "model/moses.ini", "--table", FIXTURES / "tuning/filtered/phrase-table.0-0.1.1.gz",
      "-o", "{tmp}/x.ini"],
     "Error: {fx}/tuning/filtered/phrase-table.0-0.1.1.gz:1: expected more than 4 scores "
     "(num-features=4 in {fx}/model/moses.ini:21), found 4: is it the rescored table?"),
    (["preflight", FIXTURES / "model/moses.ini", "--base-dir", "{tmp}", "--no-check-install"],
     "Error: preflight: 3 problem(s)"),
    (["tune", "{tmp}/none.ini", "--dev", "a", "b", "--work-dir", "{tmp}/w", "--moses-dir", "{tmp}/none"],
     "Error: Moses directory {tmp}/none (from --moses-dir) does not exist"),
])
def test_errors_are_one_line_exit_1(args, message, tmp_path):
    args = [str(a).format(tmp=tmp_path) for a in args]
    result = CliRunner().invoke(moses, args)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == message.format(tmp=tmp_path, fx=FIXTURES)
    assert "Traceback" not in result.output


def test_tune_prints_progress_and_the_tuned_ini(tmp_path):
    root = install_fake_moses(tmp_path / "moses")
    result = CliRunner().invoke(moses, [
        "tune", str(FIXTURES / "model/moses.ini"), "--dev", str(FIXTURES / "corpus/dev.en.gz"),
        str(FIXTURES / "corpus/dev.fr.gz"), "--work-dir", str(tmp_path / "w"), "--moses-dir",
        str(root), "--base-dir", str(FIXTURES), "--seed", "5", "--max-iterations", "3"])
    assert result.exit_code == 0, result.output
    assert "iteration 1: dev BLEU 40.04" in result.output
    assert result.output.splitlines()[-1] == str(tmp_path / "w" / "moses.ini")


def test_rescore_nbest_uses_the_rescorer_library(tmp_path, monkeypatch):
    """rescorer.checkpoint / rescorer.scoring are the lead's; faked here by their contract."""
    loaded = []
    checkpoint = types.ModuleType("rescorer.checkpoint")
    checkpoint.load_model = lambda path: loaded.append(path) or "bundle"
    scoring = types.ModuleType("rescorer.scoring")
    scoring.score_pairs = lambda bundle, pairs, device="auto": np.full(len(pairs), -2.5)
    monkeypatch.setitem(sys.modules, "rescorer.checkpoint", checkpoint)
    monkeypatch.setitem(sys.modules, "rescorer.scoring", scoring)
    model = tmp_path / "model.pt"
    model.write_bytes(b"")
    nbest = tmp_path / "in.nbest"
    with gzip.open(FIXTURES / "tuning/run11.best100.out.gz", "rb") as src:
        nbest.write_bytes(b"".join(next(src) for _ in range(5)))
    result = invoke("rescore-nbest", nbest, "--source", FIXTURES / "corpus/dev.en.gz",
                    "--model", model, "-o", tmp_path / "out.nbest.gz")
    assert result.exit_code == 0, result.output
    assert loaded == [model]
    lines = gzip.open(tmp_path / "out.nbest.gz", "rt").read().splitlines()
    assert len(lines) == 5 and all(" RNN0= -2.5 ||| " in line for line in lines)
