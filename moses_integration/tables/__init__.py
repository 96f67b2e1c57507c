"""Phrase tables: read their scores, name their columns, cut per-system tables, filter for a test set, score them with a model."""
