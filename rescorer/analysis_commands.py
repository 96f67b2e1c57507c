"""`rescore top-targets | generate | plot-embeddings | plot-phrases | plot-attention`: the
paper's analysis (Tables 2-3, Figures 4-5) and attention maps, as commands.

Like cli.py, this module only parses options, calls the library and reports; torch and the
plotting libraries are imported inside the commands. Every output goes through RunPaths (an
existing one needs --force) and is written whole or not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from rescorer import __version__
from rescorer.failures import reports_errors

__all__ = ["ANALYSIS_COMMANDS"]

EXISTING = click.Path(path_type=Path, dir_okay=False, exists=True)
OUTPUT = click.Path(path_type=Path, dir_okay=False, allow_dash=True)
FIGURE = click.Path(path_type=Path, dir_okay=False)
PICKS = ("frequent", "rare", "random")


def _say(message: str) -> None:
    reporter = click.get_current_context().find_root().obj
    if reporter is not None and hasattr(reporter, "say"):
        reporter.say(message)
    else:
        click.echo(message, err=True)


def _signature(job: str, **settings) -> None:
    import torch

    fields = [f"rescore {__version__}", f"job:{job}", *(f"{k.replace('_', '-')}:{v}" for k, v in settings.items())]
    _say("|".join(fields + [f"torch:{torch.__version__}"]))


def _paths(reads: list, output: Optional[Path], role: str, force: bool):
    """RunPaths for a command writing `output` (stdout when None or '-')."""
    from rescorer.run_paths import RunPaths, Target

    writes = [] if output is None or str(output) == "-" else [Target(output, role, streamable=role == "output")]
    return RunPaths(reads, writes, force=force)


def _load(model_path: Path, device: str):
    from rescorer.checkpoint import load_model
    from rescorer.device import resolve_device

    return load_model(model_path, resolve_device(device))


def _table_text(headers, rows, csv: bool, footnote: str = "") -> str:
    from rescorer.text_tables import csv_table, markdown_table

    if csv:
        return csv_table(headers, rows)
    return markdown_table(headers, rows) + (f"\n{footnote}\n" if footnote else "")


def device_option(command):
    return click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                        show_default=True, help="Where the model runs.")(command)


def output_options(command):
    command = click.option("--force", is_flag=True, help="Replace an existing output.")(command)
    command = click.option("--csv", "as_csv", is_flag=True, help="CSV, one row per target, instead of Markdown.")(command)
    return click.option("-o", "--output", type=OUTPUT, help="Write here instead of stdout.")(command)


@click.command("top-targets")
@click.argument("table_path", metavar="TABLE", type=EXISTING)
@click.option("--model", "model_path", type=EXISTING,
              help="Score the shown sources' targets with this model (TABLE need not be rescored).")
@click.option("--column", type=int, default=None,
              help="Score column holding the RNN score in a rescored TABLE (0-based; -1, the last, "
                   "by default).")
@click.option("--score-format", type=click.Choice(["prob", "log"]), default="prob", show_default=True,
              help="How --column stores the RNN score.")
@click.option("--num-sources", type=click.IntRange(1), default=10, show_default=True,
              help="How many source phrases to pick.")
@click.option("--pick", type=click.Choice(PICKS), default="frequent", show_default=True,
              help="The most frequent sources (by c(source)), the rarest, or a seeded random choice.")
@click.option("--min-source-words", type=click.IntRange(1), default=1, show_default=True,
              help="Pick only sources of at least this many words (the paper: 4).")
@click.option("--min-targets", type=click.IntRange(1), default=2, show_default=True,
              help="Pick only sources with at least this many targets (one target ranks first both ways).")
@click.option("--sources", "sources_path", type=EXISTING,
              help="Show these sources, one per line, instead of picking.")
@click.option("-k", "--top", type=click.IntRange(1), default=3, show_default=True, help="Targets per ranking.")
@click.option("--seed", type=int, default=1, show_default=True, help="For --pick random and ties.")
@output_options
@device_option
@reports_errors
def top_targets_command(table_path: Path, model_path: Optional[Path], column: Optional[int], score_format: str,
                        num_sources: int, pick: str, min_source_words: int, min_targets: int,
                        sources_path: Optional[Path],
                        top: int, seed: int, output: Optional[Path], as_csv: bool, force: bool,
                        device: str) -> None:
    """The paper's Table 2: for each source, its top targets by the table's p(f|e) beside its
    top targets by the RNN (a score column of a rescored TABLE, or --model)."""
    from rescorer.inspection import (SourceChoice, read_source_groups, read_sources_file, score_groups,
                                     top_targets_rows)
    from rescorer.text_tables import write_text

    if model_path is not None and column is not None:
        raise click.UsageError("--column reads a rescored table's score; with --model the model scores instead")
    reads = [("phrase table", table_path), ("model", model_path), ("sources file", sources_path)]
    with _paths(reads, output, "output", force):
        sources = read_sources_file(sources_path) if sources_path else None
        choice = SourceChoice(num_sources, min_source_words, min_targets, pick, seed, sources)
        bundle = _load(model_path, device) if model_path else None
        groups = read_source_groups(table_path, choice, None if bundle else (-1 if column is None else column),
                                    score_format == "log")
        if bundle is not None:
            score_groups(groups, bundle)
        missing = [s for s in sources if s not in {g.source for g in groups}] if sources else []
        headers, rows = top_targets_rows(groups, top, as_csv, missing)
        scorer = model_path.name if model_path else f"column {-1 if column is None else column}"
        footnote = (f"{len(groups)} sources of {table_path.name}; log p (natural log) by the table's "
                    f"p(f|e) (Moses φ(e|f), the third score) and by the RNN ({scorer}).")
        write_text(_table_text(headers, rows, as_csv, footnote), output, force)
    if missing:
        _say(f"{len(missing)} of the listed sources are not in {table_path}: {'; '.join(missing[:5])}")


@click.command("generate")
@click.argument("model_path", metavar="MODEL", type=EXISTING)
@click.option("--source", "source_phrases", multiple=True, help="A source phrase (repeatable).")
@click.option("--sources", "sources_path", type=EXISTING, help="Source phrases, one per line.")
@click.option("--beam", type=click.IntRange(0), default=5, show_default=True,
              help="Beam size K: the K best targets beam search finds (0: no beam search).")
@click.option("--samples", type=click.IntRange(0), default=50, show_default=True,
              help="Targets drawn per source (0: no sampling); the paper drew 50.")
@click.option("--temperature", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Sample from p^(1/T); log p is always the model's own.")
@click.option("--seed", type=int, default=1, show_default=True, help="Samples depend only on (seed, source).")
@click.option("--table", "table_path", type=EXISTING,
              help="A phrase table: show each source's top targets by its p(f|e) too.")
@click.option("-k", "--top", type=click.IntRange(1), default=5, show_default=True,
              help="Distinct samples and table targets shown per source.")
@click.option("--max-length", type=click.IntRange(1), default=20, show_default=True,
              help="Target words at most; a hypothesis that long must end.")
@output_options
@device_option
@reports_errors
def generate_command(model_path: Path, source_phrases: tuple, sources_path: Optional[Path], beam: int,
                     samples: int, temperature: float, seed: int, table_path: Optional[Path], top: int,
                     max_length: int, output: Optional[Path], as_csv: bool, force: bool, device: str) -> None:
    """The paper's Table 3: target phrases the model proposes by itself (beam search and
    sampling), each with its log p, beside the table's top targets when --table is given."""
    from rescorer.generation import generate, generated_rows
    from rescorer.inspection import SourceChoice, read_source_groups, read_sources_file, score_groups
    from rescorer.text_tables import write_text

    if not source_phrases and sources_path is None:
        raise click.UsageError("give --source PHRASE (repeatable) or --sources FILE")
    if not beam and not samples:
        raise click.UsageError("--beam 0 and --samples 0 leave nothing to generate")
    reads = [("model", model_path), ("sources file", sources_path), ("phrase table", table_path)]
    with _paths(reads, output, "output", force):
        sources = [" ".join(s.split()) for s in source_phrases] + (read_sources_file(sources_path) if sources_path else [])
        if any(not s for s in sources):
            raise click.UsageError("--source '': a source phrase needs at least one word")
        bundle = _load(model_path, device)
        _signature("generate", model=f"{model_path.name}({bundle.config.arch})", beam=beam, samples=samples,
                   temperature=temperature, seed=seed, max_length=max_length,
                   device=next(bundle.model.parameters()).device.type)
        groups = None
        if table_path is not None:
            found = read_source_groups(table_path, SourceChoice(sources=sources))
            score_groups(found, bundle)
            groups = {group.source: group for group in found}
        items = generate(bundle, sources, beam, samples, max_length, temperature, seed, groups, top)
        headers, rows = generated_rows(items, beam, samples, top, groups is not None, as_csv)
        footnote = "log p: the RNN's, natural log" + (
            f"; * also a target of this source in {table_path.name}" if table_path else "") + "."
        write_text(_table_text(headers, rows, as_csv, footnote), output, force)
    forced = sum(item.forced_ends for item in items)
    if forced:
        _say(f"{forced} targets reached --max-length {max_length} and were ended there")


