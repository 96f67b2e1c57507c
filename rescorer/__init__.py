"""rescorer: score Moses phrase tables with RNN encoder-decoders (Cho et al. 2014 and the
encoder-decoders that followed it), one more phrase-table feature for MERT to weigh.

The package reads as the pipeline, top to bottom; each folder imports only from those below it
(import-linter checks it: the contracts are in setup.cfg):

- `cli`: the `rescore` commands and the one module of options they share;
- `analysis`: the paper's Tables 2-3 and figures;
- `training`, `scoring`: the two halves of the main job, independent of each other;
- `models`: the encoder-decoder family, model files, FLOP counts, search;
- `data`: shortlists, phrase encoding, batching, the encoded pair cache;
- `runtime`, `io`: devices, ranks, failures and progress; reading and writing tables (no torch).
"""

import os

__version__ = "0.1.0"

# torch's CPU products go through MKL, which splits a product of few rows differently on one
# thread and on two, so the README's demo trained another model on each (on an Intel Xeon with
# AMX, another model for the bible table's default batches too). MKL's strict reproducible mode
# gives the same bits on any thread count, at no speed cost measured (docs/training.md,
# "Length, repeatability, time"). MKL reads it at its first call, so it is set on the package's
# first import, before any product; a user's own MKL_CBWR is kept.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
