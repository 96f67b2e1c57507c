"""Getting a model ready: shortlists (or a sentence model's subword models), the encoded pair
cache, a fresh model, and training it."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Union

import torch

from rescorer.data.corpus_subwords import learn_corpus_subwords
from rescorer.data.directions import oriented
from rescorer.data.pair_sources import ParallelCorpusPairs, PairSource, pair_source
from rescorer.data.pair_cache import PairCache, build_pair_cache, open_matching_cache
from rescorer.data.subwords import SubwordSides
from rescorer.data.vocabulary import Coverage, Vocabulary, count_corpus_words, coverage
from rescorer.errors import CorpusError, RescorerError
from rescorer.io.file_names import checkpoint_path_for
from rescorer.io.table_reader import SKIP_BAD_LINES, RejectSink
from rescorer.models import ModelSettings, PhraseScorer, build_model, model_width
from rescorer.models.model_files import ModelBundle, bundle_from_payload, save_model
from rescorer.runtime.distributed import SINGLE, Ranks
from rescorer.runtime.progress import Progress, no_progress
from rescorer.training.honest_heldout import find_honest_heldout
from rescorer.training.recipes import SUBWORD_SIZE
from rescorer.training.resume import check_resume, checkpoint_to_resume, recorded_training
from rescorer.training.settings import LOWEST_PAIR_COUNT, NO_SUBWORDS
from rescorer.training.trainer import Trainer, TrainSettings, TrainState, unigram_perplexity


@dataclass
class VocabularyReport:
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    src_coverage: Optional[Coverage]  # None with subwords: every piece is in the vocabulary
    tgt_coverage: Optional[Coverage]
    counted_from: str
    subwords: Optional[SubwordSides] = None  # the vocabularies are their pieces


class _RejectsOnce:
    """Hands the reject sink to the first pass that reads the table, SKIP_BAD_LINES to the next."""

    def __init__(self, reject: Optional[RejectSink]):
        self.reject = reject

    def next_pass(self) -> Optional[RejectSink]:
        reject = self.reject
        if reject is not None:
            self.reject = SKIP_BAD_LINES
        return reject


def build_vocabularies(table_path: Union[Path, PairSource], shortlist_size: int, src_corpus: Optional[Path] = None,
                       tgt_corpus: Optional[Path] = None,
                       progress: Progress = no_progress,
                       reject: Optional[RejectSink] = None, direction: str = "forward") -> VocabularyReport:
    """Shortlists from the corpora when given (what the paper did), else from the table's pairs;
    the model's source side first (the table's target for an inverse model). `table_path` may
    also be a parallel corpus (rescorer.data.pair_sources)."""
    source = pair_source(table_path)
    src_corpus, tgt_corpus = oriented(src_corpus, tgt_corpus, direction)
    if src_corpus is not None and tgt_corpus is not None:
        src_counts, tgt_counts = count_corpus_words(src_corpus), count_corpus_words(tgt_corpus)
        counted_from = f"corpora {src_corpus.name}, {tgt_corpus.name}"
    elif src_corpus is not None or tgt_corpus is not None:
        raise RescorerError("--src-corpus and --tgt-corpus go together: give both or neither")
    else:
        src_counts, tgt_counts = Counter(), Counter()
        for src, tgt in source.pairs(progress, reject, direction):
            src_counts.update(src.split())
            tgt_counts.update(tgt.split())
        counted_from = source.describe()
    src_vocab = Vocabulary.from_counts(src_counts, shortlist_size)
    tgt_vocab = Vocabulary.from_counts(tgt_counts, shortlist_size)
    return VocabularyReport(src_vocab, tgt_vocab, coverage(src_vocab, src_counts),
                            coverage(tgt_vocab, tgt_counts), counted_from)


def table_identity(table_path: Union[Path, PairSource]) -> dict:
    """What makes a pair cache stale: the table's (or corpus files') name, size and modification time."""
    return pair_source(table_path).identity()


@dataclass(frozen=True)
class PairEncoding:
    """How a source's pairs become a pair cache: the vocabularies they are read through (with
    `subwords`, the pieces of a subword model's), the direction, the bound on a side's words
    (longer pairs are left out and counted), and whether each pair's c(pair) is kept for
    weighted training, refusing counts not above `lowest_count` ((bound, why):
    LOWEST_PAIR_COUNT). A cache encoded otherwise is rebuilt (cache_meta)."""

    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    max_pair_length: Optional[int] = None
    direction: str = "forward"
    with_counts: bool = False
    lowest_count: tuple = (0.0, "")
    subwords: Optional[SubwordSides] = None


def encode_table(table_path: Union[Path, PairSource], encoding: PairEncoding, cache_dir: Path,
                 progress: Progress = no_progress, reject: Optional[RejectSink] = None) -> PairCache:
    """The table's pairs as an on-disk cache, reusing `cache_dir` when it still matches."""
    meta = cache_meta(table_path, encoding)
    cache = open_matching_cache(cache_dir, meta)
    if cache is None:
        pairs = pair_source(table_path).pairs(progress, reject, encoding.direction, encoding.with_counts,
                                              encoding.lowest_count)
        cache = build_pair_cache(pairs, encoding.src_vocab, encoding.tgt_vocab, cache_dir, meta,
                                 encoding.max_pair_length, encoding.with_counts, encoding.subwords)
    check_enough_pairs(cache, table_path, encoding.max_pair_length)
    return cache


