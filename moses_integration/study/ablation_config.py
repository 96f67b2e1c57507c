"""What one ablation is asked to do (run_ablation's input): the systems' files and sets, how
each is tuned and evaluated, and the sentence models of its reranked rows. Its own module so
that the ablation and its reranked rows (ablation.py, reranked_rows.py) both read it without
importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..preflight import ParallelSet

__all__ = ["AblationConfig", "RerankRows"]


@dataclass
class RerankRows:
    """The sentence models of the reranked rows: `add_features` scores an n-best list with them
    (reranking.AddFeatures), adding the features `new_features`."""

    add_features: Callable
    new_features: Sequence[str]
    optimizer: str = "mert"
    systems: Sequence[str] = ()  # the systems whose lists are reranked; empty: see reranked_systems
    scored_with: Sequence[str] = ()  # the models' paths (their contents are recorded by the steps)
    scoring: dict = field(default_factory=dict)  # the scorer's settings that change the features


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
