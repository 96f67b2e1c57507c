"""Figures of the ablation. The paper's Fig. 3: the RNN's log p(target|source) against the
phrase table's direct translation probability log φ(e|f) (the 3rd score in Moses' order; the
paper's p(f|e)) for a sample of pairs, showing that the network does not just re-learn phrase
frequencies; beside it the same against the inverse φ(f|e), with Spearman's rho for both. The MERT
curves: dev BLEU by iteration, one panel per replicate and one line per system, so that a bad
start or an unconverged run shows at a glance."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from rescorer.counts import counted

from ..evaluation.scores import EvalResult
from ..ini.moses_ini import MosesIni
from ..tables.phrase_table import sample_scores

__all__ = ["DIRECT_PROB_COLUMN", "INVERSE_PROB_COLUMN", "ScoresFigure", "plot_rnn_vs_table",
           "mert_curves_figure", "plot_mert_curves", "spearman", "ablation_scores_figure"]

DIRECT_PROB_COLUMN = 2  # φ(e|f) = p(target | source): third of the four standard scores
INVERSE_PROB_COLUMN = 0  # φ(f|e) = p(source | target): the first


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rho: Pearson's correlation of the ranks, ties given their mean rank."""
    def ranks(values: Sequence[float]) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        order = np.argsort(values, kind="mergesort")
        ranked = np.empty(len(values))
        ranked[order] = np.arange(len(values), dtype=np.float64)
        _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        return (np.bincount(inverse, weights=ranked) / counts)[inverse]

    if len(xs) < 2:
        return math.nan
    rx, ry = ranks(xs), ranks(ys)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = math.sqrt(float((rx * rx).sum() * (ry * ry).sum()))
    return float((rx * ry).sum() / denominator) if denominator else math.nan


@dataclass(frozen=True)
class ScoresFigure:
    path: Path
    num_pairs: int
    spearman_direct: float  # RNN log p against log p(f|e) (Moses φ(e|f))
    spearman_inverse: float  # RNN log p against log p(e|f) (Moses φ(f|e))

    def summary(self) -> str:
        return (f"{counted(self.num_pairs, 'pair')}: Spearman rho of the RNN score with the table's "
                f"p(f|e) {self.spearman_direct:.3f}, with its p(e|f) {self.spearman_inverse:.3f}")


def plot_rnn_vs_table(table_path: Path, rnn_column: int, out_path: Path, sample_size: int = 10000,
                      seed: int = 1, force: bool = False, dpi: int = 120) -> ScoresFigure:
    """The RNN's log p against the table's direct p(f|e) (the paper's Fig. 3) and inverse
    p(e|f), for a uniform sample of pairs, Spearman's rho in each title. The PNG is written
    whole or not at all (Agg backend, no display)."""
    from rescorer.analysis.figures import save_figure

    plt = _pyplot()
    points = sample_scores(table_path, (DIRECT_PROB_COLUMN, INVERSE_PROB_COLUMN, rnn_column),
                           sample_size, seed)
    direct, inverse, rnn = ([p[i] for p in points] for i in range(3))
    result = ScoresFigure(out_path, len(points), spearman(direct, rnn), spearman(inverse, rnn))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True, layout="constrained")
    for ax, xs, label, rho in ((axes[0], direct, "log p(f|e): the table's direct φ(e|f), 3rd score",
                                result.spearman_direct),
                               (axes[1], inverse, "log p(e|f): the table's inverse φ(f|e), 1st score",
                                result.spearman_inverse)):
        ax.scatter(xs, rnn, s=2, alpha=0.3, linewidths=0)
        ax.set_xlabel(label)
        ax.set_title(f"Spearman ρ = {rho:.3f}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("log p(f|e) by the RNN encoder–decoder")
    fig.suptitle(f"{len(points)} phrase pairs of {table_path.name} (f: target, e: source, as in the paper)")
    save_figure(fig, out_path, dpi, force)
    return result


# How each run's last point is drawn: why MERT stopped.
_END_MARKERS = {"convergence": ("o", "converged"), "max-iterations": ("X", "stopped by --max-iterations"),
                "unknown": ("s", "stop reason unknown")}


def mert_curves_figure(results: Mapping[str, Sequence[EvalResult]]):
    """Dev BLEU of each MERT iteration's 1-best output: a panel per replicate, a line per
    system, the last point marking why MERT stopped; the legend hangs below the panels, in as
    many columns as their width holds (6 systems on one panel overflowed a 4-column legend)."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator
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
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no "2.5" on a 5-iteration run
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
    """Writes mert_curves_figure as a PNG, its canvas grown to hold the legend below; atomically,
    replacing the previous run's curves."""
    from rescorer.analysis.figures import save_figure

    fig = mert_curves_figure(results)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, out_path, dpi=fig.dpi, force=True, bbox_inches="tight")
    return out_path


def ablation_scores_figure(ini_path: Path, feature: Optional[str], rescored_table: Path,
                           out_dir: Path) -> Optional[ScoresFigure]:
    """The ablation's fig3-rnn-vs-direct.png, of the first new column (after the ini table's
    num-features), unless a rerun finds it made; None then."""
    ini = MosesIni.read(ini_path)
    num_base = ini.phrase_table(feature).int_arg("num-features", ini.origin)
    figure = out_dir / "fig3-rnn-vs-direct.png"
    if figure.is_file():
        return None
    return plot_rnn_vs_table(rescored_table, num_base, figure)
