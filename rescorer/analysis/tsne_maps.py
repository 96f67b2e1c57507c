"""Labelled 2-D maps of learned vectors (Cho et al. 2014, Figs. 4 and 5): t-SNE, then a full
view beside zoomed views of its densest regions, colour-coded as in the paper.

The projection is scikit-learn's Barnes-Hut t-SNE (the paper used van der Maaten's
Barnes-Hut-SNE), seeded. Labels in the full view are placed greedily in priority order (the
most frequent words first) and skipped where they would overlap one already placed, so that
every label drawn can be read; the zoomed views label every point they show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from rescorer.analysis.figures import pyplot, save_figure
from rescorer.counts import counted
from rescorer.errors import RescorerError
from rescorer.runtime.optional_packages import missing_package_line

__all__ = ["MAP_INCHES", "project_2d", "dense_windows", "plot_map"]

MAP_INCHES = (18.0, 12.0)  # the whole figure: full view on the left, zoomed views on the right
MIN_POINTS = 5


def project_2d(vectors: np.ndarray, seed: int = 1) -> np.ndarray:
    """t-SNE (Barnes-Hut) of (n, d) vectors to (n, 2); perplexity 30, less for few points."""
    try:
        from sklearn.manifold import TSNE
    except ImportError:
        raise RescorerError(missing_package_line("sklearn", "a t-SNE map")) from None
    count = len(vectors)
    if count < MIN_POINTS:
        raise RescorerError(f"a map needs at least {MIN_POINTS} points, found {count}")
    perplexity = min(30.0, (count - 1) / 3)
    tsne = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed,
                method="barnes_hut")
    return tsne.fit_transform(np.asarray(vectors, dtype=np.float64))


def dense_windows(points: np.ndarray, num_windows: int, per_window: int = 25,
                  aspect: float = 1.0) -> list[tuple]:
    """Up to `num_windows` windows (x0, x1, y0, y1) around the densest spots, each holding
    about `per_window` points, not overlapping. Distances are measured with both axes scaled
    to the map's extent and x shrunk by `aspect`, so that a window looks `aspect` times as
    wide as tall in a square view: a point's window reaches its `per_window`-th nearest
    neighbour (Chebyshev distance), and the smallest windows win."""
    from sklearn.neighbors import NearestNeighbors

    low, extent = points.min(axis=0), np.ptp(points, axis=0)
    extent = np.where(extent > 0, extent, 1.0)
    scaled = (points - low) / extent / np.array([aspect, 1.0])  # (n, 2)
    k = min(per_window, len(points))
    distances, _ = NearestNeighbors(n_neighbors=k, metric="chebyshev").fit(scaled).kneighbors(scaled)
    radius = np.maximum(distances[:, -1] * 1.05, 0.01)  # (n,): to the k-th neighbour (itself first)
    windows: list[tuple] = []
    for index in np.argsort(radius, kind="stable"):
        x, y = points[index]
        half_x, half_y = radius[index] * aspect * extent[0], radius[index] * extent[1]
        box = (x - half_x, x + half_x, y - half_y, y + half_y)
        if all(box[1] < other[0] or other[1] < box[0] or box[3] < other[2] or other[3] < box[2]
               for other in windows):
            windows.append(box)
            if len(windows) == num_windows:
                break
    return windows


# Where a label may go, tried in order: right of its point, left, above, below (points, ha, va).
_LABEL_SPOTS = (((3, 0), "left", "center"), ((-3, 0), "right", "center"),
                ((0, 3), "center", "bottom"), ((0, -3), "center", "top"))


def _label_without_overlap(ax, points: np.ndarray, labels: Sequence[str], fontsize: float) -> int:
    """Draw each label (in the given priority order) at the first spot beside its point where
    it overlaps no label drawn before and stays inside the axes; skip it when there is none."""
    fig = ax.figure
    to_pixels = ax.transData.transform
    frame = ax.get_window_extent()
    scale = fig.dpi / 72.0
    placed = np.zeros((0, 4))
    drawn = 0
    for (x, y), label in zip(points, labels):
        px, py = to_pixels((x, y))
        width, height = 0.6 * fontsize * scale * len(label), 1.2 * fontsize * scale
        for (dx, dy), ha, va in _LABEL_SPOTS:
            left = px + dx * scale - {"left": 0, "right": width, "center": width / 2}[ha]
            bottom = py + dy * scale - {"bottom": 0, "top": height, "center": height / 2}[va]
            box = np.array([left, bottom, left + width, bottom + height])
            if box[0] < frame.x0 or box[2] > frame.x1 or box[1] < frame.y0 or box[3] > frame.y1:
                continue
            if len(placed) and np.any((placed[:, 0] < box[2]) & (box[0] < placed[:, 2])
                                      & (placed[:, 1] < box[3]) & (box[1] < placed[:, 3])):
                continue
            ax.annotate(label, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                        ha=ha, va=va)
            placed = np.vstack([placed, box])
            drawn += 1
            break
    return drawn


def plot_map(points: np.ndarray, labels: Sequence[str], title: str, path: Path, dpi: int = 100,
             force: bool = False, zooms: int = 3, per_zoom: int = 25) -> dict:
    """The full view (left) and up to `zooms` zoomed views of dense regions (right), written
    to `path`. labels are in priority order. Returns what was drawn: pixel size, labels in
    the full view, and the points of each zoomed view."""
    plt = pyplot()
    from matplotlib.patches import Rectangle

    fig = plt.figure(figsize=MAP_INCHES, dpi=dpi)
    grid = fig.add_gridspec(max(zooms, 1), 3, left=0.03, right=0.99, top=0.95, bottom=0.03,
                            wspace=0.12, hspace=0.18)
    main = fig.add_subplot(grid[:, :2])
    main.scatter(points[:, 0], points[:, 1], s=6, color="0.55", linewidths=0)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # a zoomed view is 6 x 12/zooms inches: its window is as much wider than tall
    windows = dense_windows(points, zooms, per_zoom, aspect=MAP_INCHES[0] / 3 / (MAP_INCHES[1] / zooms)) \
        if zooms else []
    zoom_sizes, zoom_labelled = [], []
    for number, (x0, x1, y0, y1) in enumerate(windows):
        colour = colours[number % len(colours)]
        inside = (points[:, 0] >= x0) & (points[:, 0] <= x1) & (points[:, 1] >= y0) & (points[:, 1] <= y1)
        main.scatter(points[inside, 0], points[inside, 1], s=8, color=colour, linewidths=0)
        main.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=colour, linewidth=1.5))
        ax = fig.add_subplot(grid[number, 2])
        ax.scatter(points[inside, 0], points[inside, 1], s=10, color=colour, linewidths=0)
        ax.set_xlim(x0 - 0.04 * (x1 - x0), x1 + 0.04 * (x1 - x0))
        ax.set_ylim(y0 - 0.04 * (y1 - y0), y1 + 0.04 * (y1 - y0))
        in_order = np.flatnonzero(inside)  # priority order, as in the full view
        zoom_labelled.append(_label_without_overlap(ax, points[in_order],
                                                    [labels[i] for i in in_order], fontsize=8))
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_edgecolor(colour)
            spine.set_linewidth(2)
        ax.set_title(f"zoom {number + 1}: {counted(int(inside.sum()), 'point')}, {zoom_labelled[-1]} labelled",
                     fontsize=9, color=colour)
        zoom_sizes.append(int(inside.sum()))
    main.set_xticks([])
    main.set_yticks([])
    main.set_title(title, fontsize=11)
    margin = 0.03 * np.ptp(points, axis=0)
    main.set_xlim(points[:, 0].min() - margin[0], points[:, 0].max() + margin[0])
    main.set_ylim(points[:, 1].min() - margin[1], points[:, 1].max() + margin[1])
    labelled = _label_without_overlap(main, points, labels, fontsize=7)
    save_figure(fig, path, dpi, force)
    return {"size": (round(MAP_INCHES[0] * dpi), round(MAP_INCHES[1] * dpi)), "labelled": labelled,
            "zooms": zoom_sizes, "zoom_labelled": zoom_labelled}
