"""What the user chooses for each `moses` command (add-feature, tune, evaluate, rescore-nbest,
rerank, ablation): one settings record each (rescorer.records), every setting declared once as a field with its kind, default,
help and option spelling; the command line makes its options from these fields. Settings that
several commands take are declared on DataSets and DecodingSettings and taken from there with
`like`, so each command's record keeps its own (--help) order. The library takes these records
themselves: `moses tune`'s is what tuning/mert_moses.py runs, `moses rerank`'s what
nbest/reranking.py runs, `moses ablation`'s what study/ablation.py runs, which makes a tuning
and a reranking record for each replicate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from moses_integration.ini.decoder_flags import parse_decoder_flags
from moses_integration.feature_field import dense_name_problem
from moses_integration.preflight import ParallelSet
from moses_integration.tables.columns import parse_column_names
from rescorer.io.score_format import score_column
from rescorer.records import (ANY_PATH, EXISTING_FILE, FLAG, INT, POSITIVE_INT, TEXT, TEXTS, Kind, SettingError,
                              check_record, choice, like, setting)
from rescorer.runtime.settings import RuntimeSettings

__all__ = ["DataSets", "DecodingSettings", "TuningSettings", "RerankSettings", "AblationSettings", "AddFeatureSettings",
           "EvaluationSettings", "NbestFeatureSettings", "PreflightSettings", "ScorePlotSettings", "NBEST_MODES", "NUMPY_OPTIMIZERS", "OPTIMIZER_NAMES", "OPTIMIZER_PROGRAMS",
           "INITIAL_WEIGHT_HELP", "parallel_set"]

# Moses' optimizers of log-linear weights, by the name users know, and the program that runs
# each (mert-moses.pl --batch-mira runs kbmira, which `moses rerank` runs itself).
OPTIMIZER_PROGRAMS = {"mert": "mert", "batch-mira": "kbmira"}
OPTIMIZER_NAMES = tuple(OPTIMIZER_PROGRAMS)
# A reranking may also be tuned by PRO, which this package runs in numpy only (nbest/pro_search.py).
RERANK_OPTIMIZER_PROGRAMS = {**OPTIMIZER_PROGRAMS, "pro": "pro"}
NUMPY_OPTIMIZERS = ("mert", "pro")  # what `--tuner numpy` runs
PAIR_OF_PATHS = Kind("path", nargs=2)
MORE_PATHS = Kind("path", multiple=True)
MORE_MODELS = Kind("path", exists=True, dir_okay=False, multiple=True)
NUMBER = Kind("float")  # finite
INITIAL_WEIGHT_HELP = ("Starting weight of every new column. Default: scaled to the table, so that each new "
                       "column starts with the weight of an average phrase-table column (see docs/moses.md, "
                       "Starting weights).")
ABLATION_INITIAL_WEIGHT_HELP = (INITIAL_WEIGHT_HELP + " With --nplm, also the NeuralLM's starting weight "
                                "(default: that of the system's n-gram language model, LM0).")
TUNING_OPTIMIZER_HELP = "Moses' optimizer of the weights: MERT, or batch MIRA (mert-moses.pl --batch-mira)."
TUNERS = ("auto", "moses", "numpy")
TUNER_HELP = ("Who extracts and tunes: Moses' extractor and mert/kbmira, or this package's MERT or PRO in numpy "
              "(no Moses install needed when --dev-nbest and --test-nbest are given); auto: Moses' "
              "programs when they are found, else numpy; PRO always numpy.")
RERANKING_OPTIMIZER_HELP = ("The optimizer of the reranking weights: mert, batch MIRA (Moses' kbmira), or PRO "
                            "(Hopkins and May's tuning as ranking, in numpy).")
# How rescore-nbest scores a hypothesis: as a whole sentence (a sentence model), as the sum over
# its segmentation's phrase pairs (a phrase model), or as the model's kind says (auto).
NBEST_MODES = ("auto", "sentence", "phrase")
NBEST_SIZE_HELP = "Hypotheses per sentence in each n-best list the decoder writes (Moses' -n-best-list FILE N distinct)."


def parallel_set(label: str, pair: Optional[tuple], extra_refs: tuple = ()) -> Optional[ParallelSet]:
    """The ParallelSet of `--LABEL SRC REF` and its `--LABEL-ref` files (None without --LABEL),
    made absolute: paths on the command line are relative to the cwd, those inside moses.ini to
    --base-dir, where the decoder runs."""
    if not pair:
        return None
    return ParallelSet(label, Path(pair[0]).resolve(), Path(pair[1]).resolve(),
                       tuple(Path(path).resolve() for path in extra_refs))


def _pair(name: str, use: str):
    return setting(None, PAIR_OF_PATHS, f"The {name} set, which {use}: tokenized source and reference, one "
                   f"sentence per line (gzip allowed).", option=f"--{name}", metavar="SRC REF", show_default=False)


def _more_refs(name: str):
    """A second human translation cuts the noise of a BLEU difference."""
    return setting((), MORE_PATHS, f"Another reference of the {name} set, line-aligned with REF; repeat for more.",
                   option=f"--{name}-ref", metavar="REF", show_default=False)


@dataclass(frozen=True)
class DataSets:
    """`--dev SRC REF` and `--test SRC REF`, each with further references (--dev-ref, --test-ref);
    optional here (preflight), required by the records that take them."""

    dev: Optional[tuple] = _pair("dev", "tunes the weights")
    dev_refs: tuple = _more_refs("dev")
    test: Optional[tuple] = _pair("test", "measures the systems")
    test_refs: tuple = _more_refs("test")


@dataclass(frozen=True)
class DecodingSettings:
    """How the decoder runs and the test is scored, shared by the commands that decode."""

    decoder_flags: tuple = setting(
        (), Kind("text", parse=parse_decoder_flags),
        'Decoder settings for tuning and test decoding, e.g. "-search-algorithm 1 -cube-pruning-pop-limit 400 '
        '-s 400".', option="--decoder-flags", metavar='"FLAGS"', show_default=False)
    detokenize_lang: Optional[str] = setting(
        None, TEXT, "Detokenize (sacremoses) and score with 13a; default: tokenized BLEU.", option="--detokenize",
        metavar="LANG", show_default=False)
    test_type: str = setting("ar", choice("ar", "bs"), "Paired approximate randomization or bootstrap.",
                             option="--test-type")
    base_dir: Path = setting(Path("."), ANY_PATH,
                             "Directory relative moses.ini paths are resolved against (where the decoder runs).",
                             option="--base-dir")
    moses_dir: Optional[Path] = setting(
        None, ANY_PATH, "Moses root (holding bin/ and scripts/); default $MOSES_HOME, then PATH.",
        option="--moses-dir", show_default=False)
    threads: int = setting(4, POSITIVE_INT, "Threads of the decoder and of the optimizer's random restarts.",
                           option="--threads")


@dataclass(frozen=True)
class PreflightSettings:
    """`moses preflight`: what a long run would fail on, checked in seconds."""

    ini_path: Optional[Path] = setting(None, ANY_PATH)  # the MOSES_INI argument
    dev: Optional[tuple] = like(DataSets, "dev")
    dev_refs: tuple = like(DataSets, "dev_refs")
    test: Optional[tuple] = like(DataSets, "test")
    test_refs: tuple = like(DataSets, "test_refs")
    check_install: bool = setting(True, FLAG, "Also check the Moses installation.",
                                  option="--check-install/--no-check-install")
    base_dir: Path = like(DecodingSettings, "base_dir")
    moses_dir: Optional[Path] = like(DecodingSettings, "moses_dir")

    def __post_init__(self) -> None:
        check_record(self)


@dataclass(frozen=True)
class TuningSettings:
    """`moses tune`: tune a moses.ini's weights on the dev set with mert-moses.pl."""

    ini_path: Optional[Path] = setting(None, ANY_PATH)  # the MOSES_INI argument
    dev: Optional[tuple] = like(DataSets, "dev", required=True)
    dev_refs: tuple = like(DataSets, "dev_refs")
    work_dir: Optional[Path] = setting(None, ANY_PATH, "mert-moses.pl working directory.", option="--work-dir",
                                       required=True, show_default=False)
    nbest_size: int = setting(100, POSITIVE_INT, NBEST_SIZE_HELP, option="--nbest-size")
    seed: Optional[int] = setting(None, INT, "Optimizer seed (mert/kbmira -r).", option="--seed", show_default=False)
    optimizer: str = setting("mert", choice(*OPTIMIZER_NAMES), TUNING_OPTIMIZER_HELP, option="--optimizer")
    resume: bool = setting(True, FLAG, "Continue an interrupted run in --work-dir; --no-resume starts it over.",
                           option="--resume/--no-resume")
    max_iterations: Optional[int] = setting(None, POSITIVE_INT, "MERT iterations at most (mert-moses.pl's default: 25).",
                                            option="--max-iterations", show_default=False)
    decoder_flags: tuple = like(DecodingSettings, "decoder_flags")
    base_dir: Path = like(DecodingSettings, "base_dir")
    moses_dir: Optional[Path] = like(DecodingSettings, "moses_dir")
    threads: int = like(DecodingSettings, "threads")

    def __post_init__(self) -> None:
        check_record(self)

    @property
    def dev_set(self) -> ParallelSet:
        return parallel_set("dev", self.dev, self.dev_refs)


