"""Figures of the ablation. The paper's Fig. 3: the RNN's log p(target|source) against the
phrase table's direct translation probability log φ(e|f) (the 3rd score in Moses' order) for a
sample of pairs, showing that the network does not just re-learn phrase frequencies. The MERT
curves: dev BLEU by iteration, one panel per replicate and one line per system, so that a bad
start or an unconverged run shows at a glance."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

from .evaluation import EvalResult
from .phrase_table import sample_scores

__all__ = ["DIRECT_PROB_COLUMN", "plot_rnn_vs_direct", "mert_curves_figure", "plot_mert_curves"]

DIRECT_PROB_COLUMN = 2  # φ(e|f) = p(target | source): third of the four standard scores


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def plot_rnn_vs_direct(table_path: Path, rnn_column: int, out_path: Path,
                       sample_size: int = 10000, seed: int = 1) -> Path:
    """Scatter of a uniform sample of pairs; writes a PNG with the Agg backend (no display)."""
    plt = _pyplot()
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


# How each run's last point is drawn: why MERT stopped.
_END_MARKERS = {"convergence": ("o", "converged"), "max-iterations": ("X", "stopped by --max-iterations"),
                "unknown": ("s", "stop reason unknown")}


def mert_curves_figure(results: Mapping[str, Sequence[EvalResult]]):
    """Dev BLEU of each MERT iteration's 1-best output: a panel per replicate, a line per
    system, the last point marking why MERT stopped; the legend hangs below the panels, in as
    many columns as their width holds (6 systems on one panel overflowed a 4-column legend)."""
    plt = _pyplot()
    replicates = max((len(runs) for runs in results.values()), default=0)
    columns = min(replicates, 3) or 1
    rows = math.ceil(replicates / columns) or 1
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), dpi=110,
                             sharey=True, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, ax in enumerate(axes.flat):
        if index >= replicates:
            ax.set_visible(False)
            continue
        for number, (name, runs) in enumerate(results.items()):
            if index >= len(runs) or not runs[index].dev_bleu_curve:
                continue
            run, color = runs[index], colors[number % len(colors)]
            points = [(i, b) for i, b in enumerate(run.dev_bleu_curve, 1) if b is not None]
            ax.plot([i for i, _ in points], [b for _, b in points], color=color, linewidth=1.2,
                    label=f"{name} ({run.start or '?'} start)")
            marker, _ = _END_MARKERS.get(run.stopped_by or "unknown", _END_MARKERS["unknown"])
            ax.plot(*points[-1], marker=marker, color=color, markersize=7, linestyle="none")
        ax.set_title(f"replicate {index + 1}")
        ax.set_xlabel("MERT iteration")
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("dev BLEU (1-best)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    for marker, meaning in _END_MARKERS.values():
        handles.append(plt.Line2D([], [], marker=marker, color="gray", linestyle="none"))
        labels.append(meaning)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0),
               ncol=min(len(labels), 2 * columns), fontsize="small", frameon=False)
    return fig


def plot_mert_curves(results: Mapping[str, Sequence[EvalResult]], out_path: Path) -> Path:
    """Writes mert_curves_figure as a PNG, its canvas grown to hold the legend below."""
    plt = _pyplot()
    fig = mert_curves_figure(results)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, bbox_inches="tight")
    plt.close(fig)
    return out_path
