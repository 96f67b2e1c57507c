"""`rescore [run] | train | score`: the main job and its two halves. They only parse options,
call the library (training.pipeline, scoring.table_rescoring) and report; torch is imported
inside the commands."""

from __future__ import annotations

import logging
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import click
from click.core import ParameterSource

from rescorer.cli.options import (EXISTING_FILE, EXISTING_OR_STDIN, MODEL_KEYS, NEW_FILE, device_options, force_option,
                                  model_options, model_settings_from, output_option, reject_option,
                                  score_options, train_options)
from rescorer.cli.reporting import Reporter, signature
from rescorer.runtime.failure_reports import injected_fault, reports_errors

__all__ = ["MAIN_COMMANDS"]


def default_output(table_path: Path) -> Path:
    """NAME.rnn.gz beside the table; a table read from stdin goes to stdout."""
    if str(table_path) == "-":
        return table_path
    name = table_path.name[:-3] if table_path.name.endswith(".gz") else table_path.name
    return table_path.with_name(name + ".rnn.gz")


def default_model(output_path: Path) -> Path:
    name = output_path.name[:-3] if output_path.name.endswith(".gz") else output_path.name
    return output_path.with_name(name + ".model.pt")


@click.command("run")
@click.argument("phrase_table", type=EXISTING_OR_STDIN)
@output_option("Output table ('-' for stdout) [default: NAME.rnn.gz beside the input].")
@click.option("--model", "model_paths", type=NEW_FILE, multiple=True,
              help="Score with this model instead of training one (saved as OUT.model.pt); "
                   "repeat for one column per model.")
@model_options
@train_options
@score_options
@device_options
@click.pass_obj
@reports_errors
def run_command(reporter: Reporter, phrase_table: Path, output: Optional[Path],
                model_paths: tuple, **options) -> None:
    """Train on PHRASE_TABLE (unless --model is given), then write it back with the new column."""
    from rescorer.io.path_checks import RunPaths, output_targets, training_targets

    training = not model_paths
    check_ensemble_size(options["ensemble"], len(model_paths))
    if training:
        require_rereadable(phrase_table)
    else:
        refuse_training_options(explicit_options())
    output = output or default_output(phrase_table)
    if training:
        model_paths = (default_model(output if str(output) != "-" else default_output(phrase_table)),)
    writes = output_targets(output, options["reject_path"])
    if training:
        writes += training_targets(model_paths[0], options["cache_dir"], options["resume"])
    reads = [("phrase table", phrase_table), *(("model", None if training else path) for path in model_paths),
             ("source corpus", options["src_corpus"]), ("target corpus", options["tgt_corpus"])]
    explicit = explicit_options()
    with job_ranks(reporter, options["device"], options.pop("rank_timeout"), training) as ranks:
        if output_already_finished(reporter, ranks, output, options["reject_path"], options["resume"]):
            return
        with ranks.main_only(RunPaths(reads, writes, force=options["force"]), "checking the paths"):
            run_jobs(reporter, ranks, phrase_table, output, model_paths, training, explicit, options)


def run_jobs(reporter: Reporter, ranks, phrase_table: Path, output: Path, model_paths: tuple,
             training: bool, explicit: set, options: dict) -> None:
    """`rescore TABLE`'s work once its paths are checked: train (unless --model), then score."""
    from rescorer.io.table_reader import SKIP_BAD_LINES

    check_partial_output(ranks, output, options["resume"], options["force"])
    if training:
        from rescorer.data.pair_sources import PhraseTablePairs

        train_job(reporter, PhraseTablePairs(phrase_table), model_paths[0], pick(options, TRAIN_KEYS), explicit,
                  reject=SKIP_BAD_LINES if options["reject_path"] else None, ranks=ranks)
    try:
        score_job(reporter, phrase_table, output, list(model_paths), ranks=ranks,
                  models_retrained=training and options["resume"], **pick(options, SCORE_KEYS))
    except KeyboardInterrupt as interrupt:
        if training:
            interrupt.note = (f"the model {model_paths[0]} is saved; {getattr(interrupt, 'note', '')}"
                              f"; `rescore score {phrase_table} --model {model_paths[0]}` scores "
                              f"without training again")
        raise


