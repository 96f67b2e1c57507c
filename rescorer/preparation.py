"""Getting a model ready: shortlists, the encoded pair cache, a fresh model, and training it."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import torch

from rescorer.checkpoint import ModelBundle, bundle_from_payload, read_model_file, save_model
from rescorer.errors import RescorerError
from rescorer.models import ModelSettings, PhraseScorer, build_model
from rescorer.pair_cache import PairCache, build_pair_cache, open_matching_cache
from rescorer.phrase_table import PhraseTableReader
from rescorer.training import Trainer, TrainSettings, TrainState, unigram_perplexity
from rescorer.vocabulary import Coverage, Vocabulary, count_corpus_words, coverage

Progress = Callable[[int], None]  # called with the number of lines just done


def no_progress(lines: int) -> None:
    pass


@dataclass
class VocabularyReport:
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    src_coverage: Coverage
    tgt_coverage: Coverage
    counted_from: str


def _table_pairs(table_path: Path, progress: Progress) -> Iterator[tuple[str, str]]:
    """(src, tgt) of every parseable line; unparseable ones are skipped here (the scoring pass
    reports or rejects them) when the caller asked for a reject file."""
    with PhraseTableReader(table_path, reject_path=Path(os.devnull)) as reader:
        for entry in reader:
            progress(1)
            yield entry.src, entry.tgt


def build_vocabularies(table_path: Path, shortlist_size: int, src_corpus: Optional[Path] = None,
                       tgt_corpus: Optional[Path] = None,
                       progress: Progress = no_progress) -> VocabularyReport:
    """Shortlists from the corpora when given (what the paper did), else from the table's pairs."""
    if src_corpus is not None and tgt_corpus is not None:
        src_counts, tgt_counts = count_corpus_words(src_corpus), count_corpus_words(tgt_corpus)
        source = f"corpora {src_corpus.name}, {tgt_corpus.name}"
    elif src_corpus is not None or tgt_corpus is not None:
        raise RescorerError("--src-corpus and --tgt-corpus go together: give both or neither")
    else:
        src_counts, tgt_counts = Counter(), Counter()
        for src, tgt in _table_pairs(table_path, progress):
            src_counts.update(src.split())
            tgt_counts.update(tgt.split())
        source = f"phrase table {table_path.name}"
    src_vocab = Vocabulary.from_counts(src_counts, shortlist_size)
    tgt_vocab = Vocabulary.from_counts(tgt_counts, shortlist_size)
    return VocabularyReport(src_vocab, tgt_vocab, coverage(src_vocab, src_counts),
                            coverage(tgt_vocab, tgt_counts), source)


def table_identity(table_path: Path) -> dict:
    """What makes a pair cache stale: the table's name, size and modification time."""
    stat = table_path.stat()
    return {"table_name": table_path.name, "table_bytes": stat.st_size,
            "table_mtime_ns": stat.st_mtime_ns}


def encode_table(table_path: Path, src_vocab: Vocabulary, tgt_vocab: Vocabulary,
                 cache_dir: Path, progress: Progress = no_progress) -> PairCache:
    """The table's pairs as an on-disk cache, reusing `cache_dir` when it still matches."""
    meta = {**table_identity(table_path),
            "vocab_hash": hash_vocabularies(src_vocab, tgt_vocab)}
    cache = open_matching_cache(cache_dir, meta)
    if cache is None:
        cache = build_pair_cache(_table_pairs(table_path, progress), src_vocab, tgt_vocab,
                                 cache_dir, meta)
    if cache.num_pairs == 0:
        raise RescorerError(f"{table_path}: no phrase pairs to train on")
    return cache


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


def checkpoint_path_for(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + ".checkpoint")


def train_on_table(table_path: Path, model_path: Path, *, preset: str = "small",
                   model: Optional[ModelSettings] = None,
                   settings: Optional[TrainSettings] = None, shortlist_size: Optional[int] = None,
                   src_corpus: Optional[Path] = None, tgt_corpus: Optional[Path] = None,
                   device: torch.device = torch.device("cpu"), precision: str = "fp32",
                   resume: bool = False, cache_dir: Optional[Path] = None,
                   progress: Progress = no_progress, on_update=None) -> TrainReport:
    """Train a model on the table's unique pairs and save the best one at `model_path`.

    `model` gives the architecture, preset and settings (default: cho2014 at `preset`); on
    `resume` the checkpoint's own are used. A checkpoint with optimizer state is kept beside
    the model (`<model>.checkpoint`) for `resume`.
    """
    settings = settings or TrainSettings()
    model = model or ModelSettings.make(preset=preset)
    checkpoint = checkpoint_path_for(model_path)
    cache_dir = cache_dir or model_path.with_name(model_path.name + ".cache")
    vocabularies = None
    if resume:
        if not checkpoint.is_file():
            raise RescorerError(f"{checkpoint}: no checkpoint to resume from")
        payload = read_model_file(checkpoint)  # read once: weights, optimizer, state
        bundle = bundle_from_payload(payload, checkpoint)
        bundle.model.train()
    else:
        model.check()  # before the table is read
        torch.manual_seed(settings.seed)
        size = shortlist_size or model.shortlist_size
        vocabularies = build_vocabularies(table_path, size, src_corpus, tgt_corpus, progress)
        bundle = ModelBundle(new_model(model, vocabularies.src_vocab, vocabularies.tgt_vocab),
                             vocabularies.src_vocab, vocabularies.tgt_vocab)
    cache = encode_table(table_path, bundle.src_vocab, bundle.tgt_vocab, cache_dir, progress)
    trainer = Trainer(bundle, cache, settings, device, precision, checkpoint, on_update)
    if resume:
        trainer.resume(payload, checkpoint)
    unigram = unigram_perplexity(cache, trainer.split, len(bundle.tgt_vocab))
    state = trainer.train()
    save_model(bundle, model_path)
    return TrainReport(bundle, vocabularies, state, cache.num_pairs, len(trainer.split.valid), unigram)
