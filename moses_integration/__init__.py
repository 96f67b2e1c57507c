"""Moses integration: put the RNN score into a Moses system, tune it with MERT and evaluate it.

This package drives Moses' own programs through subprocesses and knows nothing of PyTorch;
the RNN scorer is reached only through the `rescore` CLI or `rescorer.scoring.batch_scoring`.
"""