class _SetsOfRecord:
    """The dev and test sets (ParallelSet, absolute) of a record that takes --dev and --test."""

    @property
    def dev_set(self) -> ParallelSet:
        return parallel_set("dev", self.dev, self.dev_refs)

    @property
    def test_set(self) -> ParallelSet:
        return parallel_set("test", self.test, self.test_refs)


@dataclass(frozen=True)
class RerankSettings(_SetsOfRecord):
    """`moses rerank`: rerank a tuned system's n-best lists with sentence models' scores."""

    ini_path: Optional[Path] = setting(
        None, EXISTING_FILE, "The tuned system's moses.ini: it decodes the n-best lists (unless given) and its "
        "weights start the reranker's.", option="--ini", required=True, show_default=False)
    models: tuple = setting(
        (), MORE_MODELS, "A sentence model (rescore train --parallel); repeat. A forward model adds RNNfwd= "
        "log p(e|f), an inverse one (--direction inverse) RNNinv= log p(f|e). --model, --lm or both.",
        option="--model", show_default=False)
    lms: tuple = setting(
        (), MORE_MODELS, "A target language model (the CSLM: rescore train --lm); repeat. Adds CSLM= log p of "
        "the hypothesis, sentence begin and end included (CSLM2= for a second).", option="--lm",
        show_default=False)
    dev: Optional[tuple] = like(DataSets, "dev", required=True)
    dev_refs: tuple = like(DataSets, "dev_refs")
    test: Optional[tuple] = like(DataSets, "test", required=True)
    test_refs: tuple = like(DataSets, "test_refs")
    dev_nbest: Optional[Path] = setting(
        None, EXISTING_FILE, "The system's dev n-best list, if already decoded (else it is decoded here).",
        option="--dev-nbest", show_default=False)
    test_nbest: Optional[Path] = setting(None, EXISTING_FILE, "The same for the test set.", option="--test-nbest",
                                         show_default=False)
    nbest_size: int = setting(100, POSITIVE_INT, "Hypotheses per sentence when decoding here (Moses' -n-best-list "
                              "FILE N distinct).", option="--nbest-size")
    filter_tables: bool = setting(
        True, FLAG, "Decode with the ini's text tables filtered for each set (filter-model-given-input.pl).",
        option="--filter/--no-filter")
    per_word: bool = setting(True, FLAG, "Also add each model's log p per word of the side it predicts "
                             "(NAMEPerWord=).", option="--per-word/--no-per-word")
    optimizer: str = setting("mert", choice(*RERANK_OPTIMIZER_PROGRAMS), RERANKING_OPTIMIZER_HELP,
                             option="--optimizer")
    tuner: str = setting("auto", choice(*TUNERS), TUNER_HELP, option="--tuner")
    seeds: int = setting(3, POSITIVE_INT, "Optimizer runs, with seeds --seed .. --seed + N - 1.", option="--seeds")
    seed: int = setting(1, INT, "First optimizer seed.", option="--seed")
    initial_weight: Optional[float] = setting(
        None, NUMBER, "Starting weight of each new feature [default: 0, so that the search starts from the "
        "decoder's ranking].", option="--initial-weight", metavar="NUMBER", show_default=False)
    out_dir: Optional[Path] = setting(None, ANY_PATH, "Working directory; a rerun resumes there.", option="--out-dir",
                                      required=True, show_default=False)
    decoder_flags: tuple = like(DecodingSettings, "decoder_flags")
    detokenize_lang: Optional[str] = like(DecodingSettings, "detokenize_lang")
    test_type: str = like(DecodingSettings, "test_type")
    device: str = like(RuntimeSettings, "device")
    precision: str = like(RuntimeSettings, "precision")
    base_dir: Path = like(DecodingSettings, "base_dir")
    moses_dir: Optional[Path] = like(DecodingSettings, "moses_dir")
    threads: int = like(DecodingSettings, "threads")
    num_samples: int = setting(0, INT)  # AR trials / bootstrap resamples; 0: sacrebleu's 10,000 / 1,000 (tests: fewer)

    def __post_init__(self) -> None:
        check_record(self)
        if self.tuner == "numpy" and self.optimizer not in NUMPY_OPTIMIZERS:
            raise SettingError("--tuner numpy runs MERT or PRO; use --optimizer mert or pro, or --tuner moses")
        if self.optimizer == "pro" and self.tuner == "moses":
            raise SettingError("--optimizer pro runs in numpy (Moses' PRO needs megam): use --tuner numpy or auto")

    @property
    def decodes(self) -> bool:
        """Whether an n-best list is decoded here (one was not given)."""
        return self.dev_nbest is None or self.test_nbest is None

    @property
    def optimizer_program(self) -> str:
        """mert, kbmira or pro, which the reranking runs itself (pro in numpy)."""
        return RERANK_OPTIMIZER_PROGRAMS[self.optimizer]

    @property
    def seed_range(self) -> tuple:
        """--seeds runs, with seeds --seed .. --seed + N - 1."""
        return tuple(range(self.seed, self.seed + self.seeds))

    @property
    def start_weight(self) -> float:
        """A new feature's starting weight: 0 unless given, so that the search starts from the
        decoder's own ranking."""
        return 0.0 if self.initial_weight is None else self.initial_weight