@click.command("train")
@click.argument("phrase_table", type=EXISTING_OR_STDIN, required=False)
@click.option("--parallel", nargs=2, type=EXISTING_FILE, metavar="SRC TGT", default=None,
              help="Train on a parallel corpus instead of a phrase table: tokenized source and "
                   "target text, one sentence per line (gzip allowed), as Moses trains on; for "
                   "sentence models that rerank n-best lists.")
@output_option("Model file to write.", dest="model_path", type=NEW_FILE, required=True)
@model_options
@train_options
@reject_option
@force_option("Replace an existing model (and its checkpoint).")
@device_options
@click.pass_obj
@reports_errors
def train_command(reporter: Reporter, phrase_table: Optional[Path], parallel: Optional[tuple],
                  model_path: Path, reject_path: Optional[Path], force: bool, **options) -> None:
    """Train a model on the unique phrase pairs of PHRASE_TABLE, or on the sentence pairs of a
    parallel corpus (--parallel SRC TGT)."""
    from rescorer.io.atomic_output import AtomicOutput, committed_together
    from rescorer.io.path_checks import RunPaths, output_targets, training_targets

    explicit = explicit_options()
    source = training_source(phrase_table, parallel, explicit, options)
    if options["precision"] == "int8":
        raise click.UsageError("--precision int8 is for scoring (rescore score, rescore run); "
                               "train in fp32 or bf16")
    writes = output_targets(None, reject_path) + training_targets(model_path, options["cache_dir"],
                                                                   options["resume"])
    if parallel:
        reads = [("source side of the corpus", parallel[0]), ("target side of the corpus", parallel[1])]
    else:
        reads = [("phrase table", phrase_table), ("source corpus", options["src_corpus"]),
                 ("target corpus", options["tgt_corpus"])]
    with job_ranks(reporter, options["device"], options.pop("rank_timeout")) as ranks, \
            ranks.main_only(RunPaths(reads, writes, force=force), "checking the paths"):
        rejects = (AtomicOutput(reject_path, force=force, only_if_written=True)
                   if reject_path and ranks.is_main else None)
        with committed_together(rejects):
            train_job(reporter, source, model_path, options, explicit, reject=rejects, ranks=ranks)
        if rejects is not None and rejects.lines_written:
            reporter.say(f"{rejects.lines_written} bad lines rejected to {reject_path}")


@click.command("score")
@click.argument("phrase_table", type=EXISTING_OR_STDIN)
@click.option("--model", "model_paths", type=EXISTING_OR_STDIN, required=True, multiple=True,
              help="Model file; repeat it for one column per model, in the order given.")
@output_option("Output table ('-' for stdout) [default: NAME.rnn.gz beside the input].")
@click.option("--resume", is_flag=True,
              help="Continue an interrupted run from the units it finished (kept in .OUT.partial/).")
@score_options
@device_options
@click.pass_obj
@reports_errors
def score_command(reporter: Reporter, phrase_table: Path, model_paths: tuple,
                  output: Optional[Path], **options) -> None:
    """Write PHRASE_TABLE back with each model's log p(target | source) (log p(source | target) for
    an inverse model) appended to every line's scores (then the word penalty with --unk-penalty)."""
    from rescorer.io.path_checks import RunPaths, output_targets

    check_ensemble_size(options["ensemble"], len(model_paths))
    output = output or default_output(phrase_table)
    reads = [("phrase table", phrase_table), *(("model", path) for path in model_paths)]
    with job_ranks(reporter, options["device"], options.pop("rank_timeout"), training=False) as ranks:
        if output_already_finished(reporter, ranks, output, options["reject_path"], options["resume"]):
            return
        with ranks.main_only(RunPaths(reads, output_targets(output, options["reject_path"]),
                                      force=options["force"]), "checking the paths"):
            check_partial_output(ranks, output, options["resume"], options["force"])
            score_job(reporter, phrase_table, output, list(model_paths), ranks=ranks, **options)