def figure_options(command):
    command = click.option("--force", is_flag=True, help="Replace an existing figure.")(command)
    command = click.option("--dpi", type=click.IntRange(20, 600), default=100, show_default=True,
                           help="Pixels per inch (the map is 18 x 12 inches).")(command)
    return click.option("-o", "--output", type=FIGURE, required=True,
                        help="Figure to write (.png, .pdf or .svg).")(command)


def _drawn(drawn: dict) -> str:
    zooms = ", ".join(f"{labelled}/{points}" for points, labelled in zip(drawn["zooms"], drawn["zoom_labelled"]))
    return (f"{drawn['size'][0]}x{drawn['size'][1]} px; labelled: {drawn['labelled']} in the full view"
            + (f", {zooms} in the zoomed views" if zooms else ""))


def map_options(command):
    command = click.option("--zooms", type=click.IntRange(0, 6), default=3, show_default=True,
                           help="Zoomed views of the densest regions.")(command)
    return click.option("--seed", type=int, default=1, show_default=True, help="t-SNE's seed.")(command)


@click.command("plot-embeddings")
@click.argument("model_path", metavar="MODEL", type=EXISTING)
@click.option("--side", type=click.Choice(["source", "target"]), default="source", show_default=True)
@click.option("--words", type=click.IntRange(5), default=500, show_default=True,
              help="The most frequent words of the shortlist.")
