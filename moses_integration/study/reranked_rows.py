"""The ablation's reranked rows (+rerank, +<system>+rerank; with a CSLM the paper's +CSLM,
+CSLM+RNN, +CSLM+RNN+WP): replicate r's tuned system, its n-best lists reranked with sentence
models or a target language model (nbest/reranking.py), scored like every other row."""

from __future__ import annotations

import json
from typing import Callable, Optional, Sequence

from ..errors import MosesConfigError
from ..evaluation.scores import EvalResult, evaluate_file, write_result
from ..ini.moses_install import MosesInstall
from ..nbest.sentence_models import SentenceFeatures
from ..settings import AblationSettings, RerankSettings
from ..tables.columns import SystemSpec
from .decoding_rows import built_systems

__all__ = ["check_rerank_systems", "cslm_row_name", "cslm_systems", "rerank_replicate",
           "reranked_systems"]


def rerank_replicate(spec: SystemSpec, replicate: int, settings: AblationSettings, moses: MosesInstall,
                     report: Callable[[str], None], features: SentenceFeatures, row_name: Optional[str] = None,
                     folder: str = "rerank") -> EvalResult:
    """Replicate r of a system, its n-best lists reranked (nbest/reranking.py) with `features`
    (the sentence models', or the CSLM's), as the result row `row_name`, worked on in
    rep<r>/`folder`. The row is made again on every run from the reranking's steps, which are
    reused only when their records match (a failed or other reranking is redone, never taken for
    a result)."""
    from ..nbest.reranking import run_rerank

    row_name = row_name or f"{spec.name}+rerank"
    rep_dir = settings.out_dir / spec.slug / f"rep{replicate}"
    work = rep_dir / folder
    result_path = work / "result.json"  # the row, for the reader: never read back
    seed = settings.seed + replicate
    dev, test = settings.dev_set, settings.test_set
    rerank = RerankSettings(ini_path=rep_dir / "mert" / "moses.ini", dev=(dev.src_path, dev.ref_path),
                            dev_refs=dev.extra_refs, test=(test.src_path, test.ref_path), test_refs=test.extra_refs,
                            out_dir=work, nbest_size=settings.nbest_size, base_dir=settings.base_dir,
                            threads=settings.threads, decoder_flags=settings.decoder_flags,
                            optimizer=settings.rerank_optimizer,
                            tuner="numpy" if settings.rerank_optimizer == "pro" else "moses", seeds=1, seed=seed,
                            test_type=settings.test_type, num_samples=settings.num_samples,
                            detokenize_lang=settings.detokenize_lang)
    table = run_rerank(rerank, moses, features,
                       report=lambda message: report(f"{row_name} replicate {replicate}: {message}"))
    result = evaluate_file(work / f"seed{seed}" / "test.reranked", test.ref_paths, settings.detokenize_lang)
    weights = json.loads((work / f"seed{seed}" / "weights.json").read_text())["weights"]
    result.dev_bleu, result.start, result.dev_bleu_curve = float(table.iloc[1].dev_bleu), "rerank", []
    result.new_weights = {name: weights.get(f"{name}_0") for name in features.names}
    write_result(result, result_path)
    report(f"{row_name} replicate {replicate}: test BLEU {result.bleu:.2f}")
    return result


def reranked_systems(settings: AblationSettings, rerank: Optional[SentenceFeatures]) -> Sequence[str]:
    """The systems --rerank-system names; by default Baseline and the systems the ablation was
    asked for (--system, a decoding row standing for the system it extends), or +RNN when it
    builds all the fixed ones; none without the sentence models' features (`rerank`)."""
    if rerank is None:
        return ()
    return settings.rerank_systems or ("Baseline", *(built_systems(settings.systems) or ["+RNN"]))


def cslm_systems(settings: AblationSettings, cslm: Optional[SentenceFeatures], built: Sequence[str]) -> Sequence[str]:
    """The systems the CSLM reranks (Cho et al.'s Table 1): Baseline, +RNN and +RNN+WP, or
    Baseline and the --system ones, those the ablation builds; none without its features (`cslm`)."""
    if cslm is None:
        return ()
    wanted = ("Baseline", *(built_systems(settings.systems) or ["+RNN", "+RNN+WP"]))
    return [name for name in dict.fromkeys(wanted) if name in built]


def cslm_row_name(system: str) -> str:
    """+CSLM for Baseline, +CSLM+RNN for +RNN: the paper's names."""
    return "+CSLM" if system == "Baseline" else f"+CSLM{system}"


def check_rerank_systems(names: Sequence[str], specs: Sequence[SystemSpec]) -> None:
    """A system to rerank that the ablation does not build would silently give no row."""
    built = [spec.name for spec in specs]
    unknown = [name for name in names if name not in built]
    if unknown:
        raise MosesConfigError(f"cannot rerank {', '.join(unknown)}: not a system of this ablation "
                               f"(its systems: {', '.join(built)})")
