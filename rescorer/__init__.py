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

__version__ = "0.1.0"
