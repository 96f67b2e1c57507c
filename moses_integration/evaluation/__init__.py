"""Decode a test set and score it (BLEU, chrF, significance), and the results tables."""