TRAIN_KEYS = (*MODEL_KEYS, "shortlist_size", "src_corpus", "tgt_corpus", "direction", "pair_weights", "batch_tokens",
              "batch_size", "optimizer", "learning_rate", "warmup_updates", "sampled_softmax", "clip_norm",
              "max_updates", "max_epochs", "max_time", "valid_pairs", "valid_every", "patience",
              "checkpoint_every", "seed", "resume", "cache_dir", "device", "precision", "max_pair_length")
SCORE_KEYS = ("unk_penalty", "ensemble", "per_word", "score_format", "reject_path", "force", "chunk_size",
              "token_budget",
              "unit_lines", "resume", "device", "precision")


CORPUS_MAX_LENGTH = 80  # words per side, as Moses' clean-corpus-n.perl is usually run


def training_source(phrase_table: Optional[Path], parallel: Optional[tuple], explicit: set, options: dict):
    """What `rescore train` reads: the table, or the parallel corpus (with the options a corpus
    cannot take refused, and a sentence-length bound of 80 words unless one is given)."""
    from rescorer.data.pair_sources import ParallelCorpusPairs, PhraseTablePairs

    if (phrase_table is None) == (parallel is None):
        raise click.UsageError("give a PHRASE_TABLE or --parallel SRC TGT (one of them)")
    if phrase_table is not None:
        require_rereadable(phrase_table)
        return PhraseTablePairs(phrase_table)
    for name, flag in (("src_corpus", "--src-corpus"), ("tgt_corpus", "--tgt-corpus")):
        if options[name] is not None:
            raise click.UsageError(f"{flag}: with --parallel the shortlists are counted on the corpus itself; "
                                   f"drop {flag}")
    if options["pair_weights"] != "unique":
        raise click.UsageError(f"--pair-weights {options['pair_weights']}: a parallel corpus has no pair "
                               f"counts; its sentence pairs count once each")
    for path in parallel:
        require_rereadable(path)
    if "max_pair_length" not in explicit:
        options["max_pair_length"] = CORPUS_MAX_LENGTH
    return ParallelCorpusPairs(*parallel)


def refuse_training_options(explicit: set) -> None:
    """With --model nothing is trained: an option that describes the model to train (or how to
    train it) would be silently ignored, so it is refused in one line instead."""
    ignored = [name for name in TRAIN_KEYS if name in explicit and name not in SCORE_KEYS]
    if ignored:
        params = {param.name: param for param in click.get_current_context().command.params}
        shown = ", ".join(params[name].opts[-1] for name in ignored)
        raise click.UsageError(f"{shown}: with --model nothing is trained, and the model's own "
                               f"settings are used; drop {'them' if len(ignored) > 1 else 'it'}, "
                               f"or drop --model to train a new model")


def require_rereadable(phrase_table: Path) -> None:
    """Training reads the table several times: stdin, a FIFO or a device cannot do that."""
    from rescorer.io.path_checks import is_stream

    if is_stream(phrase_table):
        raise click.UsageError(f"{phrase_table}: training reads its input several times: give a "
                               f"regular file, not a pipe or '-' (or score with --model)")


@contextmanager
def job_ranks(reporter: Reporter, device: str, rank_timeout: float, training: bool = True):
    """This process's place in a torchrun job (a world of one without torchrun). Only rank 0
    reports; a failure on any rank fails them all, reported once by rank 0."""
    from rescorer.runtime.device import resolve_device
    from rescorer.runtime.distributed import join, leave

    ranks = join(resolve_device(device).type, rank_timeout, gradients=training)
    if not ranks.is_main:
        reporter.quiet = True
        logging.getLogger().setLevel(logging.ERROR)
    with ranks.together():
        yield ranks
    leave(ranks)


