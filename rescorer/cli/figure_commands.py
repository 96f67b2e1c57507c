"""`rescore plot-embeddings | plot-phrases | plot-attention`: the paper's Figures 4 and 5 and
attention maps as commands. Each writes one figure (PNG, PDF or SVG by its name) of a fixed
pixel size, through RunPaths, whole or not at all.
"""

from __future__ import annotations

from pathlib import Path

import click

from rescorer.analysis.figures import ATTENTION_PANEL_INCHES
from rescorer.analysis.settings import AttentionPlotSettings, EmbeddingMapSettings, PhraseMapSettings
from rescorer.analysis.tsne_maps import MAP_INCHES
from rescorer.cli.analysis_runs import load_model_on, run_paths
from rescorer.cli.options import EXISTING_FILE, figure_options
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import say
from rescorer.counts import counted
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["FIGURE_COMMANDS"]

_PANEL = ATTENTION_PANEL_INCHES
ATTENTION_SIZE = f"each pair's panel is {_PANEL[0]:g} x {_PANEL[1]:g} inches, side by side"
MAP_SIZE = f"the map is {MAP_INCHES[0]:g} x {MAP_INCHES[1]:g} inches"


def _drawn(drawn: dict) -> str:
    zooms = ", ".join(f"{labelled}/{points}"
                      for points, labelled in zip(drawn["zooms"], drawn["zoom_labelled"]))
    return (f"{drawn['size'][0]}x{drawn['size'][1]} px; labelled: {drawn['labelled']} in the full view"
            + (f", {zooms} in the zoomed views" if zooms else ""))


@click.command("plot-embeddings")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@record_options(EmbeddingMapSettings, only=("side", "words"))
@figure_options(MAP_SIZE)
@record_options(EmbeddingMapSettings, only=("seed", "zooms", "device"))
@reports_errors
def plot_embeddings_command(model_path: Path, output: Path, dpi: int, force: bool, **options) -> None:
    """The paper's Figure 4: a t-SNE map of the word embeddings, with zoomed dense regions."""
    from rescorer.analysis.figures import check_figure_path
    from rescorer.analysis.representations import word_embeddings
    from rescorer.analysis.tsne_maps import plot_map, project_2d

    s = record_from(EmbeddingMapSettings, options)
    with run_paths([("model", model_path)], output, "figure", force):
        check_figure_path(output)
        bundle = load_model_on(model_path, s.device)
        labels, vectors = word_embeddings(bundle, s.side, s.words)
        title = (f"{s.side.capitalize()} word embeddings of {model_path.name} ({bundle.config.arch}, "
                 f"E={vectors.shape[1]}): t-SNE of the {len(labels)} most frequent words")
        drawn = plot_map(project_2d(vectors, s.seed), labels, title, output, dpi, force, s.zooms)
    say(f"wrote {output}: {_drawn(drawn)}, {counted(len(labels), 'word')}")


@click.command("plot-phrases")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@click.argument("table_path", metavar="TABLE", type=EXISTING_FILE)
@record_options(PhraseMapSettings, only=("phrases", "min_words", "pick"))
@figure_options(MAP_SIZE)
@record_options(PhraseMapSettings, only=("seed", "zooms", "device"))
@reports_errors
def plot_phrases_command(model_path: Path, table_path: Path, output: Path, dpi: int, force: bool, **options) -> None:
    """The paper's Figure 5: a t-SNE map of the encoder's summary of source phrases (c, or the
    mean annotation for attention models), with zoomed dense regions."""
    from rescorer.analysis.figures import check_figure_path
    from rescorer.analysis.representations import phrase_summaries
    from rescorer.analysis.top_targets import SourceChoice, read_source_groups
    from rescorer.analysis.tsne_maps import plot_map, project_2d

    s = record_from(PhraseMapSettings, options)
    with run_paths([("model", model_path), ("phrase table", table_path)], output, "figure", force):
        check_figure_path(output)
        bundle = load_model_on(model_path, s.device)
        groups = read_source_groups(table_path, SourceChoice(s.phrases, s.min_words, 1, s.pick, s.seed))
        if len(groups) < 5:
            raise click.ClickException(f"{table_path}: {len(groups)} source phrases of {s.min_words} or more "
                                       f"words; a map needs 5 (lower --min-words)")
        labels = [group.source for group in sorted(groups, key=lambda g: -g.frequency)]
        vectors = phrase_summaries(bundle, labels)
        what = "c" if bundle.config.arch == "cho2014" else "mean annotation"
        title = (f"Phrase representations ({what}, {vectors.shape[1]} dimensions) of {model_path.name}: "
                 f"t-SNE of {len(labels)} {s.pick} source phrases of {s.min_words}+ words")
        drawn = plot_map(project_2d(vectors, s.seed), labels, title, output, dpi, force, s.zooms, per_zoom=15)
    say(f"wrote {output}: {_drawn(drawn)}, {counted(len(labels), 'phrase')}")


@click.command("plot-attention")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@record_options(AttentionPlotSettings, only=("sources", "targets"))
@figure_options(ATTENTION_SIZE)
@record_options(AttentionPlotSettings, only=("device",))
@reports_errors
def plot_attention_command(model_path: Path, output: Path, dpi: int, force: bool, **options) -> None:
    """Attention maps of rnnsearch and luong models, drawn as Bahdanau's Fig. 3: each target
    word's weights over the source words, one panel per pair."""
    from rescorer.analysis.figures import check_figure_path, plot_attention
    from rescorer.analysis.representations import attention_weights, require_attention
    from rescorer.models.search import greedy_decode

    settings = record_from(AttentionPlotSettings, options)
    sources, targets = settings.sources, settings.targets
    if any(not source.split() for source in sources):
        raise click.UsageError("--source '': a source phrase needs at least one word")
    if targets and len(targets) != len(sources):
        raise click.UsageError(f"{len(sources)} --source but {len(targets)} --target: give one target per "
                               f"source, or none for the model's own translations")
    with run_paths([("model", model_path)], output, "figure", force):
        check_figure_path(output)
        bundle = load_model_on(model_path, settings.device)
        require_attention(bundle, str(model_path))
        panels = []
        for number, source in enumerate(sources):
            src_words = source.split()
            if targets:
                tgt_words = targets[number].split()
            else:
                best = greedy_decode(bundle.model, bundle.src_vocab.encode(src_words), 20)
                tgt_words = [bundle.tgt_vocab.tokens[token] for token in best.tokens]
            weights, log_p = attention_weights(bundle, src_words, tgt_words)
            panels.append((src_words, tgt_words + ["[EOS]"], weights, f"log p = {log_p:.2f}"))
        width, height = plot_attention(panels, output, dpi, force)
    say(f"wrote {output}: {width}x{height} px, {counted(len(panels), 'pair')}")


FIGURE_COMMANDS = (plot_embeddings_command, plot_phrases_command, plot_attention_command)
