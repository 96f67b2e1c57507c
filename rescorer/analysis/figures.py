"""Writing figures: matplotlib's Agg backend (files only, no display), written atomically, and
the attention map (Bahdanau et al. 2015, Fig. 3).

A figure's pixel size is its size in inches times `dpi`, never trimmed (`bbox_inches` is left
alone), so a command's output size is known in advance.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

import numpy as np

from rescorer.errors import RescorerError
from rescorer.io.atomic_output import AtomicOutput
from rescorer.runtime.optional_packages import missing_package_line

__all__ = ["FORMATS", "pyplot", "check_figure_path", "save_figure", "plot_attention"]

FORMATS = ("png", "pdf", "svg")


def pyplot():
    """matplotlib.pyplot on the Agg backend; a one-line error when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        raise RescorerError(missing_package_line("matplotlib", "drawing a figure")) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_figure_path(path: Path) -> str:
    """The format the name asks for (png, pdf or svg), checked before any work."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise RescorerError(f"{path}: a figure name must end in {', '.join('.' + f for f in FORMATS)}")
    return suffix


def save_figure(fig, path: Path, dpi: int, force: bool = False, **savefig_options) -> None:
    """Render `fig` in memory, then write it whole or not at all; the figure is closed."""
    plt = pyplot()
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=check_figure_path(path), dpi=dpi, **savefig_options)
    finally:
        plt.close(fig)
    with AtomicOutput(path, force=force) as out:
        out.write(buffer.getvalue())


ATTENTION_PANEL_INCHES = (4.8, 5.4)  # width, height of one pair's panel


def plot_attention(panels: Sequence[tuple[list[str], list[str], np.ndarray, str]], path: Path,
                   dpi: int = 100, force: bool = False) -> tuple[int, int]:
    """Soft alignments as in Bahdanau et al. (2015) Fig. 3: one panel per pair, weight 0 black
    and 1 white, source words along the top, target words (and [EOS]) down the side.

    panels: (source words, target words, weights (targets, sources), caption). Returns the
    figure's (width, height) in pixels.
    """
    plt = pyplot()
    width, height = ATTENTION_PANEL_INCHES
    fig, axes = plt.subplots(1, len(panels), figsize=(width * len(panels), height), squeeze=False,
                             layout="constrained")
    for ax, (src_words, tgt_words, weights, caption) in zip(axes[0], panels):
        image = ax.imshow(weights, cmap="gray", vmin=0.0, vmax=1.0, interpolation="nearest")
        ax.xaxis.tick_top()
        ax.set_xticks(range(len(src_words)), src_words, rotation=90, fontsize=9)
        ax.set_yticks(range(len(tgt_words)), tgt_words, fontsize=9)
        ax.set_xlabel(caption, fontsize=8)
        ax.tick_params(length=0)
    fig.colorbar(image, ax=list(axes[0]), fraction=0.05, shrink=0.6, label="attention weight")
    save_figure(fig, path, dpi, force)
    return round(width * len(panels) * dpi), round(height * dpi)