def encode_valid_set(src_path: Path, tgt_path: Path, encoding: PairEncoding, directory: Path) -> PairCache:
    """A validation set of whole sentences (--valid-src/--valid-tgt) as a pair cache, every pair
    of it kept (an `encoding` with no length bound and no counts), reused while it matches; with
    subwords (a subword model's), encoded as their pieces, as the training pairs are, so that its
    perplexity is over pieces.
    Bad input (an empty line, sides of different lengths, an empty file, with subwords a line
    that is not UTF-8) is one line naming the file and line."""
    source = ParallelCorpusPairs(Path(src_path), Path(tgt_path), utf8_only=encoding.subwords is not None)
    meta = cache_meta(source, encoding)
    cache = open_matching_cache(directory, meta)
    if cache is None:
        try:
            cache = build_pair_cache(source.pairs(no_progress, None, encoding.direction), encoding.src_vocab,
                                     encoding.tgt_vocab, directory, meta, subwords=encoding.subwords)
        except CorpusError as error:
            raise CorpusError(f"{error} (the validation set, --valid-src/--valid-tgt)") from None
    return cache


def check_enough_pairs(cache: PairCache, table_path: Union[Path, PairSource], max_pair_length: Optional[int]) -> None:
    """Training needs two pairs: one held out to validate, one to train on. Fewer is refused in
    one line saying where the others went, and the useless cache is removed."""
    if cache.num_pairs >= 2:
        return
    left_out = (f"; {cache.too_long} longer than --max-pair-length {max_pair_length} words on a side were "
                f"left out" if cache.too_long else "")
    if cache.num_pairs == 0 and cache.too_long:
        left_out = (f": all {cache.too_long} pairs have a side longer than --max-pair-length "
                    f"{max_pair_length} words (0: no bound)")
    shutil.rmtree(cache.directory, ignore_errors=True)
    if cache.num_pairs == 0:
        raise RescorerError(f"{table_path}: no pairs to train on{left_out}")
    raise RescorerError(f"{table_path}: 1 pair to train on{left_out}: training holds one pair out for "
                        f"validation and needs another to train on")


def cache_meta(table_path: Union[Path, PairSource], encoding: PairEncoding) -> dict:
    """What a pair cache was built from: a cache that differs in any of it is rebuilt."""
    meta = {**table_identity(table_path), "vocab_hash": hash_vocabularies(encoding.src_vocab, encoding.tgt_vocab)}
    subwords = encoding.subwords
    if subwords is not None:  # the pieces are the vocabularies, but a unigram model's scores segment too
        meta["subwords_hash"] = hashlib.sha256(subwords.source.proto + b"\0" + subwords.target.proto).hexdigest()[:16]
    if encoding.max_pair_length is not None:  # a cache built without the bound still matches without it
        meta["max_pair_length"] = encoding.max_pair_length
    if encoding.direction != "forward":  # and a forward cache built before directions matches
        meta["direction"] = encoding.direction
    if encoding.with_counts:
        meta["pair_counts"] = True
    if encoding.lowest_count[0] > 0:  # its counts were checked against the bound (log-count's 1/e)
        meta["lowest_pair_count"] = encoding.lowest_count[0]
    return meta


