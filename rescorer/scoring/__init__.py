"""Scoring every line of a table: batched model scoring, the per-chunk step, the streaming and
the resumable unit paths, and the summary."""
