"""`rescore moses rescore-nbest | rerank`: the RNN scores as n-best features, and n-best lists
reranked with them. Both hand moses_integration the one in-process scorer (moses_runs.rnn_scorer)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from moses_integration.ini.moses_install import find_moses
from rescorer.cli.moses_runs import working_in
from rescorer.cli.options import (ANY_PATH, EXISTING_FILE, TUNING_OPTIMIZERS, decoder_flags_option, detokenize_option,
                                  dev_option, device_option, force_option, initial_weight_option, model_option,
                                  moses_install_options, nbest_size_option, optimizer_option, output_option,
                                  parallel_set, precision_option, seed_option, test_option, test_type_option)
from rescorer.cli.reporting import say, signature
from rescorer.io.path_checks import RunPaths, Target
from rescorer.runtime.failure_reports import reports_errors

__all__ = ["NBEST_COMMANDS"]


@click.command("rescore-nbest")
@click.argument("nbest_path", metavar="NBEST", type=EXISTING_FILE)
@click.option("--input", "input_path", type=EXISTING_FILE, required=True,
              help="The decoder's input (tokenized, one sentence per line, gzip allowed); line i is "
                   "sentence id i.")
@model_option("The model whose log p becomes the feature: a sentence model (rescore train --parallel), "
              "or a phrase-table model with --mode phrase.")
@output_option("Output n-best list (gzipped if it ends in .gz; '-': stdout).", required=True)
@click.option("--feature-name", default="RNN0", show_default=True,
              help="The feature's name in the list (NAME= value), as Moses' extractor and mert read it.")
@click.option("--mode", type=click.Choice(["auto", "sentence", "phrase"]), default="auto",
              show_default=True, help="phrase: sum over the segmentation's phrase pairs.")
@device_option
@precision_option
@force_option("Overwrite the output.")
@reports_errors
def rescore_nbest_command(nbest_path: Path, input_path: Path, model: Path, output: Path,
                          feature_name: str, mode: str, device: str, precision: str, force: bool) -> None:
    """Add the RNN log-probability as a feature to every line of a Moses n-best list."""
    from moses_integration.nbest.rnn_features import rescore_nbest
    from moses_integration.scorer import pair_scorer
    from rescorer.cli.moses_runs import rnn_scorer

    reads = [("n-best list", nbest_path), ("source", input_path), ("model", model)]
    with RunPaths(reads, [Target(output, "output", streamable=True)], force=force):
        count = rescore_nbest(nbest_path, output, input_path,
                              pair_scorer(rnn_scorer(device, precision), model), feature_name, mode, force=force)
    say(f"{output}: {count} lines with {feature_name}=")


@click.command("rerank")
@click.option("--ini", "ini_path", type=EXISTING_FILE, required=True,
              help="The tuned system's moses.ini: it decodes the n-best lists (unless given) and its "
                   "weights start the reranker's.")
@model_option("A sentence model (rescore train --parallel); repeat. A forward model adds RNNfwd= "
              "log p(e|f), an inverse one (--direction inverse) RNNinv= log p(f|e).", multiple=True)
@dev_option()
@test_option()
@click.option("--dev-nbest", type=EXISTING_FILE, default=None,
              help="The system's dev n-best list, if already decoded (else it is decoded here).")
@click.option("--test-nbest", type=EXISTING_FILE, default=None, help="The same for the test set.")
@nbest_size_option("Hypotheses per sentence when decoding here (Moses' -n-best-list FILE N distinct).")
@click.option("--filter/--no-filter", "filter_tables", default=True, show_default=True,
              help="Decode with the ini's text tables filtered for each set (filter-model-given-input.pl).")
@click.option("--per-word/--no-per-word", default=True, show_default=True,
              help="Also add each model's log p per word of the side it predicts (NAMEPerWord=).")
@optimizer_option("Moses' optimizer of the reranking weights: mert, or batch MIRA (kbmira).")
@click.option("--seeds", type=click.IntRange(1), default=3, show_default=True,
              help="Optimizer runs, with seeds --seed .. --seed + N - 1.")
@seed_option("First optimizer seed.")
@initial_weight_option("Starting weight of each new feature [default: 0, so that the search starts from "
                       "the decoder's ranking].")
@click.option("--out-dir", type=ANY_PATH, required=True, help="Working directory; a rerun resumes there.")
@decoder_flags_option
@detokenize_option
@test_type_option
@device_option
@precision_option
@moses_install_options
@reports_errors
def rerank_command(ini_path: Path, models, dev, dev_refs, test, test_refs, dev_nbest: Optional[Path],
                   test_nbest: Optional[Path], nbest_size: int, filter_tables: bool, per_word: bool,
                   optimizer: str, seeds: int,
                   seed: int, initial_weight: Optional[float], out_dir: Path, decoder_flags,
                   detokenize_lang: Optional[str], test_type: str, device: str, precision: str, base_dir: Path, moses_dir: Optional[Path], threads: int) -> None:
    """Rerank a tuned system's dev and test n-best lists with sentence models' scores: tune the
    reranking weights on dev with mert or kbmira, rerank test, compare with the 1-best."""
    from moses_integration.nbest.reranking import RerankConfig, run_rerank
    from moses_integration.nbest.sentence_models import sentence_features
    from rescorer.cli.moses_runs import rnn_scorer

    install = find_moses(moses_dir)
    decoding = dev_nbest is None or test_nbest is None
    optimizer = TUNING_OPTIMIZERS[optimizer]  # the program: mert or kbmira
    install.require(binaries=("extractor", optimizer) + (("moses",) if decoding else ()),
                    scripts=("training/filter-model-given-input.pl",) if decoding and filter_tables else ())
    config = RerankConfig(dev_nbest=dev_nbest, dev=parallel_set("dev", dev, dev_refs), test_nbest=test_nbest,
                          test=parallel_set("test", test, test_refs), ini_path=ini_path.resolve(),
                          out_dir=out_dir.resolve(), nbest_size=nbest_size, base_dir=base_dir, threads=threads,
                          decoder_flags=decoder_flags, filter_tables=filter_tables, optimizer=optimizer,
                          seeds=tuple(range(seed, seed + seeds)),
                          initial_weight=0.0 if initial_weight is None else initial_weight,
                          test_type=test_type, detokenize_lang=detokenize_lang)
    add_features, config.new_features = sentence_features(rnn_scorer(device, precision), models, per_word)
    config.scored_with = [str(Path(model).resolve()) for model in models]
    signature("moses rerank", moses=install.root, ini=ini_path, models=",".join(m.name for m in models),
              features=",".join(config.new_features), optimizer=optimizer, seeds=seeds, seed=seed,
              nbest=nbest_size, test=test_type, references=len(config.test.ref_paths))
    with working_in(out_dir, "reranking directory"):
        run_rerank(config, install, add_features, report=say)
    click.echo((out_dir / "results.md").read_text(encoding="utf-8"), nl=False)


NBEST_COMMANDS = (rescore_nbest_command, rerank_command)
