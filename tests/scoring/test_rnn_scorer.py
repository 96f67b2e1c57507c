"""The scorer the Moses wing is handed: a table scored in process is byte for byte what
`rescore score` writes, and pairs score as batch_scoring scores them."""

import gzip

import numpy as np

from rescorer.cli.main import main
from rescorer.models.model_files import load_model
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.scoring.rnn_scorer import InProcessScorer
from tests.helpers import FIXTURE_FILES, first_lines, invoke

MODEL = FIXTURE_FILES / "v1-model.pt"
PAIRS = [("in the beginning", "au commencement"), ("god", "dieu"), ("the earth", "la terre")]


def test_a_table_scored_in_process_is_what_rescore_score_writes(tmp_path, example_table):
    table = first_lines(example_table, 300, tmp_path / "pt.gz")
    (tmp_path / "cli").mkdir()
    (tmp_path / "lib").mkdir()
    result = invoke(main, "score", table, "--model", MODEL, "-o", tmp_path / "cli/out.gz", "--force",
                    "--unk-penalty", "--device", "cpu")
    assert result.exit_code == 0, result.output
    summary = InProcessScorer("cpu").score_table(table, tmp_path / "lib/out.gz", [MODEL], unk_penalty=True)
    cli, lib = (gzip.decompress((tmp_path / side / "out.gz").read_bytes()) for side in ("cli", "lib"))
    assert lib == cli and len(lib.splitlines()) == 300
    assert summary.startswith("lines in 300, out 300; ") and summary.endswith(f"wrote {tmp_path / 'lib/out.gz'}")
    assert sorted(path.name for path in (tmp_path / "lib").iterdir()) == ["out.gz"]  # no temporaries left


def test_pairs_are_scored_by_one_model_loaded_once():
    scorer = InProcessScorer("cpu")
    np.testing.assert_array_equal(scorer.score_pairs(MODEL, PAIRS),
                                  score_pairs(load_model(MODEL), PAIRS, device="cpu"))
    assert scorer.bundle(MODEL) is scorer.bundle(MODEL)
    assert scorer.direction(MODEL) == "forward" and scorer.precision == "fp32"
