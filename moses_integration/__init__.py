"""Moses integration: put the RNN score into a Moses system, tune it with MERT and evaluate it.

This package drives Moses' own programs through subprocesses and imports neither PyTorch nor
click (import-linter checks it): the RNN scorer is reached through the `rescore` CLI, or as a
scoring function the commands (rescorer/cli/moses_commands.py) hand in.
"""
