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

from rescorer.analysis.settings import GenerateSettings, TopTargetsSettings
from rescorer.cli.analysis_runs import load_model_on, run_paths
from rescorer.cli.options import EXISTING_FILE, device_option, model_option, table_output_options
from rescorer.cli.record_options import record_from, record_options
from rescorer.cli.reporting import say, signature
from rescorer.counts import counted
from rescorer.io.score_format import column_index
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["TABLE_COMMANDS"]

def table_text(headers, rows, csv: bool, footnote: str = "") -> str:
    from rescorer.io.text_tables import csv_table, markdown_table

    if csv:
        return csv_table(headers, rows)
    return markdown_table(headers, rows) + (f"\n{footnote}\n" if footnote else "")


@click.command("top-targets")
@click.argument("table_path", metavar="TABLE", type=EXISTING_FILE)
@model_option("Score the shown sources' targets with this model (TABLE need not be rescored).",
              required=False)
@record_options(TopTargetsSettings)
@table_output_options
@device_option
@reports_errors
def top_targets_command(table_path: Path, model: Optional[Path], output: Optional[Path], as_csv: bool, force: bool,
                        device: str, **options) -> None:
    """The paper's Table 2: for each source, its top targets by the table's p(f|e) beside its
    top targets by the RNN (a score column of a rescored TABLE, or --model)."""
    from rescorer.analysis.top_targets import (SourceChoice, read_source_groups, read_sources_file,
                                               score_groups, top_targets_rows)
    from rescorer.io.text_tables import write_text

    s = record_from(TopTargetsSettings, options)
    if model is not None and s.column is not None:
        raise click.UsageError("--column reads a rescored table's score; with --model the model scores instead")
    if model is None and s.column is None:
        raise click.UsageError("say where the RNN's scores come from: --model MODEL scores the "
                               "targets, or --column C names the rescored table's RNN column "
                               "(-1: the last)")
    reads = [("phrase table", table_path), ("model", model), ("sources file", s.sources_path)]
    with run_paths(reads, output, "output", force):
        sources = read_sources_file(s.sources_path) if s.sources_path else None
        choice = SourceChoice(s.num_sources, s.min_source_words, s.min_targets, s.pick, s.seed, sources)
        bundle = load_model_on(model, device) if model else None
        signature("top-targets", scores=f"{model.name}({bundle.config.arch})" if bundle else f"column {s.column}",
                  num_sources=s.num_sources, pick=s.pick, min_source_words=s.min_source_words,
                  min_targets=s.min_targets, top=s.top, seed=s.seed,
                  device=next(bundle.model.parameters()).device.type if bundle else "-")
        rnn_column = None if bundle else column_index(s.column)
        groups = read_source_groups(table_path, choice, rnn_column, s.score_format == "log")
        if bundle is not None:
            score_groups(groups, bundle)
        missing = [source for source in sources if source not in {g.source for g in groups}] if sources else []
        headers, rows = top_targets_rows(groups, s.top, as_csv, missing)
        scorer = model.name if model else f"column {s.column}"
        footnote = (f"{counted(len(groups), 'source')} of {table_path.name}; log p (natural log) by the table's "
                    f"p(f|e) (Moses φ(e|f), the third score) and by the RNN ({scorer}).")
        write_text(table_text(headers, rows, as_csv, footnote), output, force)
    if missing:
        say(f"{len(missing)} of the listed sources are not in {table_path}: {'; '.join(missing[:5])}")


@click.command("generate")
@click.argument("model_path", metavar="MODEL", type=EXISTING_FILE)
@record_options(GenerateSettings)
@table_output_options
@device_option
@reports_errors
def generate_command(model_path: Path, output: Optional[Path], as_csv: bool, force: bool, device: str,
                     **options) -> None:
    """The paper's Table 3: target phrases the model proposes by itself (beam search and
    sampling), each with its log p, beside the table's top targets when --table is given."""
    from rescorer.analysis.generation import generate, generated_rows
    from rescorer.analysis.top_targets import (SourceChoice, read_source_groups, read_sources_file,
                                               score_groups)
    from rescorer.io.text_tables import write_text

    s = record_from(GenerateSettings, options)
    if not s.sources and s.sources_path is None:
        raise click.UsageError("give --source PHRASE (repeatable) or --sources FILE")
    if not s.beam and not s.samples:
        raise click.UsageError("--beam 0 and --samples 0 leave nothing to generate")
    reads = [("model", model_path), ("sources file", s.sources_path), ("phrase table", s.table_path)]
    with run_paths(reads, output, "output", force):
        sources = [" ".join(source.split()) for source in s.sources]
        sources += read_sources_file(s.sources_path) if s.sources_path else []
        if any(not source for source in sources):
            raise click.UsageError("--source '': a source phrase needs at least one word")
        bundle = load_model_on(model_path, device)
        signature("generate", model=f"{model_path.name}({bundle.config.arch})", beam=s.beam, samples=s.samples,
                  temperature=s.temperature, seed=s.seed, max_length=s.max_length,
                  device=next(bundle.model.parameters()).device.type)
        groups = None
        if s.table_path is not None:
            found = read_source_groups(s.table_path, SourceChoice(sources=sources))
            score_groups(found, bundle)
            groups = {group.source: group for group in found}
        items = generate(bundle, sources, s, groups)
        headers, rows = generated_rows(items, s.beam, s.samples, s.top, groups is not None, as_csv)
        footnote = "log p: the RNN's, natural log" + (
            f"; * also a target of this source in {s.table_path.name}" if s.table_path else "") + "."
        write_text(table_text(headers, rows, as_csv, footnote), output, force)
    forced = sum(item.forced_ends for item in items)
    if forced:
        were = "was" if forced == 1 else "were"
        say(f"{counted(forced, 'target')} reached --max-length {s.max_length} and {were} ended there")


TABLE_COMMANDS = (top_targets_command, generate_command)