@dataclass(frozen=True)
class AblationSettings(_SetsOfRecord):
    """`moses ablation`: systems x replicates, tuned, evaluated, optionally reranked."""

    ini_path: Optional[Path] = setting(None, ANY_PATH)  # the MOSES_INI argument
    rescored_table: Optional[Path] = setting(
        None, ANY_PATH, "Table with the model (and word-penalty) columns, from `rescore score --unk-penalty`.",
        option="--rescored-table", show_default=False)
    models: tuple = setting(
        (), MORE_MODELS, "Instead of --rescored-table: score the ini's (text) table with this model; repeat for "
        "several (one column each; systems are named after the files).", option="--model", show_default=False)
    new_columns: Optional[tuple] = setting(
        None, Kind("text", parse=parse_column_names),
        "Names of the table's new columns in order, e.g. rnn-a,rnn-b,wp ('wp': the word penalty, last). "
        "Default: rnn, or rnn,wp for two new columns.", option="--new-columns", metavar="NAMES", show_default=False)
    dev: Optional[tuple] = like(DataSets, "dev", required=True)
    dev_refs: tuple = like(DataSets, "dev_refs")
    test: Optional[tuple] = like(DataSets, "test", required=True)
    test_refs: tuple = like(DataSets, "test_refs")
    out_dir: Optional[Path] = setting(
        None, ANY_PATH, "The study's working directory (tables, tuning, decoding, results.md); a rerun resumes "
        "there.", option="--out-dir", required=True, show_default=False)
    replicates: int = setting(3, POSITIVE_INT, "Tuning runs of each system, with seeds --seed + r: MERT's variance "
                              "enters the test.", option="--replicates")
    systems: tuple = setting(
        (), TEXTS, "Only these systems, e.g. +RNN (Baseline is always built), or +a+b: the table's columns a "
        "and b together, or with --nplm a decoding row such as +CSLM(dec)+RNN (+RNN is built too). Default: all "
        "the fixed systems.", option="--system", metavar="NAME", show_default=False)
    feature: Optional[str] = setting(None, TEXT, "Phrase-table feature name if there are several.",
                                     option="--feature", show_default=False)
    nbest_size: int = like(TuningSettings, "nbest_size")
    seed: int = setting(1, INT, "Replicate r uses seed + r (same seeds in every system).", option="--seed")
    optimizer: str = like(TuningSettings, "optimizer")
    max_iterations: Optional[int] = like(TuningSettings, "max_iterations")
    initial_weight: Optional[float] = setting(None, NUMBER, ABLATION_INITIAL_WEIGHT_HELP,
                                              option="--initial-weight", metavar="NUMBER", show_default=False)
    warm_start: bool = setting(True, FLAG, "Start each system from the same replicate's tuned Baseline weights "
                               "(a decoding row: from those of the system it extends).",
                               option="--warm-start/--no-warm-start")
    decoder_flags: tuple = like(DecodingSettings, "decoder_flags")
    filter_test: bool = setting(True, FLAG, "Filter the test set's text tables once for every system.",
                                option="--filter-test/--no-filter-test")
    detokenize_lang: Optional[str] = like(DecodingSettings, "detokenize_lang")
    test_type: str = like(DecodingSettings, "test_type")
    plot: bool = setting(True, FLAG, "Write mert-curves.png and fig3-rnn-vs-direct.png (paper Fig. 3).",
                         option="--plot/--no-plot")
    rerank_models: tuple = setting(
        (), MORE_MODELS, "A sentence model (rescore train --parallel); repeat. Adds the rows +rerank and "
        "+RNN+rerank: those systems' n-best lists reranked with the models (see moses rerank).",
        option="--rerank-model", show_default=False)
    lms: tuple = setting(
        (), MORE_MODELS, "A target language model (the CSLM: rescore train --lm); repeat. Adds Cho et al.'s rows "
        "+CSLM, +CSLM+RNN and +CSLM+RNN+WP: Baseline's, +RNN's and +RNN+WP's n-best lists reranked with its "
        "CSLM= feature (those of Baseline and the --system ones with --system).", option="--lm",
        show_default=False)
    nplm_path: Optional[Path] = setting(
        None, EXISTING_FILE, "The CSLM in NPLM's format (rescore export-nplm). Adds Cho et al.'s rows with it in the "
        "decoder's search, +CSLM(dec), +CSLM(dec)+RNN and +CSLM(dec)+RNN+WP: Baseline, +RNN and +RNN+WP (or "
        "Baseline and the --system ones) with Moses' NeuralLM feature, each tuned and tested like a system, "
        "from that system's tuned weights. Needs a Moses built --with-nplm; decodes several times slower.",
        option="--nplm", show_default=False)
    rerank_systems: tuple = setting(
        (), TEXTS, "A system whose n-best lists --rerank-model reranks; repeat. Default: Baseline and +RNN, or "
        "Baseline and the --system ones.", option="--rerank-system", metavar="NAME", show_default=False)
    rerank_optimizer: str = like(RerankSettings, "optimizer", option="--rerank-optimizer")
    rerank_per_word: bool = setting(
        True, FLAG, "The reranked rows also add each model's log p per word (NAMEPerWord=), as moses rerank does "
        "by default.", option="--rerank-per-word/--no-rerank-per-word")
    device: str = like(RuntimeSettings, "device")
    precision: str = like(RuntimeSettings, "precision")
    base_dir: Path = like(DecodingSettings, "base_dir")
    moses_dir: Optional[Path] = like(DecodingSettings, "moses_dir")
    threads: int = like(DecodingSettings, "threads")
    num_samples: int = like(RerankSettings, "num_samples")

    def __post_init__(self) -> None:
        check_record(self)
        if (self.rescored_table is None) == (not self.models):
            raise SettingError("give exactly one of --rescored-table and --model")
        if self.rerank_systems and not self.rerank_models:
            raise SettingError("--rerank-system needs --rerank-model")


