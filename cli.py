"""`rescore`: add an RNN encoder-decoder score column to a Moses phrase table.

    rescore PHRASE_TABLE [-o OUT] [--model MODEL]   train (unless --model) then score
    rescore train PHRASE_TABLE -o MODEL             the first half
    rescore score PHRASE_TABLE --model MODEL        the second half
    rescore moses ...                               MERT, ablations, n-best rescoring

This module only parses options, calls the library and reports; errors of the library become
one-line messages with exit status 1 (2 for bad usage).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import time
from pathlib import Path
from typing import Optional

# OpenMP threads that spin at every barrier starve each other when a core is busy with other
# work (a shared machine, the reader thread): measured 2-5x slower. Passive waiting costs
# nothing measurable otherwise. It must be set before torch loads its OpenMP runtime.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import click  # noqa: E402
import torch  # noqa: E402

from rescorer import __version__
from rescorer.errors import RescorerError

PATH = click.Path(path_type=Path, dir_okay=False)
EXISTING = click.Path(path_type=Path, dir_okay=False, exists=True, allow_dash=True)


class DefaultCommandGroup(click.Group):
    """A group whose first positional argument, when it names no subcommand, goes to `run`,
    so that `rescore table.gz` is the main job while `rescore train ...` still works."""

    default_command = "run"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for position, arg in enumerate(args):
            if arg in ("--help", "-h", "--version"):
                break
            if not arg.startswith("-") or arg == "-":
                if arg not in self.commands:
                    args.insert(position, self.default_command)
                break
        return super().parse_args(ctx, args)


class Reporter:
    """Messages and progress bars on stderr; `--quiet` silences both."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def say(self, message: str) -> None:
        if not self.quiet:
            click.echo(message, err=True)

    def bar(self, **kwargs):
        from rescorer.progress import progress_bar

        return progress_bar(self.quiet, sys.stderr, **kwargs)


