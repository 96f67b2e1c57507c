"""How tests/data/v1-model.pt and v1-scores.txt were made: run with rescorer 0.1.0 on the path.

    PYTHONPATH=/path/to/rescorer-0.1.0 python3 tests/data/make_v1_fixture.py

A cho2014 GRU model in the version-1 file format, trained briefly on the bundled example table
(sizes below 'tiny', so the file stays small), and its log p of the table's first 200 pairs as
0.1.0 computed them. tests/test_checkpoint.py checks that today's code loads the file, scores
those pairs the same, and trains the same weights from the same settings.
"""

import sys
from pathlib import Path

import torch

import rescorer
from rescorer.model import PRESETS
from rescorer.io.table_reader import PhraseTableReader
from rescorer.training.pipeline import train_on_table
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.training.trainer import TrainSettings

HERE = Path(__file__).resolve().parent
SIZES = dict(embed_dim=16, embed_rank=8, hidden_size=16, maxout_units=8, output_rank=8, shortlist_size=300)
SETTINGS = TrainSettings(max_updates=20, valid_every=10, valid_pairs=100, seed=3)
PAIRS = 200

if rescorer.__version__ != "0.1.0":
    sys.exit(f"needs rescorer 0.1.0 on PYTHONPATH, found {rescorer.__version__}")
torch.set_num_threads(1)
PRESETS["tiny"] = SIZES
table = HERE.parent.parent / "examples" / "phrase-table.gz"
model_path = Path("/tmp/v1-fixture/v1-model.pt")
model_path.parent.mkdir(exist_ok=True)
report = train_on_table(table, model_path, preset="tiny", settings=SETTINGS)
with PhraseTableReader(table) as reader:
    pairs = [(entry.src, entry.tgt) for _, entry in zip(range(PAIRS), reader)]
scores = score_pairs(report.bundle, pairs, device="cpu")
(HERE / "v1-model.pt").write_bytes(model_path.read_bytes())
(HERE / "v1-scores.txt").write_text("".join(f"{float(score)!r}\n" for score in scores))
