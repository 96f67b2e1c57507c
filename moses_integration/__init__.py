"""Moses integration: put the RNN score into a Moses system, tune it with MERT and evaluate it.

This package drives Moses' own programs through subprocesses and imports neither PyTorch nor
click (import-linter checks it). The RNN scorer is an object the commands hand in
(scorer.RnnScorer, built once in process by rescorer/cli/moses_runs.py). Its folders follow the
pipeline, top to bottom: study/, tuning/ and nbest/, evaluation/ and preflight.py, tables/,
ini/, then the shared helpers.
"""