def reports_errors(command):
    """Turn library errors into one-line click errors (exit 1) instead of tracebacks."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except RescorerError as error:
            raise click.ClickException(str(error)) from None
        except KeyboardInterrupt:
            click.echo("rescore: interrupted; no output was written", err=True)
            sys.exit(130)

    return wrapper


def device_options(command):
    command = click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                           show_default=True, help="Where the model runs.")(command)
    command = click.option("--precision", type=click.Choice(["auto", "fp32", "bf16"]), default="auto",
                           show_default=True,
                           help="auto: bf16 autocast on CUDA, fp32 on the CPU.")(command)
    return command


def train_options(command):
    options = [
        click.option("--preset", type=click.Choice(["small", "paper", "tiny"]), default="small", show_default=True,
                     help="Model sizes: 'paper' is Cho et al. (2014) Appendix A; 'small' trains on a CPU in minutes; 'tiny' is for smoke tests."),
        click.option("--shortlist-size", type=click.IntRange(1), default=None,
                     help="Words per side in the shortlist [default: 15000]."),
        click.option("--src-corpus", type=EXISTING, help="Tokenized source corpus to count the shortlist on."),
        click.option("--tgt-corpus", type=EXISTING, help="Tokenized target corpus to count the shortlist on."),
        click.option("--batch-size", type=click.IntRange(1), default=64, show_default=True,
                     help="Random phrase pairs per update."),
        click.option("--optimizer", type=click.Choice(["adadelta", "adam"]), default="adadelta",
                     show_default=True),
        click.option("--learning-rate", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="[default: 1.0 for Adadelta, 1e-3 for Adam]"),
        click.option("--clip-norm", type=click.FloatRange(min=0, min_open=True), default=1.0,
                     show_default=True, help="Gradient norm clipping."),
        click.option("--max-updates", type=click.IntRange(1), default=3000, show_default=True),
        click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="Stop training after this many seconds."),
        click.option("--valid-pairs", type=click.IntRange(1), default=2000, show_default=True,
                     help="Held-out pairs for validation perplexity."),
        click.option("--valid-every", type=click.IntRange(1), default=250, show_default=True),
        click.option("--patience", type=click.IntRange(1), default=4, show_default=True,
                     help="Validations without improvement before stopping early."),
        click.option("--checkpoint-every", type=click.IntRange(1), default=1000, show_default=True),
        click.option("--seed", type=int, default=1, show_default=True),
        click.option("--resume", is_flag=True, help="Continue from MODEL.checkpoint."),
        click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
                     help="Where the encoded pairs go [default: MODEL.cache]."),
        click.option("--gru-form", type=click.Choice(["paper", "cudnn"]), default="paper", show_default=True,
                     help="cudnn applies the reset gate after U h (one fused matmul)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def score_options(command):
    options = [
        click.option("--unk-penalty/--no-unk-penalty", default=False, show_default=True,
                     help="Also append the count of target words outside the shortlist (as exp(count))."),
        click.option("--score-format", type=click.Choice(["prob", "log"]), default="prob", show_default=True,
                     help="prob: exp(log p) for Moses, which takes logs; log: raw log p."),
        click.option("--reject", "reject_path", type=PATH,
                     help="Write unparseable lines here verbatim and go on, instead of failing."),
        click.option("--force", is_flag=True, help="Overwrite an existing output."),
        click.option("--chunk-size", type=click.IntRange(1), default=20000, show_default=True,
                     help="Lines read, sorted and scored together."),
        click.option("--token-budget", type=click.IntRange(1), default=None,
                     help="Padded tokens per scoring batch [default: 6000 on the CPU, 131072 on CUDA]."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or messages.")
@click.version_option(__version__, prog_name="rescore")
@click.pass_context
def main(ctx: click.Context, quiet: bool) -> None:
    """Score Moses phrase tables with the RNN encoder-decoder of Cho et al. (2014)."""
    # A closed pipe (`rescore score ... -o - | head`) ends quietly, as Unix tools do.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ctx.obj = Reporter(quiet)


def default_output(table_path: Path) -> Path:
    """NAME.rnn.gz beside the table; a table read from stdin goes to stdout."""
    if str(table_path) == "-":
        return table_path
    name = table_path.name[:-3] if table_path.name.endswith(".gz") else table_path.name
    return table_path.with_name(name + ".rnn.gz")


def default_model(output_path: Path) -> Path:
    name = output_path.name[:-3] if output_path.name.endswith(".gz") else output_path.name
    return output_path.with_name(name + ".model.pt")


@main.command("run")
@click.argument("phrase_table", type=EXISTING)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
              help="Output table ('-' for stdout) [default: NAME.rnn.gz beside the input].")
@click.option("--model", "model_path", type=PATH,
              help="Score with this model instead of training one (saved as OUT.model.pt).")
@train_options
@score_options
@device_options
@click.pass_obj
@reports_errors
def run_command(reporter: Reporter, phrase_table: Path, output: Optional[Path],
                model_path: Optional[Path], **options) -> None:
    """Train on PHRASE_TABLE (unless --model is given), then write it back with the new column."""
    if str(phrase_table) == "-" and model_path is None:
        raise click.UsageError("training reads the table several times: give a file, not '-', or --model")
    output = output or default_output(phrase_table)
    prepare_output(output, options["force"], phrase_table)
    if model_path is None:
        model_path = default_model(output if str(output) != "-" else default_output(phrase_table))
        train_job(reporter, phrase_table, model_path, **pick(options, TRAIN_KEYS))
    score_job(reporter, phrase_table, output, model_path, **pick(options, SCORE_KEYS))


@main.command("train")
@click.argument("phrase_table", type=EXISTING)
@click.option("-o", "--output", "model_path", type=PATH, required=True, help="Model file to write.")
@train_options
@device_options
@click.pass_obj
@reports_errors
def train_command(reporter: Reporter, phrase_table: Path, model_path: Path, **options) -> None:
    """Train a model on the unique phrase pairs of PHRASE_TABLE."""
    train_job(reporter, phrase_table, model_path, **options)


@main.command("score")
@click.argument("phrase_table", type=EXISTING)
@click.option("--model", "model_path", type=EXISTING, required=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
              help="Output table ('-' for stdout) [default: NAME.rnn.gz beside the input].")
@score_options
@device_options
@click.pass_obj
@reports_errors
def score_command(reporter: Reporter, phrase_table: Path, model_path: Path,
                  output: Optional[Path], **options) -> None:
    """Write PHRASE_TABLE back with log p(target | source) appended to every line's scores."""
    output = output or default_output(phrase_table)
    prepare_output(output, options["force"], phrase_table)
    score_job(reporter, phrase_table, output, model_path, **options)


