"""`rescore moses ...`: the commands of the Moses integration, in one module. They only parse
options, call the library (moses_integration, which imports neither torch nor click) and report;
library errors become one-line messages (exit 1)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Optional

import click

from moses_integration.ini.moses_ini import MosesIni
from moses_integration.ini.moses_install import find_moses
from moses_integration.tables.phrase_table import binarize_compact, read_num_scores
from moses_integration.preflight import run_preflight
from moses_integration.tables.starting_weights import table_starting_weights
from rescorer.cli.options import (ANY_PATH, EXISTING_FILE, FINITE_FLOAT, SCORE_COLUMN, base_dir_option, column_index,
                                  decoder_flags_option, detokenize_option, dev_option, device_option,
                                  feature_option, force_option, initial_weight_option, max_iterations_option,
                                  moses_dir_option, moses_install_options, nbest_option, new_columns_option,
                                  optimizer_option, output_option, parallel_set, seed_option, test_option,
                                  test_type_option)
from rescorer.cli.reporting import is_quiet, say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["moses"]


def working_in(directory: Path, role: str):
    """A lock on a directory a Moses command works in, so that a second run on it is refused
    (its contents are the run's to continue, never replaced)."""
    return RunPaths([], [Target(directory, role, kind="work-dir", may_exist=True)], force=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def moses() -> None:
    """Use the RNN score in a Moses system: edit moses.ini, check, tune, evaluate, ablate."""
    logging.basicConfig(level=logging.WARNING if is_quiet() else logging.INFO, format="%(message)s",
                        stream=sys.stderr)


@moses.command("add-feature")
@click.argument("ini_path", metavar="MOSES_INI", type=EXISTING_FILE)
@click.option("--table", "table_path", type=EXISTING_FILE, required=True,
              help="The rescored phrase table (text, from `rescore score`).")
@output_option("moses.ini to write.", dest="out_path", type=ANY_PATH, required=True)
@feature_option()
@initial_weight_option
@new_columns_option
@force_option("Overwrite the output.")
@moses_install_options
@reports_errors
def add_feature(ini_path: Path, table_path: Path, out_path: Path, feature: Optional[str],
                initial_weight: Optional[float], new_columns: Optional[tuple], force: bool,
                base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Point MOSES_INI's phrase table at the rescored table and add the new columns' weights.

    Nothing else in the file changes. A PhraseDictionaryCompact table is re-binarized."""
    with RunPaths([("moses.ini", ini_path), ("rescored table", table_path)],
                  [Target(out_path, "moses.ini output")], force=force):
        _add_feature(ini_path, table_path, out_path, feature, initial_weight, new_columns,
                     base_dir, moses_dir, threads)


def _add_feature(ini_path: Path, table_path: Path, out_path: Path, feature: Optional[str],
                 initial_weight: Optional[float], new_columns: Optional[tuple], base_dir: Path,
                 moses_dir: Optional[Path], threads: int) -> None:
    ini = MosesIni.read(ini_path)
    table = ini.phrase_table(feature)
    old = table.int_arg("num-features", ini.origin)
    found = read_num_scores(table_path)
    if found <= old:
        raise click.ClickException(
            f"{table_path}:1: expected more than {old} scores (num-features={old} in "
            f"{ini_path}:{table.line_no + 1}), found {found}: is it the rescored table?")
    new_path = table_path
    if table.kind == "PhraseDictionaryCompact":
        prefix = table_path.with_name(table_path.name.removesuffix(".gz"))
        new_path = binarize_compact(find_moses(moses_dir), table_path, prefix, found, threads,
                                    prefix.with_name(prefix.name + ".binarize.log"))
    try:  # keep the path relative when the table lies under base_dir, like the rest of the ini
        shown = str(new_path.resolve().relative_to(base_dir.resolve()))
    except ValueError:
        shown = str(new_path.resolve())
    layout, weights = table_starting_weights(ini, table, table_path, found, new_columns,
                                             initial_weight)
    ini.add_score_columns(table, shown, found - old, weights)
    ini.check_weights(table.name)  # never write an ini Moses would refuse to load
    ini.write(out_path, force=True)
    say(f"{out_path}: {table.name} path={shown} num-features={found} (+{found - old} column(s): "
        f"{', '.join(f'{n}={w:g}' for n, w in zip(layout.names, weights))})")


@moses.command("preflight")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@dev_option(required=False)
@test_option(required=False)
@click.option("--check-install/--no-check-install", default=True, show_default=True,
              help="Also check the Moses installation.")
@base_dir_option
@moses_dir_option
@reports_errors
def preflight(ini_path: Path, dev, dev_refs, test, test_refs, check_install: bool, base_dir: Path,
              moses_dir: Optional[Path]) -> None:
    """Check in seconds what would fail a long run; one line per problem, exit 1 if any."""
    data = [data_set for data_set in (parallel_set("dev", dev, dev_refs), parallel_set("test", test, test_refs))
            if data_set is not None]
    problems = run_preflight(ini_path, base_dir, moses_dir, data, check_install)
    for problem in problems:
        say(f"FAIL {problem}")
    if problems:
        raise click.ClickException(f"preflight: {len(problems)} problem(s)")
    say("preflight: all checks passed")


@moses.command("tune")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@dev_option()
@click.option("--work-dir", type=ANY_PATH, required=True, help="mert-moses.pl working directory.")
@nbest_option
@seed_option("Optimizer seed (mert/kbmira -r).", default=None)
@optimizer_option()
@click.option("--continue/--restart", "resume", default=True, show_default=True,
              help="Continue an interrupted run in --work-dir.")
@max_iterations_option
@decoder_flags_option
@moses_install_options
@reports_errors
def tune_command(ini_path: Path, dev, dev_refs, work_dir: Path, nbest: int, seed: Optional[int],
                 batch_mira: bool, resume: bool, max_iterations: Optional[int], decoder_flags,
                 base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Tune MOSES_INI's weights with mert-moses.pl; prints the tuned moses.ini path."""
    from moses_integration.tuning.mert_moses import TuningConfig, tune

    dev_set = parallel_set("dev", dev, dev_refs)
    install = find_moses(moses_dir)
    install.require()  # before the work directory is made
    signature("moses tune", moses=install.root, ini=ini_path, dev=",".join(map(str, dev)),
              references=len(dev_set.ref_paths), nbest=nbest,
              seed=seed, optimizer="batch-mira" if batch_mira else "mert", threads=threads)
    # Paths given on the command line are relative to the cwd; those inside moses.ini are
    # relative to --base-dir: resolve the former now so the library can join the latter.
    config = TuningConfig(ini_path=ini_path.resolve(), dev_src=dev_set.src_path,
                          dev_ref=dev_set.ref_path, dev_extra_refs=dev_set.extra_refs,
                          work_dir=work_dir, base_dir=base_dir, threads=threads, nbest=nbest,
                          seed=seed, batch_mira=batch_mira, resume=resume,
                          max_iterations=max_iterations, decoder_flags=decoder_flags)
    with working_in(work_dir, "mert-moses.pl working directory"):
        result = tune(install, config, progress=lambda i, b: say(
            f"iteration {i}: dev BLEU {'?' if b is None else f'{b:.2f}'}"))
    for warning in result.warnings:
        say(f"warning: {warning}")
    say(f"tuned after {result.iterations} iteration(s), stopped by {result.stopped_by}, dev BLEU "
         f"{'?' if result.dev_bleu is None else f'{result.dev_bleu:.2f}'}")
    click.echo(str(result.ini_path))


@moses.command("evaluate")
@click.option("--system", "systems", multiple=True, required=True, metavar="NAME=MOSES_INI",
              help="A tuned system; repeat; the first is the baseline.")
@test_option()
@click.option("--out-dir", type=ANY_PATH, required=True)
@detokenize_option
@test_type_option
@decoder_flags_option
@moses_install_options
@reports_errors
def evaluate_command(systems, test, test_refs, out_dir: Path, detokenize_lang: Optional[str], test_type: str,
                     decoder_flags, base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Decode the test set with each system, score BLEU and chrF against every reference, test
    against the baseline."""
    from moses_integration.evaluation.scores import compare, decode, evaluate_file, read_references
    from moses_integration.line_files import read_lines

    test_set = parallel_set("test", test, test_refs)
    install = find_moses(moses_dir)
    install.require(binaries=("moses",), scripts=())  # before the output directory is made
    named = []
    for item in systems:
        name, sep, ini = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=MOSES_INI, found {item!r}", param_hint="--system")
        named.append((name, Path(ini)))
    hyps, results = [], {}
    with working_in(out_dir, "evaluation directory"):
        for name, ini in named:
            hyp = decode(install, ini.resolve(), test_set.src_path, out_dir / f"{name}.hyp",
                         threads, base_dir, decoder_flags=decoder_flags)
            results[name] = evaluate_file(hyp, test_set.ref_paths, detokenize_lang)
            hyps.append((name, read_lines(hyp)))
    p_values = compare(hyps, read_references(test_set.ref_paths), test_type,
                       detokenize_lang=detokenize_lang) if len(hyps) > 1 else {}
    click.echo("system\tBLEU\tchrF\tp_BLEU\tp_chrF")
    for name, result in results.items():
        p = p_values.get(name, {})
        click.echo(f"{name}\t{result.bleu:.2f}\t{result.chrf:.2f}\t"
                   f"{p.get('bleu') if p.get('bleu') is not None else '-'}\t"
                   f"{p.get('chrf') if p.get('chrf') is not None else '-'}")
    say(f"signature: {next(iter(results.values())).bleu_signature}; {len(test_set.ref_paths)} reference(s)")


@moses.command("rescore-nbest")
@click.argument("nbest_path", metavar="NBEST", type=EXISTING_FILE)
@click.option("--source", "source_path", type=EXISTING_FILE, required=True,
              help="The decoder's input; line i is sentence id i.")
@click.option("--model", type=EXISTING_FILE, required=True)
@output_option("Output n-best list (gzipped if it ends in .gz).", dest="out_path", type=ANY_PATH,
               required=True)
@click.option("--feature-name", default="RNN0", show_default=True)
@click.option("--mode", type=click.Choice(["auto", "sentence", "phrase"]), default="auto",
              show_default=True, help="phrase: sum over the segmentation's phrase pairs.")
@device_option
@force_option("Overwrite the output.")
@reports_errors
def rescore_nbest_command(nbest_path: Path, source_path: Path, model: Path, out_path: Path,
                          feature_name: str, mode: str, device: str, force: bool) -> None:
    """Add the RNN log-probability as a feature to every line of a Moses n-best list."""
    from moses_integration.nbest.rnn_features import rescore_nbest
    from rescorer.scoring.batch_scoring import model_scorer

    reads = [("n-best list", nbest_path), ("source", source_path), ("model", model)]
    with RunPaths(reads, [Target(out_path, "output", streamable=True)], force=force):
        count = rescore_nbest(nbest_path, out_path, source_path, model_scorer(model, device),
                              feature_name, mode, force=force)
    say(f"{out_path}: {count} lines with {feature_name}=")


@moses.command("rerank")
@click.option("--ini", "ini_path", type=EXISTING_FILE, required=True,
              help="The tuned system's moses.ini: it decodes the n-best lists (unless given) and its "
                   "weights start the reranker's.")
@click.option("--model", "models", type=EXISTING_FILE, multiple=True, required=True,
              help="A sentence model (rescore train --parallel); repeat. A forward model adds RNNfwd= "
                   "log p(e|f), an inverse one (--direction inverse) RNNinv= log p(f|e).")
@dev_option()
@test_option()
@click.option("--dev-nbest", type=EXISTING_FILE, default=None,
              help="The system's dev n-best list, if already decoded (else it is decoded here).")
@click.option("--test-nbest", type=EXISTING_FILE, default=None, help="The same for the test set.")
@click.option("--nbest-size", type=click.IntRange(1), default=100, show_default=True,
              help="Hypotheses per sentence when decoding here (-n-best-list FILE N distinct).")
@click.option("--filter/--no-filter", "filter_tables", default=True, show_default=True,
              help="Decode with the ini's text tables filtered for each set (filter-model-given-input.pl).")
@click.option("--per-word/--no-per-word", default=True, show_default=True,
              help="Also add each model's log p per word of the side it predicts (NAMEPerWord=).")
@click.option("--optimizer", type=click.Choice(["mert", "kbmira"]), default="mert", show_default=True,
              help="Moses' optimizer of the reranking weights.")
@click.option("--seeds", type=click.IntRange(1), default=3, show_default=True,
              help="Optimizer runs, with seeds --seed .. --seed + N - 1.")
@seed_option("First optimizer seed.")
@click.option("--initial-weight", type=FINITE_FLOAT, default=0.0, show_default=True,
              help="Starting weight of each new feature (0: the search starts from the decoder's ranking).")
@click.option("--out-dir", type=ANY_PATH, required=True, help="Working directory; a rerun resumes there.")
@decoder_flags_option
@detokenize_option
@test_type_option
@device_option
@moses_install_options
@reports_errors
def rerank_command(ini_path: Path, models, dev, dev_refs, test, test_refs, dev_nbest: Optional[Path],
                   test_nbest: Optional[Path], nbest_size: int, filter_tables: bool, per_word: bool,
                   optimizer: str, seeds: int,
                   seed: int, initial_weight: float, out_dir: Path, decoder_flags, detokenize_lang: Optional[str],
                   test_type: str, device: str, base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Rerank a tuned system's dev and test n-best lists with sentence models' scores: tune the
    reranking weights on dev with mert or kbmira, rerank test, compare with the 1-best."""
    from moses_integration.nbest.reranking import RerankConfig, run_rerank

    install = find_moses(moses_dir)
    decoding = dev_nbest is None or test_nbest is None
    install.require(binaries=("extractor", optimizer) + (("moses",) if decoding else ()),
                    scripts=("training/filter-model-given-input.pl",) if decoding and filter_tables else ())
    config = RerankConfig(dev_nbest=dev_nbest, dev=parallel_set("dev", dev, dev_refs), test_nbest=test_nbest,
                          test=parallel_set("test", test, test_refs), ini_path=ini_path.resolve(),
                          out_dir=out_dir.resolve(), nbest_size=nbest_size, base_dir=base_dir, threads=threads,
                          decoder_flags=decoder_flags, filter_tables=filter_tables, optimizer=optimizer,
                          seeds=tuple(range(seed, seed + seeds)), initial_weight=initial_weight,
                          test_type=test_type, detokenize_lang=detokenize_lang)
    add_features, config.new_features = sentence_features(models, device, per_word)
    config.scored_with = [str(Path(model).resolve()) for model in models]
    signature("moses rerank", moses=install.root, ini=ini_path, models=",".join(m.name for m in models),
              features=",".join(config.new_features), optimizer=optimizer, seeds=seeds, seed=seed,
              nbest=nbest_size, test=test_type, references=len(config.test.ref_paths))
    with working_in(out_dir, "reranking directory"):
        run_rerank(config, install, add_features, report=say)
    click.echo((out_dir / "results.md").read_text(encoding="utf-8"), nl=False)


def sentence_features(models, device: str, per_word: bool):
    """(add_features, names): the n-best scoring step of `moses rerank` and the feature names
    it adds. Each model file is read once: its direction names its features."""
    from moses_integration.nbest.rnn_features import SentenceModel, add_sentence_features
    from rescorer.models.model_files import load_model
    from rescorer.scoring.batch_scoring import score_pairs

    bundles = [load_model(path) for path in models]
    names, seen = [], {}
    for bundle in bundles:
        base = "RNNinv" if bundle.direction == "inverse" else "RNNfwd"
        seen[base] = seen.get(base, 0) + 1
        names.append(base + (str(seen[base]) if seen[base] > 1 else ""))
    new = [n for name in names for n in ([name, name + "PerWord"] if per_word else [name])]
    scorers = [SentenceModel(name, lambda pairs, bundle=bundle: score_pairs(bundle, pairs, device=device),
                             bundle.direction == "inverse")
               for name, bundle in zip(names, bundles)]

    def add_features(nbest: Path, source: Path, out: Path) -> None:
        add_sentence_features(nbest, out, source, scorers, per_word=per_word)

    return add_features, new


@moses.command("plot-scores")
@click.argument("table_path", metavar="RESCORED_TABLE", type=EXISTING_FILE)
@output_option("PNG to write.", dest="out_path", type=ANY_PATH, required=True)
@click.option("--rnn-column", type=SCORE_COLUMN, default=5, show_default=True,
              help="Score column of the RNN score, counted from 1 (-1: the last).")
@click.option("--sample-size", type=click.IntRange(1), default=10000, show_default=True)
@seed_option("Which pairs are sampled.")
@force_option("Overwrite the output.")
@reports_errors
def plot_scores(table_path: Path, out_path: Path, rnn_column: int, sample_size: int, seed: int,
                force: bool) -> None:
    """Scatter the RNN score against the table's p(f|e) (paper Fig. 3) and p(e|f) for a sample
    of pairs, with Spearman's rho of each."""
    from moses_integration.study.score_plots import plot_rnn_vs_table
    from rescorer.analysis.figures import check_figure_path

    with RunPaths([("rescored table", table_path)], [Target(out_path, "figure")], force=force):
        check_figure_path(out_path)
        result = plot_rnn_vs_table(table_path, column_index(rnn_column), out_path, sample_size, seed, force)
    say(f"wrote {out_path}: {result.summary()}")


@moses.command("ablation")
@click.argument("ini_path", metavar="MOSES_INI", type=ANY_PATH)
@click.option("--rescored-table", type=ANY_PATH, default=None,
              help="Table with the model (and word-penalty) columns, from `rescore score --unk-penalty`.")
@click.option("--model", "models", type=ANY_PATH, multiple=True,
              help="Instead of --rescored-table: score the ini's (text) table with this model; "
                   "repeat for several (one column each; systems are named after the files).")
@new_columns_option
@dev_option()
@test_option()
@click.option("--out-dir", type=ANY_PATH, required=True)
@click.option("--replicates", type=click.IntRange(1), default=3, show_default=True)
@click.option("--system", "systems", multiple=True, metavar="NAME",
              help="Only these systems, e.g. +RNN (Baseline is always built), or +a+b: the table's "
                   "columns a and b together. Default: all the fixed systems.")
@feature_option()
@nbest_option
@seed_option("Replicate r uses seed + r (same seeds in every system).")
@optimizer_option()
@max_iterations_option
@initial_weight_option
@click.option("--warm-start/--no-warm-start", default=True, show_default=True,
              help="Start each system from the same replicate's tuned Baseline weights.")
@decoder_flags_option
@click.option("--filter-test/--no-filter-test", default=True, show_default=True,
              help="Filter the test set's text tables once for every system.")
@detokenize_option
@test_type_option
@click.option("--plot/--no-plot", default=True, show_default=True,
              help="Write mert-curves.png and fig3-rnn-vs-direct.png (paper Fig. 3).")
@click.option("--rerank-model", "rerank_models", type=EXISTING_FILE, multiple=True,
              help="A sentence model (rescore train --parallel); repeat. Adds the rows +rerank and "
                   "+RNN+rerank: those systems' n-best lists reranked with the models (see moses rerank).")
@click.option("--rerank-system", "rerank_systems", multiple=True, metavar="NAME",
              help="A system whose n-best lists --rerank-model reranks; repeat. Default: Baseline and "
                   "+RNN, or Baseline and the --system ones.")
@click.option("--rerank-optimizer", type=click.Choice(["mert", "kbmira"]), default="mert", show_default=True)
@moses_install_options
@reports_errors
def ablation_command(ini_path: Path, rescored_table: Optional[Path], models, new_columns, dev, dev_refs,
                     test, test_refs, out_dir: Path, replicates: int, systems, feature: Optional[str],
                     nbest: int, seed: int, batch_mira: bool, max_iterations: Optional[int],
                     initial_weight: Optional[float], warm_start: bool, decoder_flags,
                     filter_test: bool, detokenize_lang: Optional[str], test_type: str,
                     plot: bool, rerank_models, rerank_systems, rerank_optimizer: str, base_dir: Path,
                     moses_dir: Optional[Path], threads: int) -> None:
    """Baseline, +RNN, +WP, +RNN+WP: R tuning replicates each, test scores, results table; with
    --rerank-model also +rerank and +RNN+rerank (or +<system>+rerank for --system's)."""
    from moses_integration.study.ablation import AblationConfig, RerankRows, run_ablation
    from moses_integration.study.score_plots import plot_rnn_vs_table
    from moses_integration.tables.rescored_table import score_table
    from moses_integration.tables.columns import names_from_models

    if (rescored_table is None) == (not models):
        raise click.UsageError("give exactly one of --rescored-table and --model")
    install = find_moses(moses_dir)
    if models:
        new_columns = new_columns or names_from_models(models)
        table = MosesIni.read(ini_path).phrase_table(feature)
        rescored_table = score_table(base_dir / table.args["path"], models,
                                     out_dir / "tables" / "rescored.phrase-table.gz")
    signature("moses ablation", moses=install.root, ini=ini_path, table=rescored_table, replicates=replicates,
              seed=seed, nbest=nbest, optimizer="batch-mira" if batch_mira else "mert",
              start="warm" if warm_start else "cold", initial_weight="scaled" if initial_weight is None else initial_weight,
              decoder_flags=" ".join(decoder_flags) or "none", test=test_type,
              detok=detokenize_lang or "no")
    config = AblationConfig(
        ini_path=ini_path.resolve(), rescored_table=rescored_table.resolve(),
        dev=parallel_set("dev", dev, dev_refs), test=parallel_set("test", test, test_refs),
        out_dir=out_dir.resolve(),
        base_dir=base_dir, feature=feature, new_columns=new_columns, replicates=replicates,
        threads=threads, nbest=nbest, seed=seed, batch_mira=batch_mira,
        initial_weight=initial_weight, warm_start=warm_start, decoder_flags=decoder_flags,
        filter_test=filter_test, test_type=test_type, detokenize_lang=detokenize_lang,
        max_iterations=max_iterations, systems=list(systems) or None, plot_curves=plot)
    if rerank_models:
        add_features, names = sentence_features(rerank_models, "auto", per_word=True)
        config.rerank = RerankRows(add_features, names, rerank_optimizer,
                                   systems=rerank_systems,
                                   scored_with=[str(Path(m).resolve()) for m in rerank_models])
    elif rerank_systems:
        raise click.UsageError("--rerank-system needs --rerank-model")
    with working_in(out_dir, "ablation directory"):
        run_ablation(config, install, report=say)
    if plot:
        ini = MosesIni.read(ini_path)
        num_base = ini.phrase_table(feature).int_arg("num-features", ini.origin)
        figure = out_dir / "fig3-rnn-vs-direct.png"
        if not figure.is_file():
            say(plot_rnn_vs_table(rescored_table, num_base, figure).summary())
    click.echo((out_dir / "results.md").read_text(encoding="utf-8"), nl=False)