@dataclass(frozen=True)
class AddFeatureSettings:
    """`moses add-feature`: the rescored table's new columns, or a NeuralLM feature, put into a
    moses.ini (-o and --force are the command's: where it writes)."""

    ini_path: Optional[Path] = setting(None, EXISTING_FILE)  # the MOSES_INI argument
    table_path: Optional[Path] = setting(None, EXISTING_FILE, "The rescored phrase table (text, from `rescore "
                                         "score`).", option="--table", show_default=False)
    nplm_path: Optional[Path] = setting(
        None, EXISTING_FILE, "Instead of --table: an NPLM language model (`rescore export-nplm`), added as Moses' "
        "NeuralLM feature (a Moses built --with-nplm loads it) with weight 0.1 unless --initial-weight.",
        option="--nplm", show_default=False)
    feature: Optional[str] = setting(
        None, TEXT, "With --table: the phrase table's feature name if there are several; with --nplm: the new "
        "feature's name [default: NeuralLM0].", option="--feature", show_default=False)
    initial_weight: Optional[float] = like(AblationSettings, "initial_weight", help=INITIAL_WEIGHT_HELP)
    new_columns: Optional[tuple] = like(AblationSettings, "new_columns")
    base_dir: Path = like(DecodingSettings, "base_dir")
    moses_dir: Optional[Path] = like(DecodingSettings, "moses_dir")
    threads: int = like(DecodingSettings, "threads")

    def __post_init__(self) -> None:
        check_record(self)
        if (self.table_path is None) == (self.nplm_path is None):
            raise SettingError("give either --table (a rescored phrase table) or --nplm (an NPLM model), "
                               "not both and not neither")
        if self.nplm_path is not None and self.new_columns is not None:
            raise SettingError("--new-columns names a rescored table's columns; it does not go with --nplm")


