"""The paper's Fig. 3: the RNN's log p(target|source) against the phrase table's direct
translation probability log φ(e|f) (the 3rd score in Moses' order) for a sample of pairs,
showing that the network does not just re-learn phrase frequencies."""

from __future__ import annotations

from pathlib import Path

from .phrase_table import sample_scores

__all__ = ["DIRECT_PROB_COLUMN", "plot_rnn_vs_direct"]

DIRECT_PROB_COLUMN = 2  # φ(e|f) = p(target | source): third of the four standard scores


def plot_rnn_vs_direct(table_path: Path, rnn_column: int, out_path: Path,
                       sample_size: int = 10000, seed: int = 1) -> Path:
    """Scatter of a uniform sample of pairs; writes a PNG with the Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = sample_scores(table_path, (DIRECT_PROB_COLUMN, rnn_column), sample_size, seed)
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    fig, ax = plt.subplots(figsize=(5, 4.5), dpi=120)
    ax.scatter(xs, ys, s=2, alpha=0.3, linewidths=0)
    ax.set_xlabel("log φ(e|f)  (phrase table, direct)")
    ax.set_ylabel("log p(e|f)  (RNN encoder–decoder)")
    ax.set_title(f"{len(points)} phrase pairs of {table_path.name}")
    fig.tight_layout()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path)
    plt.close(fig)
    return out_path
