"""benchmarks/studies/proxy/training_row.sh reads the figures of the summary lines `rescore train` really
prints (a change of either line's wording must fail here, not leave a study's models.tsv empty)."""

import subprocess
from pathlib import Path

from tests.helpers import rescore

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "proxy" / "training_row.sh"


def test_the_row_holds_the_summary_lines_figures(example_table, tmp_path):
    trained = rescore("train", example_table, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-updates", "20",
                      "--valid-every", "10", "--seed", "2")
    assert trained.returncode == 0, trained.stderr
    log = tmp_path / "train.log"
    log.write_text(trained.stderr)
    summary = next(line for line in trained.stderr.splitlines() if line.startswith("trained on "))
    row = subprocess.run(["bash", "-c", f'source "{SCRIPT}" && training_row "a\\tb" "{log}"'], capture_output=True,
                         text=True, check=True).stdout
    label_a, label_b, updates, best, at_update, honest, seconds = row.rstrip("\n").split("\t")
    assert (label_a, label_b, updates) == ("a", "b", "20")
    assert f"valid perplexity {best} (update {at_update}; honest {honest} " in summary
    assert summary.endswith(f"; {seconds} s; model {tmp_path / 'm.pt'}")
    assert float(best) > 1 and int(at_update) in (10, 20)


def test_the_sentence_model_row_holds_its_summary_lines_figures(tmp_path):
    rerank = Path(__file__).resolve().parents[2] / "examples" / "rerank"
    trained = rescore("train", "--parallel", rerank / "train.en.gz", rerank / "train.fr.gz", "-o", tmp_path / "s.pt",
                      "--preset", "tiny", "--subword-size", "500", "--max-updates", "10", "--valid-every", "5")
    assert trained.returncode == 0, trained.stderr
    log = tmp_path / "train.log"
    log.write_text(trained.stderr)
    summary = next(line for line in trained.stderr.splitlines() if line.startswith("trained on "))
    row = subprocess.run(["bash", "-c", f'source "{SCRIPT}" && sentence_model_row forward "{log}"'],
                         capture_output=True, text=True, check=True).stdout
    label, updates, best, at_update, seconds = row.rstrip("\n").split("\t")
    assert (label, updates) == ("forward", "10")
    assert f"valid perplexity {best} (update {at_update})" in summary
    assert summary.endswith(f"; {seconds} s; model {tmp_path / 's.pt'}")
    assert float(best) > 1 and int(at_update) in (5, 10)
