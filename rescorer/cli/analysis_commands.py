"""`rescore top-targets | generate`: the paper's Tables 2 and 3 as commands, and what every
analysis command shares (the figures' commands are in `rescorer.cli.figure_commands`).

Like the other command modules, these only parse options, call the library and report; torch and the
plotting libraries are imported inside the commands. Every output goes through RunPaths (an
existing one needs --force) and is written whole or not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from rescorer.cli.analysis_runs import load_model_on, run_paths
from rescorer.cli.options import (EXISTING_FILE, EXISTING_OR_STDIN, PICKS, model_option, SCORE_COLUMN, column_index, device_option,
                                  score_format_option, seed_option, table_output_options)
from rescorer.cli.record_options import FiniteFloatRange
from rescorer.cli.reporting import say, signature
from rescorer.counts import counted
from rescorer.scoring.settings import MAX_BEAM
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["TABLE_COMMANDS"]

# Samples are drawn in batches of a beam's rows, so they are bounded as the beam is (MAX_BEAM).
MAX_SAMPLES = 10000


def table_text(headers, rows, csv: bool, footnote: str = "") -> str:
    from rescorer.io.text_tables import csv_table, markdown_table

    if csv:
        return csv_table(headers, rows)
    return markdown_table(headers, rows) + (f"\n{footnote}\n" if footnote else "")


@click.command("top-targets")
@click.argument("table_path", metavar="TABLE", type=EXISTING_FILE)
@model_option("Score the shown sources' targets with this model (TABLE need not be rescored).",
              required=False)
@click.option("--column", type=SCORE_COLUMN, default=None,
              help="Score column holding the RNN score in a rescored TABLE, counted from 1 "
                   "(-1: the last); needed unless --model scores the targets.")
@score_format_option("How --column stores the RNN score.")
@click.option("--num-sources", type=click.IntRange(1), default=10, show_default=True,
              help="How many source phrases to pick.")
@click.option("--pick", type=click.Choice(PICKS), default="frequent", show_default=True,
              help="The most frequent sources (by c(source)), the rarest, or a seeded random choice.")
@click.option("--min-source-words", type=click.IntRange(1), default=1, show_default=True,
              help="Pick only sources of at least this many words (the paper: 4).")
@click.option("--min-targets", type=click.IntRange(1), default=2, show_default=True,
              help="Pick only sources with at least this many targets (one target ranks first both ways).")
@click.option("--sources", "sources_path", type=EXISTING_OR_STDIN,
              help="Show these sources, one per line ('-': stdin), instead of picking.")
@click.option("-k", "--top", type=click.IntRange(1), default=3, show_default=True, help="Targets per ranking.")
@seed_option("For --pick random and ties.")
@table_output_options
@device_option
@reports_errors
def top_targets_command(table_path: Path, model: Optional[Path], column: Optional[int], score_format: str,
                        num_sources: int, pick: str, min_source_words: int, min_targets: int,
                        sources_path: Optional[Path],
                        top: int, seed: int, output: Optional[Path], as_csv: bool, force: bool,
                        device: str) -> None:
    """The paper's Table 2: for each source, its top targets by the table's p(f|e) beside its
    top targets by the RNN (a score column of a rescored TABLE, or --model)."""
    from rescorer.analysis.top_targets import (SourceChoice, read_source_groups, read_sources_file,
                                               score_groups, top_targets_rows)
    from rescorer.io.text_tables import write_text

    if model is not None and column is not None:
        raise click.UsageError("--column reads a rescored table's score; with --model the model scores instead")
    if model is None and column is None:
        raise click.UsageError("say where the RNN's scores come from: --model MODEL scores the "
                               "targets, or --column C names the rescored table's RNN column "
                               "(-1: the last)")
    reads = [("phrase table", table_path), ("model", model), ("sources file", sources_path)]
    with run_paths(reads, output, "output", force):
        sources = read_sources_file(sources_path) if sources_path else None
        choice = SourceChoice(num_sources, min_source_words, min_targets, pick, seed, sources)
        bundle = load_model_on(model, device) if model else None
        signature("top-targets", scores=f"{model.name}({bundle.config.arch})" if bundle else f"column {column}",
                  num_sources=num_sources, pick=pick, min_source_words=min_source_words, min_targets=min_targets,
                  top=top, seed=seed, device=next(bundle.model.parameters()).device.type if bundle else "-")
        rnn_column = None if bundle else column_index(column)
        groups = read_source_groups(table_path, choice, rnn_column, score_format == "log")
        if bundle is not None:
            score_groups(groups, bundle)
        missing = [s for s in sources if s not in {g.source for g in groups}] if sources else []
        headers, rows = top_targets_rows(groups, top, as_csv, missing)
        scorer = model.name if model else f"column {column}"
        footnote = (f"{counted(len(groups), 'source')} of {table_path.name}; log p (natural log) by the table's "
                    f"p(f|e) (Moses φ(e|f), the third score) and by the RNN ({scorer}).")
        write_text(table_text(headers, rows, as_csv, footnote), output, force)
    if missing:
        say(f"{len(missing)} of the listed sources are not in {table_path}: {'; '.join(missing[:5])}")


@click.command("generate")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@click.option("--source", "sources", multiple=True, help="A source phrase (repeatable).")
@click.option("--sources", "sources_path", type=EXISTING_OR_STDIN,
              help="Source phrases, one per line ('-': stdin).")
@click.option("--beam", type=click.IntRange(0, MAX_BEAM), default=5, show_default=True,
              help="Beam size K: the K best targets beam search finds (0: no beam search).")
@click.option("--samples", type=click.IntRange(0, MAX_SAMPLES), default=50, show_default=True,
              help="Targets drawn per source (0: no sampling); the paper drew 50.")
@click.option("--temperature", type=FiniteFloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Sample from p^(1/T); log p is always the model's own.")
@seed_option("Samples depend only on (seed, source).")
@click.option("--table", "table_path", type=EXISTING_FILE,
              help="A phrase table: show each source's top targets by its p(f|e) too.")
@click.option("-k", "--top", type=click.IntRange(1), default=5, show_default=True,
              help="Distinct samples and table targets shown per source.")
@click.option("--max-length", type=click.IntRange(1), default=20, show_default=True,
              help="Target words at most; a hypothesis that long must end.")
@table_output_options
@device_option
@reports_errors
def generate_command(model_path: Path, sources: tuple, sources_path: Optional[Path], beam: int,
                     samples: int, temperature: float, seed: int, table_path: Optional[Path], top: int,
                     max_length: int, output: Optional[Path], as_csv: bool, force: bool, device: str) -> None:
    """The paper's Table 3: target phrases the model proposes by itself (beam search and
    sampling), each with its log p, beside the table's top targets when --table is given."""
    from rescorer.analysis.generation import generate, generated_rows
    from rescorer.analysis.top_targets import (SourceChoice, read_source_groups, read_sources_file,
                                               score_groups)
    from rescorer.io.text_tables import write_text

    if not sources and sources_path is None:
        raise click.UsageError("give --source PHRASE (repeatable) or --sources FILE")
    if not beam and not samples:
        raise click.UsageError("--beam 0 and --samples 0 leave nothing to generate")
    reads = [("model", model_path), ("sources file", sources_path), ("phrase table", table_path)]
    with run_paths(reads, output, "output", force):
        sources = [" ".join(s.split()) for s in sources]
        sources += read_sources_file(sources_path) if sources_path else []
        if any(not s for s in sources):
            raise click.UsageError("--source '': a source phrase needs at least one word")
        bundle = load_model_on(model_path, device)
        signature("generate", model=f"{model_path.name}({bundle.config.arch})", beam=beam, samples=samples,
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
        write_text(table_text(headers, rows, as_csv, footnote), output, force)
    forced = sum(item.forced_ends for item in items)
    if forced:
        were = "was" if forced == 1 else "were"
        say(f"{counted(forced, 'target')} reached --max-length {max_length} and {were} ended there")


TABLE_COMMANDS = (top_targets_command, generate_command)
