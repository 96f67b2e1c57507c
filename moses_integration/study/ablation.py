"""The paper's ablation (Cho et al. 2014, Table 1): Baseline, +RNN, +WP and +RNN+WP (and
+<model> for each of several model columns), each tuned R times with MERT (optimizer variance,
Clark et al. 2011) and evaluated on test.

Fairness. Replicate r of every system uses seed `seed + r`. A new column's starting weight is
scaled to the table (tables/starting_weights.py). With warm starts (the default), replicate r of
Baseline is tuned first and every other system of that replicate starts from Baseline's tuned
weights plus its new columns' starting weights, as one adds a feature to a tuned system; without,
each starts from the ini's weights ("cold"). Each run records its start, its MERT iterations,
why MERT stopped and the dev BLEU of every iteration (tuning/dev_curve.py).

Speed. System tables are cut in one pass (tables/system_tables.py); the test set's tables are filtered
once for all systems (tables/filtering.py); decoder flags reach tuning and test decoding alike.

Reranking. With sentence models (`rerank`), Baseline and +RNN (or the systems asked for, e.g. a
combination +fwdpw+inv, or those `rerank.systems` names) also get a reranked row each, `+rerank`
and `+RNN+rerank`: replicate r's tuned system decodes dev and test n-best lists, the
models' scores are added, the reranking weights are tuned on dev with seed + r (nbest/reranking.py)
and its reranked test output is scored and tested against Baseline like every other row.
With a target language model (`lm_rerank`), Cho et al.'s Table 1 rows: Baseline, +RNN and
+RNN+WP reranked with the CSLM's score alone, `+CSLM`, `+CSLM+RNN`, `+CSLM+RNN+WP`, the same way.

Decoding rows. With the CSLM's NPLM export (`nplm`), the same systems with the CSLM in the
decoder's search (Moses' NeuralLM feature), `+CSLM(dec)`, `+CSLM(dec)+RNN`, `+CSLM(dec)+RNN+WP`
(decoding_rows.py): tuned, evaluated and resumed like every system, replicate r warm-started from
the extended system's tuned replicate r plus the NeuralLM's starting weight. They run last, after
the cheaper rows: decoding with the NeuralLM is several times slower.

Layout of out_dir (reruns skip finished work whose record says it was made from the same inputs
and settings, step_provenance.py; a tuning run made from other is refused, its test scores redone):
  tables/<system>.phrase-table.gz   <system>/moses.ini   <system>/rep<r>/{start.moses.ini,mert/}
  test-filtered/   <system>/rep<r>/{test.moses.ini,test.hyp,result.json,evaluation.record.json}
  <system>/rep<r>/mert/tuning.record.json   column-stats.json
  <system>/rep<r>/rerank/ (nbest/reranking.py's layout; result.json the row, made again each run)
  <system>/rep<r>/rerank-cslm/ (the same, for the CSLM's rows)
  cslm-dec[-<system>]/{moses.ini,rep<r>/...} (a decoding row: a system's layout, NeuralLM0 in its ini)
  results.csv  results.md  replicates.csv  mert-curves.csv  mert-curves.png
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from rescorer.counts import counted
from rescorer.io.atomic_output import write_atomically

from ..errors import MosesConfigError
from ..evaluation.results_table import summarize, write_tables
from ..evaluation.scores import (EvalResult, compare, decode, evaluate_file, read_references, read_result, score,
                                 write_result)
from ..ini.moses_ini import Feature, MosesIni
from ..ini.moses_install import MosesInstall
from ..ini.neural_lm import neural_lm_start
from ..line_files import read_lines
from ..preflight import require_preflight
from ..step_provenance import Step, check, files_of, fingerprint, forget, ini_files, record
from ..tables.columns import ColumnLayout, SystemSpec, infer_layout, plan_systems
from ..tables.filtering import FilteredModel, filter_for_test, filtered_ini, system_tables
from ..tables.phrase_table import read_num_scores
from ..tables.starting_weights import (ColumnStats, cached_column_stats, check_layout, new_column_weights,
                               warm_start_ini)
from ..tables.system_tables import check_same_pairs, column_indices, system_ini, write_system_tables
from ..tuning.dev_curve import dev_bleu_curve, read_stop_reason
from ..nbest.sentence_models import SentenceFeatures
from ..settings import AblationSettings, TuningSettings
from ..tuning.mert_moses import check_tuned_weights, iterations_run, read_finished_step, tune
from .decoding_rows import NEURAL_LM, built_systems, neural_lm_ini, plan_decoding_rows
from .reranked_rows import (check_rerank_systems, cslm_row_name, cslm_systems, rerank_replicate,
                            reranked_systems)

__all__ = ["run_ablation"]

logger = logging.getLogger(__name__)


@dataclass
class _Plan:
    """What every replicate shares: the systems, their inis and tables, the filtered tables."""

    table: Feature
    layout: ColumnLayout
    specs: list
    inis: dict  # slug -> cold-start moses.ini path
    stats: ColumnStats
    test_tables: dict = field(default_factory=dict)  # slug -> filtered test table
    filtered: Optional[FilteredModel] = None
    rows: list = field(default_factory=list)  # the decoding rows (decoding_rows.DecodingRow)


def _write_if_changed(ini: MosesIni, path: Path) -> Path:
    if not path.is_file() or path.read_text() != ini.text():
        ini.write(path)
    return path


def _check_same_table(rescored: Path, out_dir: Path) -> None:
    """Tables, statistics and filtered files in out_dir were made from one rescored table: a
    rerun on another (or a rescored again) table would mix them, so it is refused."""
    status = rescored.stat()
    key = {"table": str(rescored.resolve()), "size": status.st_size, "mtime_ns": status.st_mtime_ns}
    record = out_dir / "rescored-table.json"
    if record.is_file():
        before = json.loads(record.read_text())
        if before != key:
            raise MosesConfigError(
                f"{out_dir} holds an ablation of {before['table']} as it was then (size "
                f"{before['size']}), not of {key['table']} (size {key['size']}): use another "
                "--out-dir")
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(record, (json.dumps(key) + "\n").encode())


def _prepare(settings: AblationSettings, moses: MosesInstall, report) -> _Plan:
    base_ini = MosesIni.read(settings.ini_path)
    table = base_ini.phrase_table(settings.feature)
    num_base = table.int_arg("num-features", base_ini.origin)
    rescored = settings.rescored_table
    layout = infer_layout(num_base, read_num_scores(rescored), settings.new_columns, str(rescored))
    specs = plan_systems(layout, built_systems(settings.systems), str(rescored))
    nplm = settings.nplm_path
    rows = plan_decoding_rows(specs, settings.systems, nplm)
    require_preflight(settings.ini_path, settings.base_dir, moses,
                      data=[settings.dev_set, settings.test_set], check_install=True, neural_lms=[nplm] if rows else [])
    _check_same_table(rescored, settings.out_dir)
    # One pass (cached): the columns' magnitudes scale the starting weights and check the layout.
    stats = cached_column_stats(rescored, settings.out_dir / "column-stats.json")
    check_layout(stats, layout, num_base, str(rescored))
    report(f"{rescored.name}: {counted(stats.num_lines, 'line')}; mean |ln v| of its columns "
           + " ".join(f"{m:.2f}" for m in stats.mean_abs_log) + f" ({', '.join(layout.names)} last)")
    tables = write_system_tables(specs, layout, num_base, rescored, settings.out_dir / "tables",
                                 table, moses, settings.threads)
    base_weights = base_ini.weights(table.name)
    inis = {}
    for spec in specs:
        starts = new_column_weights(base_weights, layout, spec.new_columns, stats,
                                    settings.initial_weight, base_ini.origin)
        if spec.new_columns and not settings.warm_start:
            report(f"{spec.name}: starting weights {dict(zip(spec.new_columns, starts))} "
                   f"(cold start, from {base_ini.origin})")
        ini = system_ini(base_ini, settings.base_dir, table, tables.get(spec.slug),
                         base_weights + starts)
        inis[spec.slug] = _write_if_changed(ini, settings.out_dir / spec.slug / "moses.ini")
    for row in rows:  # the system it extends, with the NeuralLM line
        ini = neural_lm_ini(MosesIni.read(inis[row.base.slug]), nplm, settings.initial_weight)
        inis[row.spec.slug] = _write_if_changed(ini, settings.out_dir / row.spec.slug / "moses.ini")
    plan = _Plan(table, layout, specs, inis, stats, rows=rows)
    if settings.filter_test and table.kind == "PhraseDictionaryMemory":
        original = settings.base_dir / table.args["path"]
        if original.is_file():
            check_same_pairs(original, rescored, num_base)
        every = system_ini(base_ini, settings.base_dir, table, rescored.resolve(),
                           base_weights + [0.0] * len(layout.names))
        plan.filtered = filter_for_test(moses, every, table.name,
                                        settings.test_set.src_path,
                                        settings.out_dir / "test-filtered")
        keep = {s.slug: column_indices(s, layout, num_base) for s in specs}
        plan.test_tables = system_tables(plan.filtered, keep, settings.out_dir / "test-filtered")
        for row in rows:  # the same columns as the system it extends
            plan.test_tables[row.spec.slug] = plan.test_tables[row.base.slug]
    return plan


def _start_kind(spec: SystemSpec, settings: AblationSettings, base: Optional[SystemSpec] = None) -> str:
    """"ini": Baseline, from the ini's weights; "cold": the ini's weights and scaled starts for
    the new columns (and the NeuralLM's start); "warm": this replicate's tuned Baseline weights
    and scaled starts, or for a decoding row the tuned weights of the system it extends and the
    NeuralLM's start."""
    if not spec.new_columns and base is None:
        return "ini"
    return "warm" if settings.warm_start else "cold"


def _start(spec: SystemSpec, kind: str, replicate: int, plan: _Plan, settings: AblationSettings,
           rep_dir: Path, report, base: Optional[SystemSpec] = None) -> tuple[Path, dict]:
    """The ini this run's tuning starts from, and the starting weights it gave (feature name ->
    [(index, weight)]), which the tuned weights are checked against."""
    cold = MosesIni.read(plan.inis[spec.slug])
    table = plan.table.name
    num_base = len(cold.weights(table)) - len(spec.new_columns)
    columns = list(range(num_base, num_base + len(spec.new_columns)))
    if kind != "warm":
        given = {table: [(i, cold.weights(table)[i]) for i in columns]}
        return plan.inis[spec.slug], {**given, **({NEURAL_LM: [(0, cold.weights(NEURAL_LM)[0])]} if base else {})}
    if base is not None:  # a decoding row: its system's tuned weights, and the NeuralLM's
        tuned = MosesIni.read(settings.out_dir / base.slug / f"rep{replicate}" / "mert" / "moses.ini")
        start = neural_lm_start(tuned, settings.initial_weight)
        report(f"{spec.name} replicate {replicate}: warm start from {base.name}'s tuned weights, "
               f"{NEURAL_LM} {start}")
        ini = warm_start_ini(cold, tuned, table, [], added={NEURAL_LM: [start]})
        return _write_if_changed(ini, rep_dir / "start.moses.ini"), {NEURAL_LM: [(0, start)]}
    tuned = MosesIni.read(settings.out_dir / "baseline" / f"rep{replicate}" / "mert" / "moses.ini")
    starts = new_column_weights(tuned.weights(table), plan.layout, spec.new_columns,
                                plan.stats, settings.initial_weight, tuned.origin)
    report(f"{spec.name} replicate {replicate}: warm start from Baseline's tuned weights, new "
           f"columns {dict(zip(spec.new_columns, starts))}")
    ini = warm_start_ini(cold, tuned, table, starts)
    return _write_if_changed(ini, rep_dir / "start.moses.ini"), {table: list(zip(columns, starts))}


def _tuned_weights(spec: SystemSpec, tuned: MosesIni, table: str, base: Optional[SystemSpec]) -> dict:
    """The tuned weights of what the system adds: its new columns (and a decoding row's NeuralLM)."""
    weights = tuned.weights(table)
    added = dict(zip(spec.new_columns, weights[len(weights) - len(spec.new_columns):]))
    return {**added, NEURAL_LM: tuned.weights(NEURAL_LM)[0]} if base is not None else added


def _check_start_kind(rep_dir: Path, kind: str) -> None:
    """A half-tuned run continues only from the start it began with."""
    record = rep_dir / "start.json"
    if record.is_file():
        before = json.loads(record.read_text()).get("start")
        if before != kind and read_finished_step(rep_dir / "mert"):
            raise MosesConfigError(
                f"{rep_dir}: this run began with a {before} start, asked now for a {kind} one; "
                f"rerun with the option it began with, or delete {rep_dir}")
    rep_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(record, (json.dumps({"start": kind}) + "\n").encode())


def _with_history(result: EvalResult, work_dir: Path, settings: AblationSettings) -> EvalResult:
    """Fill in iterations, stop reason and the MERT curve from the working directory."""
    if result.iterations is None:
        result.iterations = iterations_run(work_dir, settings.max_iterations) or 0
    if result.stopped_by is None:
        result.stopped_by = read_stop_reason(work_dir)
    if result.dev_bleu_curve is None:
        result.dev_bleu_curve = dev_bleu_curve(work_dir, result.iterations,
                                               settings.dev_set.ref_paths,
                                               settings.detokenize_lang)
    return result


def _evaluation_step(spec: SystemSpec, replicate: int, plan: _Plan, settings: AblationSettings, tuned_ini: Path,
                     rep_dir: Path) -> Step:
    """The test decoding and scores of a tuned replicate: made from its tuned weights, the files
    its ini names, the test set (and its filtered table), the settings that change the output."""
    inputs = {"tuned ini": fingerprint(tuned_ini), "tuned ini's files": ini_files(tuned_ini, settings.base_dir),
              "test source": fingerprint(settings.test_set.src_path),
              "test references": files_of(settings.test_set.ref_paths)}
    if plan.filtered is not None:
        inputs["filtered test table"] = fingerprint(Path(plan.test_tables[spec.slug]))
    return Step(f"{spec.name} replicate {replicate}'s test scores", rep_dir / "evaluation.record.json",
                [rep_dir / "test.hyp", rep_dir / "result.json"], inputs,
                {"decoder_flags": list(settings.decoder_flags), "filter_test": plan.filtered is not None,
                 "detokenize_lang": settings.detokenize_lang})


def _run_replicate(spec: SystemSpec, replicate: int, plan: _Plan, settings: AblationSettings,
                   moses: MosesInstall, report: Callable[[str], None],
                   base: Optional[SystemSpec] = None) -> EvalResult:
    """Tune (tuning/mert_moses.py reuses a finished run made from the same, refuses one made from
    other), then decode and score test (reused when its record matches, step_provenance.py).
    `base`: for a decoding row, the system it extends."""
    rep_dir = settings.out_dir / spec.slug / f"rep{replicate}"
    result_path = rep_dir / "result.json"
    kind = _start_kind(spec, settings, base)
    _check_start_kind(rep_dir, kind)
    start_ini, starts = _start(spec, kind, replicate, plan, settings, rep_dir, report, base)
    dev = settings.dev_set
    tuning = TuningSettings(
        ini_path=start_ini, dev=(dev.src_path, dev.ref_path), dev_refs=dev.extra_refs,
        work_dir=rep_dir / "mert", base_dir=settings.base_dir, threads=settings.threads,
        nbest_size=settings.nbest_size, seed=settings.seed + replicate, optimizer=settings.optimizer,
        max_iterations=settings.max_iterations, decoder_flags=settings.decoder_flags)
    tuned = tune(moses, tuning, progress=lambda i, b: report(
        f"{spec.name} replicate {replicate}: iteration {i} dev BLEU "
        f"{'?' if b is None else f'{b:.2f}'}"))
    tuned_ini = MosesIni.read(tuned.ini_path)
    new_weights = _tuned_weights(spec, tuned_ini, plan.table.name, base)
    evaluation = _evaluation_step(spec, replicate, plan, settings, tuned.ini_path, rep_dir)
    if check(evaluation) is None:
        report(f"{spec.name} replicate {replicate}: done earlier, skipped")
        result = read_result(result_path)
        if result.new_weights is None:  # a result written before the weights were recorded
            result.new_weights = new_weights
        return _with_history(result, rep_dir / "mert", settings)
    forget(evaluation)
    warnings = list(tuned.warnings)
    for feature, given in starts.items():
        warnings += check_tuned_weights(tuned_ini, feature, [i for i, _ in given], [w for _, w in given])
    for warning in dict.fromkeys(warnings):  # each once
        report(f"warning: {warning}")
    test_ini = tuned.ini_path
    if plan.filtered is not None:
        test_ini = rep_dir / "test.moses.ini"
        filtered_ini(MosesIni.read(tuned.ini_path), plan.table.name, plan.test_tables[spec.slug],
                     plan.filtered).write(test_ini)
    hyp = decode(moses, test_ini, settings.test_set.src_path, rep_dir / "test.hyp",
                 settings.threads, settings.base_dir, decoder_flags=settings.decoder_flags)
    result = evaluate_file(hyp, settings.test_set.ref_paths, settings.detokenize_lang)
    result.dev_bleu, result.start = tuned.dev_bleu, kind
    result.new_weights = new_weights
    result.iterations, result.stopped_by = tuned.iterations, tuned.stopped_by
    _with_history(result, rep_dir / "mert", settings)
    write_result(result, result_path)
    record(evaluation)
    report(f"{spec.name} replicate {replicate}: test BLEU {result.bleu:.2f} ({kind} start, "
           f"{result.iterations} MERT iterations, stopped by {result.stopped_by})")
    return result


def run_ablation(settings: AblationSettings, moses: MosesInstall, report: Callable[[str], None] = logger.info,
                 rerank: Optional[SentenceFeatures] = None, cslm: Optional[SentenceFeatures] = None):
    """Build, tune and evaluate every system of `moses ablation`'s record, its table rescored
    (--rescored-table, not --model); with `rerank`, the rows of its sentence models
    (--rerank-model), with `cslm` those of its language models (--lm). Writes
    results.{csv,md}; returns the summary."""
    if settings.rescored_table is None:
        raise ValueError("run_ablation takes a rescored table: score the table with the models first")
    # The decoder runs in --base-dir: the paths given on the command line are made absolute first.
    settings = replace(settings, ini_path=settings.ini_path.resolve(), rescored_table=settings.rescored_table.resolve(),
                     out_dir=settings.out_dir.resolve(),
                     nplm_path=None if settings.nplm_path is None else settings.nplm_path.resolve())
    plan = _prepare(settings, moses, report)
    reranked = reranked_systems(settings, rerank)
    check_rerank_systems(reranked, plan.specs)  # before any tuning: a typo should not cost hours
    results: dict[str, list[EvalResult]] = {spec.name: [] for spec in plan.specs}
    for replicate in range(1, settings.replicates + 1):
        for spec in plan.specs:  # Baseline first: the warm starts need its tuned weights
            results[spec.name].append(_run_replicate(spec, replicate, plan, settings, moses, report))
    for spec in plan.specs:
        if spec.name in reranked:
            name = "+rerank" if spec.name == "Baseline" else f"{spec.name}+rerank"
            results[name] = [rerank_replicate(spec, r, settings, moses, report, rerank)
                             for r in range(1, settings.replicates + 1)]
    with_cslm = cslm_systems(settings, cslm, [spec.name for spec in plan.specs])
    for spec in plan.specs:
        if spec.name in with_cslm:
            name = cslm_row_name(spec.name)
            results[name] = [rerank_replicate(spec, r, settings, moses, report, cslm, name, "rerank-cslm")
                             for r in range(1, settings.replicates + 1)]
    for replicate in range(1, settings.replicates + 1):  # last: each decodes several times slower
        for row in plan.rows:
            results.setdefault(row.spec.name, []).append(
                _run_replicate(row.spec, replicate, plan, settings, moses, report, row.base))
    refs = read_references(settings.test_set.ref_paths)
    # Replicate r of each system is paired with replicate r of Baseline: the R test outputs
    # are concatenated, so the test sees optimizer variance as well as sampling variance.
    concatenated = [(name, [line for r in runs for line in read_lines(Path(r.hyp_path))])
                    for name, runs in results.items()]
    tested_refs = [stream * settings.replicates for stream in refs]
    p_values = compare(concatenated, tested_refs, settings.test_type,
                       settings.num_samples, settings.detokenize_lang)
    per_replicate = [compare([(name, read_lines(Path(runs[r].hyp_path))) for name, runs in results.items()],
                             refs, settings.test_type, settings.num_samples, settings.detokenize_lang)
                     for r in range(settings.replicates)] if settings.replicates > 1 else []
    tested_bleu = {name: score(hyps, tested_refs, name, settings.detokenize_lang).bleu for name, hyps in concatenated}
    summary = summarize(results, p_values, per_replicate, tested_bleu)
    write_tables(summary, results, settings.out_dir)
    if settings.plot:
        from .score_plots import plot_mert_curves

        plot_mert_curves(results, settings.out_dir / "mert-curves.png")
    return summary