@main.command("top-targets")
@click.argument("rescored_table", type=EXISTING)
@click.option("--sources", type=click.IntRange(1), default=10, show_default=True,
              help="How many of the most frequent source phrases to show.")
@click.option("-k", "--top", type=click.IntRange(1), default=5, show_default=True,
              help="Targets shown per source.")
@click.option("--column", type=int, default=-1, show_default=True,
              help="Score column holding the RNN score (0-based; -1 is the last).")
@click.option("--score-format", type=click.Choice(["prob", "log"]), default="prob", show_default=True)
@reports_errors
def top_targets_command(rescored_table: Path, sources: int, top: int, column: int, score_format: str) -> None:
    """Show the RNN's best-scored targets for the most frequent sources of a rescored table,
    beside the table's own p(target | source) (the paper's Table 2 check)."""
    from rescorer.inspection import top_targets

    for group in top_targets(rescored_table, sources, column, score_format == "log"):
        by_direct = sorted(group.targets, key=lambda target: -target[2])
        click.echo(f"{group.source}  (c(source)={group.frequency:g}, {len(group.targets)} targets)")
        click.echo(f"  {'RNN log p':>10}  {'log p_table':>11}  {'table rank':>10}  target")
        for tgt, rnn, direct in group.targets[:top]:
            rank = 1 + next(i for i, target in enumerate(by_direct) if target[0] == tgt)
            click.echo(f"  {rnn:10.3f}  {direct:11.3f}  {rank:10d}  {tgt}")


TRAIN_KEYS = ("preset", "shortlist_size", "src_corpus", "tgt_corpus", "batch_size", "optimizer",
              "learning_rate", "clip_norm", "max_updates", "max_time", "valid_pairs", "valid_every",
              "patience", "checkpoint_every", "seed", "resume", "cache_dir", "gru_form", "device",
              "precision")
SCORE_KEYS = ("unk_penalty", "score_format", "reject_path", "force", "chunk_size", "token_budget",
              "device", "precision")


def prepare_output(output: Path, force: bool, phrase_table: Path) -> None:
    """Fail before any work if the output cannot be written; create its directory."""
    from rescorer.table_output import check_output_target

    if str(output) == "-":
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    check_output_target(output, force, phrase_table)


def pick(options: dict, keys: tuple) -> dict:
    return {key: options[key] for key in keys}


def signature(job: str, **settings) -> str:
    """One line naming every setting, so a result can be reproduced (as sacrebleu does)."""
    fields = [f"rescore {__version__}", f"job:{job}"] + [f"{k.replace('_', '-')}:{v}"
                                                        for k, v in settings.items()]
    return "|".join(fields + [f"torch:{torch.__version__}"])