def output_already_finished(reporter: Reporter, ranks, output: Path, reject_path: Optional[Path],
                            resume: bool) -> bool:
    """A run stopped after putting OUT in place but before removing .OUT.partial/ had finished:
    the directory is removed (saying so), and under --resume nothing is left to do. The check
    holds the output's locks, as the run that left it no longer does."""
    import dataclasses

    from rescorer.io.path_checks import RunPaths, is_stream, output_targets
    from rescorer.io.unit_journal import partial_dir, remove_finished_leftover

    if is_stream(output) or not (partial_dir(output).is_dir() and Path(output).is_file()):
        return False

    def remove() -> Optional[str]:
        targets = [dataclasses.replace(target, may_exist=True)
                   for target in output_targets(output, reject_path)]
        with RunPaths([], targets, force=False):
            return remove_finished_leftover(output)

    removed = ranks.on_main(remove, "checking the paths")
    if removed:
        reporter.say(removed)
    if removed and resume:
        reporter.say(f"{output} is complete: nothing to resume")
        return True
    return False


def check_partial_output(ranks, output: Path, resume: bool, force: bool) -> None:
    """Before any long work: an interrupted scoring left beside OUT needs --resume or --force."""
    from rescorer.io.path_checks import is_stream
    from rescorer.io.unit_journal import check_leftover

    if not is_stream(output):
        ranks.on_main(lambda: check_leftover(output, resume, force), "checking the paths")


def explicit_options() -> set:
    """Names of the options given on the command line (not left at their defaults)."""
    ctx = click.get_current_context()
    return {name for name in ctx.params
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}


def pick(options: dict, keys: tuple) -> dict:
    return {key: options[key] for key in keys}


def batching(batch_size: Optional[int], batch_tokens: Optional[int]) -> tuple:
    """(batch_size, batch_tokens) for TrainSettings: one way to batch, token batches by default."""
    from rescorer.training.trainer import DEFAULT_BATCH_TOKENS

    if batch_size is not None and batch_tokens is not None:
        raise click.UsageError("--batch-size (random pairs, the paper's) and --batch-tokens (length-sorted "
                               "batches) are two ways to batch: give one")
    return batch_size, (None if batch_size is not None else batch_tokens or DEFAULT_BATCH_TOKENS)