@figure_options
@map_options
@device_option
@reports_errors
def plot_embeddings_command(model_path: Path, side: str, words: int, output: Path, dpi: int, force: bool,
                            seed: int, zooms: int, device: str) -> None:
    """The paper's Figure 4: a t-SNE map of the word embeddings, with zoomed dense regions."""
    from rescorer.figures import check_figure_path
    from rescorer.maps import plot_map, project_2d
    from rescorer.representations import word_embeddings

    with _paths([("model", model_path)], output, "figure", force):
        check_figure_path(output)
        bundle = _load(model_path, device)
        labels, vectors = word_embeddings(bundle, side, words)
        title = (f"{side.capitalize()} word embeddings of {model_path.name} ({bundle.config.arch}, "
                 f"E={vectors.shape[1]}): t-SNE of the {len(labels)} most frequent words")
        drawn = plot_map(project_2d(vectors, seed), labels, title, output, dpi, force, zooms)
    _say(f"wrote {output}: {_drawn(drawn)}, {len(labels)} words")


@click.command("plot-phrases")
@click.argument("model_path", metavar="MODEL", type=EXISTING)
@click.argument("table_path", metavar="TABLE", type=EXISTING)
@click.option("--phrases", type=click.IntRange(5), default=1000, show_default=True,
              help="Source phrases to map (the paper: 5000).")
@click.option("--min-words", type=click.IntRange(1), default=4, show_default=True)
@click.option("--pick", type=click.Choice(PICKS), default="random", show_default=True,
              help="Which sources of TABLE: a seeded random choice (the paper), the most frequent or the rarest.")
@figure_options
@map_options
@device_option
@reports_errors
def plot_phrases_command(model_path: Path, table_path: Path, phrases: int, min_words: int, pick: str,
                         output: Path, dpi: int, force: bool, seed: int, zooms: int, device: str) -> None:
    """The paper's Figure 5: a t-SNE map of the encoder's summary of source phrases (c, or the
    mean annotation for attention models), with zoomed dense regions."""
    from rescorer.figures import check_figure_path
    from rescorer.inspection import SourceChoice, read_source_groups
    from rescorer.maps import plot_map, project_2d
    from rescorer.representations import phrase_summaries

    with _paths([("model", model_path), ("phrase table", table_path)], output, "figure", force):
        check_figure_path(output)
        bundle = _load(model_path, device)
        groups = read_source_groups(table_path, SourceChoice(phrases, min_words, 1, pick, seed))
        if len(groups) < 5:
            raise click.ClickException(f"{table_path}: {len(groups)} source phrases of {min_words} or more "
                                       f"words; a map needs 5 (lower --min-words)")
        labels = [group.source for group in sorted(groups, key=lambda g: -g.frequency)]
        vectors = phrase_summaries(bundle, labels)
        what = "c" if bundle.config.arch == "cho2014" else "mean annotation"
        title = (f"Phrase representations ({what}, {vectors.shape[1]} dimensions) of {model_path.name}: "
                 f"t-SNE of {len(labels)} {pick} source phrases of {min_words}+ words")
        drawn = plot_map(project_2d(vectors, seed), labels, title, output, dpi, force, zooms, per_zoom=15)
    _say(f"wrote {output}: {_drawn(drawn)}, {len(labels)} phrases")


@click.command("plot-attention")
@click.argument("model_path", metavar="MODEL", type=EXISTING)
@click.option("--source", "sources", multiple=True, required=True, help="Source phrase (repeat for panels).")
@click.option("--target", "targets", multiple=True,
              help="Target phrase, one per --source [default: the model's greedy translation].")
@figure_options
@device_option
@reports_errors
def plot_attention_command(model_path: Path, sources: tuple, targets: tuple, output: Path, dpi: int,
                           force: bool, device: str) -> None:
    """Attention maps of rnnsearch and luong models, drawn as Bahdanau's Fig. 3: each target
    word's weights over the source words, one panel per pair."""
    from rescorer.figures import check_figure_path, plot_attention
    from rescorer.representations import attention_weights, require_attention
    from rescorer.search import greedy_decode

    if targets and len(targets) != len(sources):
        raise click.UsageError(f"{len(sources)} --source but {len(targets)} --target: give one target per "
                               f"source, or none for the model's own translations")
    with _paths([("model", model_path)], output, "figure", force):
        check_figure_path(output)
        bundle = _load(model_path, device)
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
    _say(f"wrote {output}: {width}x{height} px, {len(panels)} pairs")


ANALYSIS_COMMANDS = (top_targets_command, generate_command, plot_embeddings_command, plot_phrases_command,
                     plot_attention_command)
