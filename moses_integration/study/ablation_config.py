"""What one ablation is asked to do (run_ablation's input): the systems' files and sets, how
each is tuned and evaluated, and the sentence models of its reranked rows. Its own module so
that the ablation and its reranked rows (ablation.py, reranked_rows.py) both read it without
importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..nbest.sentence_models import SentenceFeatures
from ..preflight import ParallelSet

__all__ = ["AblationConfig", "RerankRows"]


@dataclass
class RerankRows:
    """The reranked rows' sentence models (their features, nbest/sentence_models.py), the
    optimizer of the reranking weights (mert or batch-mira) and the systems whose lists are
    reranked (empty: see reranked_rows.reranked_systems)."""

    features: SentenceFeatures
    optimizer: str = "mert"
    systems: Sequence[str] = ()


@dataclass
class AblationConfig:
    """Everything one ablation needs; relative paths are relative to `base_dir`."""

    ini_path: Path
    rescored_table: Path
    dev: ParallelSet
    test: ParallelSet
    out_dir: Path
    base_dir: Path
    feature: Optional[str] = None
    new_columns: Optional[Sequence[str]] = None  # names of the new columns; None: inferred
    replicates: int = 3
    threads: int = 4
    nbest_size: int = 100
    seed: int = 1
    optimizer: str = "mert"  # or "batch-mira" (moses_integration.settings.OPTIMIZER_NAMES)
    initial_weight: Optional[float] = None  # None: scaled to the table (tables/starting_weights.py)
    warm_start: bool = True
    decoder_flags: Sequence[str] = field(default_factory=tuple)
    filter_test: bool = True
    test_type: str = "ar"
    num_samples: int = 0  # AR trials / bootstrap resamples; 0: sacrebleu's 10,000 / 1,000
    detokenize_lang: Optional[str] = None
    max_iterations: Optional[int] = None
    systems: Optional[Sequence[str]] = None
    plot: bool = True
    rerank: Optional[RerankRows] = None  # reranked rows (+rerank, +RNN+rerank) when given
    lm_rerank: Optional[RerankRows] = None  # the CSLM's reranked rows (+CSLM, +CSLM+RNN, +CSLM+RNN+WP)
    nplm: Optional[Path] = None  # the CSLM's NPLM export: the decoding rows (+CSLM(dec), ...) when given