def train_job(reporter: Reporter, source, model_path: Path, options: dict,
              explicit: set, reject=None, ranks=None) -> None:
    """Train on `source` (rescorer.data.pair_sources: a table or a parallel corpus); under
    --resume the options left at their defaults are the checkpoint's, and the settings line
    shows what is really used."""
    from rescorer.io.file_names import checkpoint_path_for
    from rescorer.models.model_files import read_model_file
    from rescorer.runtime.device import resolve_device, resolve_precision
    from rescorer.runtime.distributed import SINGLE, rank_device
    from rescorer.training.budget import SpeedProbe, describe_limit
    from rescorer.training.distributed_trainer import check_batch_size
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.resume import merge_resumed_options, recordable_options
    from rescorer.training.trainer import TrainSettings

    payload = None
    if options["resume"]:
        checkpoint = checkpoint_path_for(model_path)
        if not checkpoint.is_file():
            raise click.ClickException(f"{checkpoint}: no checkpoint to resume from")
        payload = read_model_file(checkpoint)
        options = merge_resumed_options(options, explicit,
                                        payload.get("training", {}).get("options", {}))
    o = options
    model_settings = model_settings_from(o)
    ranks = ranks or SINGLE
    batch_size, batch_tokens = batching(o["batch_size"], o["batch_tokens"])
    if ranks.is_distributed and batch_size is not None:
        check_batch_size(batch_size, ranks)
    torch_device = rank_device(ranks, resolve_device(o["device"]))
    precision = resolve_precision(o["precision"], torch_device)
    if precision == "int8":  # `rescore run --precision int8`: int8 scores a model trained in fp32
        precision = "fp32"
    warn_if_emulated(reporter, precision, torch_device)
    settings = TrainSettings(batch_size=batch_size, batch_tokens=batch_tokens, optimizer=o["optimizer"],
                             learning_rate=o["learning_rate"], warmup_updates=o["warmup_updates"],
                             sampled_softmax=o["sampled_softmax"], pair_weights=o["pair_weights"],
                             clip_norm=o["clip_norm"],
                             max_updates=o["max_updates"], max_epochs=o["max_epochs"],
                             max_seconds=o["max_time"],
                             valid_pairs=o["valid_pairs"], valid_every=o["valid_every"],
                             patience=o["patience"], checkpoint_every=o["checkpoint_every"],
                             seed=o["seed"], max_pair_length=o["max_pair_length"] or None)
    used = settings.resolved()
    signature("train", **model_settings.describe(), direction=o["direction"], pairs=o["pair_weights"],
              optimizer=o["optimizer"],
              lr=f"{used.learning_rate:g}",
              batch=f"{batch_tokens} tokens" if batch_tokens else f"{batch_size} pairs",
              warmup=used.warmup_updates, softmax=f"sampled {used.sampled_softmax}" if used.sampled_softmax
              else "full", max_updates=o["max_updates"] or "-",
              max_epochs=o["max_epochs"] or "-", patience=o["patience"], seed=o["seed"],
              resume="yes" if o["resume"] else "no", device=torch_device.type,
              precision=precision, **({"ranks": ranks.world_size} if ranks.is_distributed else {}))
    started = time.perf_counter()
    bars = {}
    probe = [None]  # the SpeedProbe, made at the first update (when the update limit is known)

    def on_pass(what: str) -> None:  # each pass over the table counts its own lines
        if "lines" in bars:
            bars["lines"].close()
        bars["lines"] = reporter.bar(desc=f"reading {source.kind} ({what})", unit=" lines", unit_scale=True)

    def on_update(state, ppl):
        if "updates" not in bars:  # reading is over once updates start
            if "lines" in bars:
                bars.pop("lines").close()
            bars["updates"] = reporter.bar(desc="training", total=state.update_limit, unit=" upd",
                                           initial=state.updates - 1)
            limit = describe_limit(state.update_limit, o["max_updates"], o["max_epochs"])
            time_left = None if o["max_time"] is None else max(o["max_time"] - state.seconds, 0.0)
            probe[0] = SpeedProbe(state.update_limit, limit, o["valid_every"], o["valid_pairs"],
                                  state.train_pairs / max(state.updates, 1), torch_device.type, time_left)
        estimate = probe[0].update(state.updates)
        if estimate and probe[0].reachable < bars["updates"].total:  # --max-time ends it sooner
            bars["updates"].total = probe[0].reachable
        if estimate and not reporter.quiet:
            from rescorer.runtime.progress import LogLineBar

            if isinstance(bars["updates"], LogLineBar):  # whole lines: no bar to clear first
                reporter.say(estimate)
            else:
                bars["updates"].write(estimate, file=sys.stderr)
        bar = bars["updates"]
        bar.n = state.updates
        postfix = {"best_valid_ppl": f"{state.best_valid_ppl:.2f}"}
        if ppl is not None:
            postfix["valid_ppl"] = f"{ppl:.2f}"
        bar.set_postfix(postfix, refresh=False)
        bar.refresh()

    try:
        report = train_on_table(
            source, model_path, model=model_settings, settings=settings,
            shortlist_size=o["shortlist_size"], src_corpus=o["src_corpus"], tgt_corpus=o["tgt_corpus"],
            device=torch_device, precision=precision, resume=o["resume"], cache_dir=o["cache_dir"],
            progress=lambda lines: bars["lines"].update(lines), on_pass=on_pass, on_update=on_update,
            reject=reject, options=recordable_options(options), checkpoint_payload=payload,
            ranks=ranks, direction=o["direction"])
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
    left_out = (f"; {report.too_long} longer than {o['max_pair_length']} words left out"
                if report.too_long else "")
    reporter.say(f"trained on {report.num_pairs - report.valid_pairs} pairs ({report.valid_pairs} held out"
                 f"{left_out}): "
                 f"{state.updates} updates, stopped: {state.stopped_because}; "
                 f"valid perplexity {state.best_valid_ppl:.2f} (update {state.best_update}), "
                 f"unigram {report.unigram_ppl:.2f}; {state.train_tokens / max(state.seconds, 1e-9):.0f} "
                 f"target tokens/s; {elapsed:.1f} s; model {model_path}")
    kept = kept_for_more_training(source, model_path, o["cache_dir"])
    if kept:
        reporter.say(kept)