@dataclass(frozen=True)
class EvaluationSettings:
    """`moses evaluate`: decode the test set with tuned systems, score and test them."""

    systems: tuple = setting((), TEXTS, "A tuned system; repeat; the first is the baseline.", option="--system",
                             metavar="NAME=MOSES_INI", required=True, show_default=False)
    test: Optional[tuple] = like(DataSets, "test", required=True)
    test_refs: tuple = like(DataSets, "test_refs")
    out_dir: Optional[Path] = setting(
        None, ANY_PATH, "Where each system's translation of the test set (NAME.hyp) and its decoder log go.",
        option="--out-dir", required=True, show_default=False)
    detokenize_lang: Optional[str] = like(DecodingSettings, "detokenize_lang")
    test_type: str = like(DecodingSettings, "test_type")
    decoder_flags: tuple = like(DecodingSettings, "decoder_flags")
    base_dir: Path = like(DecodingSettings, "base_dir")
    moses_dir: Optional[Path] = like(DecodingSettings, "moses_dir")
    threads: int = like(DecodingSettings, "threads")

    def __post_init__(self) -> None:
        check_record(self)


@dataclass(frozen=True)
class NbestFeatureSettings:
    """`moses rescore-nbest`: the models' log p added as features to every line of an n-best list
    (-o and --force are the command's: where it writes)."""

    input_path: Optional[Path] = setting(
        None, EXISTING_FILE, "The decoder's input (tokenized, one sentence per line, gzip allowed); line i is "
        "sentence id i.", option="--input", required=True, show_default=False)
    model: Optional[Path] = setting(
        None, EXISTING_FILE, "The model whose log p becomes the feature: a sentence model (rescore train "
        "--parallel), or a phrase-table model with --mode phrase.", option="--model", show_default=False)
    lms: tuple = like(RerankSettings, "lms")
    feature_name: str = setting("RNN0", TEXT, "The --model feature's name in the list (NAME= value), as Moses' "
                                "extractor and mert read it.", option="--feature-name")
    mode: str = setting("auto", choice(*NBEST_MODES), "phrase: sum over the segmentation's phrase pairs.",
                        option="--mode")
    per_word: bool = setting(False, FLAG, "With --lm: also add each feature's log p per word of the side its model "
                             "predicts (NAMEPerWord=).", option="--per-word/--no-per-word")
    device: str = like(RuntimeSettings, "device")
    precision: str = like(RuntimeSettings, "precision")

    def __post_init__(self) -> None:
        check_record(self)
        if self.model is None and not self.lms:
            raise SettingError("give the model whose log p becomes a feature: --model, --lm or both")
        problem = dense_name_problem(self.feature_name)
        if problem:
            raise SettingError(f"--feature-name: {problem}")
        if self.lms and self.mode == "phrase":
            raise SettingError("--lm scores whole hypotheses: --mode phrase applies to --model alone")
        if self.per_word and not self.lms:
            raise SettingError("--per-word applies with --lm (a sentence model's per-word form: moses rerank)")


@dataclass(frozen=True)
class ScorePlotSettings:
    """`moses plot-scores`: which column is the RNN's, and which pairs are drawn (-o and --force
    are the command's: where it writes)."""

    rnn_column: int = setting(5, Kind("text", parse=score_column), "Score column of the RNN score, counted from 1 "
                              "(-1: the last).", option="--rnn-column", metavar="COLUMN")
    sample_size: int = setting(10000, POSITIVE_INT, "Phrase pairs drawn from the table for the scatter and rho.",
                               option="--sample-size")
    seed: int = setting(1, INT, "Which pairs are sampled.", option="--seed")

    def __post_init__(self) -> None:
        check_record(self)