def train_job(reporter: Reporter, phrase_table: Path, model_path: Path, *, preset, shortlist_size,
              src_corpus, tgt_corpus, batch_size, optimizer, learning_rate, clip_norm, max_updates,
              max_time, valid_pairs, valid_every, patience, checkpoint_every, seed, resume,
              cache_dir, gru_form, device, precision) -> None:
    from rescorer.device import resolve_device, resolve_precision
    from rescorer.preparation import train_on_table
    from rescorer.training import TrainSettings

    torch_device = resolve_device(device)
    precision = resolve_precision(precision, torch_device)
    settings = TrainSettings(batch_size=batch_size, optimizer=optimizer, learning_rate=learning_rate,
                             clip_norm=clip_norm, max_updates=max_updates, max_seconds=max_time,
                             valid_pairs=valid_pairs, valid_every=valid_every, patience=patience,
                             checkpoint_every=checkpoint_every, seed=seed)
    reporter.say(signature("train", preset=preset, gru=gru_form, optimizer=optimizer, batch=batch_size,
                           max_updates=max_updates, seed=seed, device=torch_device.type,
                           precision=precision))
    started = time.perf_counter()
    bars = {"lines": reporter.bar(desc="reading table", unit=" lines", unit_scale=True)}

    def on_update(state, ppl):
        if "updates" not in bars:  # reading is over once updates start
            bars["lines"].close()
            bars["updates"] = reporter.bar(desc="training", total=max_updates, unit=" upd",
                                           initial=state.updates - 1)
        bar = bars["updates"]
        bar.n = state.updates
        postfix = {"best_valid_ppl": f"{state.best_valid_ppl:.2f}"}
        if ppl is not None:
            postfix["valid_ppl"] = f"{ppl:.2f}"
        bar.set_postfix(postfix, refresh=False)
        bar.refresh()

    try:
        report = train_on_table(
            phrase_table, model_path, preset=preset, settings=settings, shortlist_size=shortlist_size,
            src_corpus=src_corpus, tgt_corpus=tgt_corpus, device=torch_device, precision=precision,
            resume=resume, cache_dir=cache_dir, reset_after=gru_form == "cudnn",
            progress=bars["lines"].update, on_update=on_update)
    finally:
        for bar in bars.values():
            bar.close()
    state = report.state
    if report.vocabularies is not None:
        vocab = report.vocabularies
        reporter.say(f"shortlists from {vocab.counted_from}: {len(vocab.src_vocab) - 3} source, "
                     f"{len(vocab.tgt_vocab) - 3} target words; token coverage "
                     f"{vocab.src_coverage.ratio:.1%} source, {vocab.tgt_coverage.ratio:.1%} target")
    elapsed = time.perf_counter() - started
    reporter.say(f"trained on {report.num_pairs - report.valid_pairs} pairs ({report.valid_pairs} held out): "
                 f"{state.updates} updates, stopped: {state.stopped_because}; "
                 f"valid perplexity {state.best_valid_ppl:.2f} (update {state.best_update}), "
                 f"unigram {report.unigram_ppl:.2f}; {state.train_tokens / max(state.seconds, 1e-9):.0f} "
                 f"target tokens/s; {elapsed:.1f} s; model {model_path}")


def score_job(reporter: Reporter, phrase_table: Path, output: Path, model_path: Path, *,
              unk_penalty, score_format, reject_path, force, chunk_size, token_budget, device,
              precision) -> None:
    from rescorer.checkpoint import load_model
    from rescorer.device import resolve_device, resolve_precision
    from rescorer.rescoring import rescore_table
    from rescorer.scoring import default_token_budget

    torch_device = resolve_device(device)
    precision = resolve_precision(precision, torch_device)
    bundle = load_model(model_path, torch_device)
    reporter.say(signature("score", model=model_path.name, format=score_format,
                           unk_penalty="yes" if unk_penalty else "no",
                           budget=token_budget or default_token_budget(torch_device),
                           chunk=chunk_size, device=torch_device.type, precision=precision))
    with reporter.bar(desc="scoring", unit=" lines", unit_scale=True) as bar:
        summary = rescore_table(phrase_table, output, bundle, unk_penalty=unk_penalty,
                                score_format=score_format, force=force, reject_path=reject_path,
                                chunk_size=chunk_size, token_budget=token_budget,
                                precision=precision, progress=bar.update)
    rejected = f", {summary.lines_rejected} rejected to {reject_path}" if summary.lines_rejected else ""
    reporter.say(f"lines in {summary.lines_read}, out {summary.lines_written}{rejected}; "
                 f"mean log p {summary.mean_log_prob:.3f}; shortlist coverage "
                 f"{summary.src_coverage:.1%} source, {summary.tgt_coverage:.1%} target tokens; "
                 f"{summary.seconds:.1f} s, {summary.pairs_per_second:.0f} pairs/s; "
                 f"wrote {output}")


def _add_moses_commands() -> None:
    from moses_integration.commands import moses

    main.add_command(moses)


_add_moses_commands()

if __name__ == "__main__":
    main()