def warn_if_emulated(reporter: Reporter, precision: str, device) -> None:
    """Before a long run: bf16 or int8 on a CPU without instructions for them is slower than fp32."""
    from rescorer.runtime.cpu_features import cpu_features, slow_precision_warning

    warning = slow_precision_warning(precision, device.type, cpu_features())
    if warning:
        reporter.say(warning)


def kept_for_more_training(source, model_path: Path, cache_dir: Optional[Path]) -> str:
    """What training leaves beside the model and why, so that a user can reclaim the space."""
    from rescorer.io.file_names import checkpoint_path_for

    kept = [path for path in (checkpoint_path_for(model_path),
                              cache_dir or model_path.with_name(model_path.name + ".cache"))
            if path.exists()]
    if not kept:
        return ""
    sizes = ", ".join(f"{path} ({_megabytes(path)})" for path in kept)
    return (f"kept for more training (`rescore train {source.command_args()} -o {model_path} --resume "
            f"--max-updates N`): {sizes}; when done, `rm -r {' '.join(map(str, kept))}`")


def _megabytes(path: Path) -> str:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return f"{sum(p.stat().st_size for p in files) / 1e6:.1f} MB"


def score_job(reporter: Reporter, phrase_table: Path, output: Path, model_paths: list, *,
              device: str, ranks, **options) -> None:
    """Score with every model; `options` are the score options, as ScoreSettings takes them."""
    from rescorer.models.model_files import load_model
    from rescorer.runtime.device import resolve_device, resolve_precision
    from rescorer.runtime.distributed import rank_device
    from rescorer.scoring.batch_scoring import default_token_budget
    from rescorer.scoring.settings import ScoreSettings
    from rescorer.scoring.table_rescoring import rescore_table

    torch_device = rank_device(ranks, resolve_device(device))
    settings = ScoreSettings(**{**options, "precision": resolve_precision(options["precision"],
                                                                          torch_device)})
    warn_if_emulated(reporter, settings.precision, torch_device)
    bundles = [load_model(path, torch_device) for path in model_paths]
    check_ensemble(settings.ensemble, bundles, model_paths)
    if settings.precision == "int8":
        from rescorer.models.quantization import quantize_int8

        for bundle in bundles:
            quantize_int8(bundle.model)
    names = [path.name for path in model_paths]
    s = settings
    signature("score", model=",".join(f"{name}({bundle.config.arch})"
                                      for name, bundle in zip(names, bundles)),
              format=s.score_format, unk_penalty="yes" if s.unk_penalty else "no",
              columns=("ensemble" if s.ensemble else "per-model") + (",per-word" if s.per_word else ""),
              budget=s.token_budget or default_token_budget(torch_device), chunk=s.chunk_size,
              unit=s.unit_lines, device=torch_device.type, precision=s.precision,
              resume="yes" if s.resume else "no",
              **({"ranks": ranks.world_size} if ranks.is_distributed else {}))
    with reporter.bar(desc="scoring", unit=" lines", unit_scale=True) as bar:
        summary = rescore_table(phrase_table, output, bundles, settings, progress=bar.update,
                                ranks=ranks, model_names=names)
    reporter.say(summary.report(names, s.reject_path, s.unk_penalty, output))
    injected_fault("after-summary")


def check_ensemble_size(ensemble: bool, models: int) -> None:
    if ensemble and models < 2:
        raise click.UsageError("--ensemble mixes several models into one column: give --model two or more times")


def check_ensemble(ensemble: bool, bundles: list, model_paths: list) -> None:
    """An ensemble mixes distributions over the same thing: two or more models of one direction."""
    if not ensemble:
        return
    check_ensemble_size(ensemble, len(bundles))
    directions = {bundle.direction for bundle in bundles}
    if len(directions) > 1:
        named = ", ".join(f"{path.name} ({bundle.direction})" for path, bundle in zip(model_paths, bundles))
        raise click.UsageError(f"--ensemble mixes models of one direction, not {named}: score the "
                               f"directions as columns of their own (drop --ensemble)")


MAIN_COMMANDS = (run_command, train_command, score_command)