def hash_vocabularies(src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> str:
    digest = hashlib.sha256()
    for token in src_vocab.tokens + ["\n\n"] + tgt_vocab.tokens:
        digest.update(token.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()[:16]


def new_model(settings: ModelSettings, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> PhraseScorer:
    """A freshly initialised model of `settings` for these shortlists."""
    return build_model(settings.config(len(src_vocab), len(tgt_vocab)))


@dataclass
class TrainReport:
    bundle: ModelBundle
    vocabularies: Optional[VocabularyReport]  # None when resumed (the checkpoint's are reused)
    state: TrainState
    num_pairs: int
    valid_pairs: int
    unigram_ppl: float
    too_long: int = 0  # pairs left out of training by the length bound
    valid_set: str = ""  # the validation set's files, when it is not a slice of the training pairs
    honest_pairs: Optional[int] = None  # a table's held-out pairs that no training pair contains
    honest_unigram_ppl: Optional[float] = None  # the unigram model's perplexity on them (None: none)


@dataclass
class TrainingRun:
    """What one training run works with besides its settings: where it runs, what it reports to,
    where bad lines go, and what it starts from under --resume."""

    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    precision: str = "fp32"
    progress: Progress = no_progress  # told how many lines each pass over the table has read
    on_pass: Callable[[str], None] = lambda what: None  # told which pass the lines count
    on_update: Optional[Callable] = None  # (TrainState, valid perplexity or None) after each update
    reject: Optional[RejectSink] = None
    model_options: Optional[dict] = None  # the raw model options, recorded in the model file
    checkpoint_payload: Optional[dict] = None  # the checkpoint, when the caller has read it already
    ranks: Ranks = field(default_factory=lambda: SINGLE)
    resume_hint: str = ""  # how to continue the run, for the line an interrupt ends with (`rescore train ...`)


def train_on_table(table_path: Union[Path, PairSource], model_path: Path, *, preset: str = "small",
                   model: Optional[ModelSettings] = None, settings: Optional[TrainSettings] = None,
                   run: Optional[TrainingRun] = None) -> TrainReport:
    """Train a model on the table's unique pairs (or a parallel corpus's sentence pairs, given as a
    rescorer.data.pair_sources.ParallelCorpusPairs) and save the best one at `model_path`: a
    model of log p(target | source), or of log p(source | target) with `settings.direction` inverse.

    `model` gives the architecture, preset and settings (default: cho2014 at `preset`). A
    checkpoint with optimizer state is kept beside the model (`<model>.checkpoint`) for
    `settings.resume`, which refuses settings that contradict the checkpoint's
    (`rescorer.training.resume`). `run.on_pass` is told which pass over the table (or corpora) the
    `run.progress` lines count. A bad table line stops the run before training (reject None) or
    goes to `run.reject`. An interrupt (KeyboardInterrupt) leaves with `.note` saying what was
    kept. With several `run.ranks` (torchrun), rank 0 reads the table and builds the pair cache
    while the others wait, then all train together (`rescorer.training.distributed_trainer`);
    rank 0 alone writes the checkpoint and the model.
    """
    settings = settings or TrainSettings()
    run = run or TrainingRun()
    model = model or ModelSettings.make(preset=preset)
    ranks, direction = run.ranks, settings.direction
    table_path = _read_as_units(table_path, settings.subwords)
    checkpoint = checkpoint_path_for(model_path)
    cache_dir = settings.cache_dir or model_path.with_name(model_path.name + ".cache")
    rejects = _RejectsOnce(run.reject)
    vocabularies = None
    trainer = None
    try:
        if settings.resume:
            payload = checkpoint_to_resume(checkpoint, run.checkpoint_payload)  # read once
            bundle = bundle_from_payload(payload, checkpoint)
            if bundle.direction != direction:
                raise RescorerError(f"{checkpoint}: --resume asks for direction {direction}, the checkpoint "
                                    f"was trained {bundle.direction}: drop --direction, or start over "
                                    f"without --resume (with --force)")
            asked = model.config(len(bundle.src_vocab), len(bundle.tgt_vocab))
            check_resume(checkpoint, payload, bundle.config.to_dict(), asked.to_dict(), settings,
                         table_identity(table_path), model_width(asked))
            bundle.training["model_options"] = (run.model_options if run.model_options is not None
                                                else recorded_training(bundle.training)[1])
            bundle.model.train()
        else:
            model.check()  # before the table is read
            torch.manual_seed(settings.seed)
            if settings.subwords != NO_SUBWORDS:
                vocabularies = _learned_subwords(table_path, settings, run, rejects)
            else:
                size = settings.shortlist_size or model.shortlist_size
                settings = dataclasses.replace(settings, shortlist_size=size)  # the checkpoint records it
                src_corpus, tgt_corpus = settings.src_corpus, settings.tgt_corpus
                run.on_pass("counting words")
                vocabularies = ranks.on_main(
                    lambda: build_vocabularies(table_path, size, src_corpus, tgt_corpus, run.progress,
                                               rejects.next_pass() if src_corpus is None else None,
                                               direction),
                    "reading the table's words")
            bundle = ModelBundle(new_model(model, vocabularies.src_vocab, vocabularies.tgt_vocab),
                                 vocabularies.src_vocab, vocabularies.tgt_vocab, direction=direction,
                                 subwords=vocabularies.subwords)
            bundle.training = {"model_options": run.model_options or {}}
        encoding = PairEncoding(bundle.src_vocab, bundle.tgt_vocab, settings.max_pair_length, direction,
                                with_counts=settings.pair_weights != "unique",
                                lowest_count=LOWEST_PAIR_COUNT.get(settings.pair_weights, (0.0, "")),
                                subwords=bundle.subwords)

        def build_cache() -> None:  # on rank 0; the others open it once it is built
            run.on_pass("encoding pairs")
            encode_table(table_path, encoding, cache_dir, run.progress, rejects.next_pass())

        ranks.on_main(build_cache, "encoding the pairs")
        cache = open_built_cache(table_path, encoding, cache_dir)
        valid_cache = None
        if settings.valid_src is not None:  # inside the pair cache, built after it (a rebuild replaces both)
            valid_encoding = PairEncoding(bundle.src_vocab, bundle.tgt_vocab, direction=direction,
                                          subwords=bundle.subwords)

            def build_valid() -> PairCache:
                run.on_pass("encoding the validation set")
                return encode_valid_set(settings.valid_src, settings.valid_tgt, valid_encoding, cache_dir / "valid")

            ranks.on_main(build_valid, "encoding the validation set")
            valid_cache = open_built_cache(ParallelCorpusPairs(settings.valid_src, settings.valid_tgt),
                                           valid_encoding, cache_dir / "valid")
        if ranks.is_distributed:
            from rescorer.training.distributed_trainer import DistributedTrainer

            trainer = DistributedTrainer(bundle, cache, settings, run.device, run.precision, checkpoint,
                                         run.on_update, valid_cache=valid_cache, ranks=ranks)
        else:
            trainer = Trainer(bundle, cache, settings, run.device, run.precision, checkpoint, run.on_update,
                              valid_cache)
        if settings.resume:
            trainer.resume(payload, checkpoint)
        if table_path.kind == "table" and valid_cache is None:  # a corpus's sentences are not pieces of each other
            trainer.honest = find_honest_heldout(cache, trainer.split, payload if settings.resume else None)
        unigram = unigram_perplexity(cache, trainer.split, len(bundle.tgt_vocab), valid_cache)
        honest_unigram = (unigram_perplexity(cache, trainer.split, len(bundle.tgt_vocab), on=trainer.honest.honest)
                          if trainer.honest is not None and trainer.honest.num_honest else None)
        state = trainer.train()
    except KeyboardInterrupt as interrupt:
        interrupt.note = kept_after_interrupt(trainer, checkpoint, run.resume_hint, cache_dir)
        raise
    ranks.on_main(lambda: save_trained(save_model, bundle, model_path, trainer), "writing the model")
    valid_set = "" if valid_cache is None else f"{settings.valid_src.name}, {settings.valid_tgt.name}"
    return TrainReport(bundle, vocabularies, state, cache.num_pairs, len(trainer.valid_indices), unigram,
                       cache.too_long, valid_set, None if trainer.honest is None else trainer.honest.num_honest,
                       honest_unigram)


def _read_as_units(table_path: Union[Path, PairSource], subwords: str) -> PairSource:
    """What training reads: with subwords, lines that must be UTF-8 (a table's or a corpus's)."""
    source = pair_source(table_path)
    return source if subwords == NO_SUBWORDS else dataclasses.replace(source, utf8_only=True)


def _learned_subwords(source: PairSource, settings: TrainSettings, run: TrainingRun,
                      rejects: _RejectsOnce) -> VocabularyReport:
    """A fresh model's subword models, learned on its corpus or table (on rank 0), and their
    pieces as its vocabularies; without a --subword-size, SUBWORD_SIZE pieces or as many as a
    side allows."""
    run.on_pass("learning subwords")
    subwords = run.ranks.on_main(
        lambda: learn_corpus_subwords(source, settings.subwords, settings.subword_size or SUBWORD_SIZE, run.progress,
                                      rejects.next_pass(), settings.direction, at_most=settings.subword_size is None),
        "learning the subword models")
    return VocabularyReport(subwords.source.vocabulary(), subwords.target.vocabulary(), None, None,
                            source.describe(), subwords)


def save_trained(save: Callable, bundle, model_path: Path, trainer: Trainer) -> None:
    """Write the trained model with `save` (its kind's); one that cannot be written says where the
    weights are kept (the checkpoint) and how to write it later. Every model kind ends here."""
    try:
        save(bundle, model_path)
    except RescorerError as error:
        raise RescorerError(f"{error}; the trained weights are in {trainer.checkpoint_path} (update "
                            f"{trainer.checkpoint_update}): rerun with --resume once it can be "
                            f"written") from None


def open_built_cache(table_path: Union[Path, PairSource], encoding: PairEncoding, cache_dir: Path) -> PairCache:
    """The pair cache `encode_table` built (on rank 0, for every rank)."""
    cache = open_matching_cache(cache_dir, cache_meta(table_path, encoding))
    if cache is None:
        raise RescorerError(f"{cache_dir}: cannot open the pair cache that rank 0 built (the "
                            f"directory must be on a file system that every node sees)")
    return cache


def kept_after_interrupt(trainer: Optional[Trainer], checkpoint: Path, resume_hint: str,
                         cache_dir: Optional[Path] = None) -> str:
    """One true sentence on what an interrupted training leaves for --resume: its checkpoint, and
    the pair cache where the model kind has one (`cache_dir`; the CSLM reads its corpus anew)."""
    cache = cache_dir is not None and cache_dir.is_dir()
    if trainer is None:
        kept = f"; the pair cache {cache_dir} is kept" if cache else ""
        return f"stopped before training; no model was written{kept}"
    if trainer.checkpoint_update is None:  # training takes an interrupt after an update, with a checkpoint
        if cache:
            return f"stopped before the first update; the pair cache {cache_dir} is kept, so a new run skips encoding"
        return "stopped before the first update; no model was written"
    also_kept = f" and the pair cache {cache_dir} is kept" if cache else ""
    return f"stopped at update {trainer.state.updates}; {checkpoint_kept(trainer, checkpoint, also_kept, resume_hint)}"


def checkpoint_kept(trainer: Trainer, checkpoint: Path, also_kept: str, resume_hint: str) -> str:
    """Where the checkpoint of an interrupted training is and how to go on from it. It holds the
    update training stopped at: an interrupt during training is taken between two updates, after
    the trainer has written it (rescorer.training.trainer.Trainer.stop_if_interrupted)."""
    resume = resume_hint or "rerun with --resume, which"
    if trainer.checkpoint_update == trainer.state.updates:
        return f"{checkpoint} holds it{also_kept}: {resume} continues from there"
    return (f"{checkpoint} (update {trainer.checkpoint_update}){also_kept}: {resume} continues from update "
            f"{trainer.checkpoint_update}")
