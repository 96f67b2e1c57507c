"""benchmarks/studies/analysis_examples.sh: every command of docs/analysis.md runs on a table
laid out as the bible data is, its tables are the commands' own output, its log names DATA,
MODELS and OUT instead of this machine's paths, and analysis_tables.py reads what it wrote."""

import os
import re
import shutil
import subprocess
import sys

from tests.helpers import REPO

SCRIPT = REPO / "benchmarks" / "studies" / "analysis_examples.sh"


def train(table, out, *options):
    subprocess.run([sys.executable, str(REPO / "cli.py"), "-q", "train", str(table), "-o", str(out), "--preset",
                    "tiny", "--max-updates", "3", "--batch-tokens", "500", *options], check=True)
    return out


def test_the_script_writes_the_pages_tables_and_figures_without_machine_paths(tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "model").mkdir(parents=True)
    shutil.copy(REPO / "examples" / "phrase-table.gz", data / "model" / "phrase-table.gz")
    models = tmp_path / "models"
    models.mkdir()
    model = train(data / "model" / "phrase-table.gz", models / "rnn.pt")
    attention = train(data / "model" / "phrase-table.gz", models / "att.pt", "--arch", "rnnsearch")
    out = tmp_path / "out"
    rescore = f"{sys.executable} {REPO / 'cli.py'}"
    subprocess.run(["bash", str(SCRIPT), str(data), str(model), str(out), str(attention)], check=True,
                   env={**os.environ, "RESCORE": rescore})

    for table in ("table2-frequent.md", "table2-rare.md", "table2-words.md"):
        assert (out / table).read_text().startswith("| source | c(source) | targets |")
    assert (out / "table3.md").read_text().startswith("| source | beam search (K=5) |")
    log = (out / "analysis.log").read_text()
    assert str(tmp_path) not in log
    assert "$ rescore top-targets DATA/model/phrase-table.gz --model MODELS/rnn.pt" in log
    assert '--source "the holy city" --target "la ville sainte"' in log  # quoted as a shell takes it
    figures = re.findall(r"^wrote OUT/(\S+): ", log, re.M)
    assert figures == ["fig3-scores.png", "fig4-embeddings.png", "fig5-phrases.png", "attention.png"]
    assert all((out / figure).stat().st_size > 1000 for figure in figures)
    assert not list(out.glob("sample*"))  # the scored sample is not kept

    from benchmarks.studies import analysis_tables

    assert all((out / f"{name}.md").is_file() for name in analysis_tables.PRINTED)  # what the page shows
    monkeypatch.setattr(analysis_tables, "RESULTS", out)
    assert [line.split(" | ")[0] for line in analysis_tables.figures().splitlines()[2:]] == [
        f"| `{figure}`" for figure in figures]
