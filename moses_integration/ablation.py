"""The paper's ablation (Cho et al. 2014, Table 1): Baseline, +RNN, +WP and +RNN+WP, each
tuned R times with MERT (optimizer variance, Clark et al. 2011) and evaluated on test.

All four systems come from ONE rescored table holding both new columns. Each system gets a
table holding exactly its columns (written once, then reused), and a moses.ini whose
num-features and weights match. We chose this over keeping all columns and freezing unused
weights at 0 with mert-moses.pl's --activate-features because a frozen feature still costs
decoding time and still counts in mert's random restarts and normalization, and because a
table whose columns match the ini is what preflight can check. Baseline uses the original
table and moses.ini unchanged.

Layout of out_dir (reruns skip finished work: a replicate with result.json is done):
  tables/<system>.phrase-table.gz    <system>/moses.ini    <system>/rep<r>/mert/
  <system>/rep<r>/test.hyp           <system>/rep<r>/result.json
  results.csv  results.md  replicates.csv
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from .errors import MosesConfigError, MosesNotFoundError, MosesRunError
from .evaluation import EvalResult, compare, decode, evaluate_file, read_result, write_result
from .mert import TuningConfig, check_tuned_weights, tune
from .moses_install import MosesInstall
from .moses_ini import MosesIni
from .phrase_table import binarize_compact, read_num_scores, select_score_columns
from .preflight import ParallelSet, require_preflight
from .results_table import summarize, write_tables
from .textio import read_lines

__all__ = ["SystemSpec", "AblationConfig", "plan_systems", "run_ablation", "rescore_table"]

logger = logging.getLogger(__name__)

SYSTEM_COLUMNS = {"Baseline": (), "+RNN": ("rnn",), "+WP": ("wp",), "+RNN+WP": ("rnn", "wp")}


@dataclass(frozen=True)
class SystemSpec:
    """One configuration: its name and the new columns ("rnn", "wp") it adds to the base ones."""

    name: str
    new_columns: tuple

    @property
    def slug(self) -> str:
        return "baseline" if not self.new_columns else "-".join(self.new_columns)


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
    replicates: int = 3
    threads: int = 4
    nbest: int = 100
    seed: int = 1
    batch_mira: bool = False
    initial_weight: float = 0.2
    test_type: str = "ar"
    num_samples: int = 0  # AR trials / bootstrap resamples; 0: sacrebleu's 10,000 / 1,000
    detokenize_lang: Optional[str] = None
    max_iterations: Optional[int] = None
    systems: Optional[Sequence[str]] = None
    mert_extra_args: Sequence[str] = field(default_factory=tuple)


def plan_systems(num_base: int, num_rescored: int, wanted: Optional[Sequence[str]] = None,
                 origin: str = "rescored table") -> list[SystemSpec]:
    """Systems possible with this table: +WP needs the word-penalty column (--unk-penalty)."""
    num_new = num_rescored - num_base
    if num_new not in (1, 2):
        raise MosesConfigError(
            f"{origin}:1: expected {num_base + 1} or {num_base + 2} scores (the {num_base} of "
            f"num-features plus the RNN score and optionally the word penalty), found {num_rescored}")
    available = [n for n, cols in SYSTEM_COLUMNS.items() if num_new == 2 or "wp" not in cols]
    if wanted:
        unknown = [n for n in wanted if n not in SYSTEM_COLUMNS]
        missing = [n for n in wanted if n in SYSTEM_COLUMNS and n not in available]
        if unknown:
            raise MosesConfigError(f"unknown system(s) {unknown}; expected some of {list(SYSTEM_COLUMNS)}")
        if missing:
            raise MosesConfigError(f"{origin} has no word-penalty column (rescore with "
                                   f"--unk-penalty), so {missing} cannot be built")
        # Baseline is always built: every other system is compared with it.
        available = [n for n in available if n in wanted or n == "Baseline"]
    return [SystemSpec(n, SYSTEM_COLUMNS[n]) for n in available]


def rescore_table(table: Path, model: Path, out_path: Path, unk_penalty: bool = True) -> Path:
    """Score a text phrase table through the `rescore` CLI (this package never imports torch)."""
    if out_path.is_file():
        return out_path
    executable = shutil.which("rescore")
    if executable is None:
        raise MosesNotFoundError("the `rescore` command is not on PATH: pip install the package")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name("partial." + out_path.name)
    argv = [executable, "score", str(table), "--model", str(model), "-o", str(partial), "--force"]
    if unk_penalty:
        argv.append("--unk-penalty")
    if subprocess.call(argv) != 0:
        raise MosesRunError(f"`{' '.join(argv)}` failed")
    partial.replace(out_path)
    return out_path


def _system_ini(spec: SystemSpec, config: AblationConfig, base_ini: MosesIni, num_base: int,
                moses: Optional[MosesInstall]) -> Path:
    """Write (once) the system's table and moses.ini; returns the moses.ini path."""
    system_dir = config.out_dir / spec.slug
    ini_path = system_dir / "moses.ini"
    if ini_path.is_file():
        return ini_path
    system_dir.mkdir(parents=True, exist_ok=True)
    ini = MosesIni(base_ini.text(), origin=base_ini.origin)
    ini.make_paths_absolute(config.base_dir)
    if spec.new_columns:
        table = ini.phrase_table(config.feature)
        index = {"rnn": num_base, "wp": num_base + 1}
        keep = list(range(num_base)) + [index[c] for c in spec.new_columns]
        text_table = config.out_dir / "tables" / f"{spec.slug}.phrase-table.gz"
        if not text_table.is_file():
            partial = text_table.with_name("partial." + text_table.name)
            select_score_columns(config.base_dir / config.rescored_table, partial, keep)
            partial.replace(text_table)
        table_path = text_table
        if table.kind == "PhraseDictionaryCompact":
            if moses is None:
                raise MosesNotFoundError("a compact phrase table needs Moses to re-binarize")
            table_path = binarize_compact(moses, text_table, text_table.with_suffix(""), len(keep),
                                          config.threads, system_dir / "binarize.log")
        weights = ini.weights(table.name)[:num_base] + [config.initial_weight] * len(spec.new_columns)
        ini.set_score_columns(table, str(table_path.resolve()), weights)
    ini.write(ini_path)
    return ini_path


def _run_replicate(spec: SystemSpec, replicate: int, ini_path: Path, config: AblationConfig,
                   moses: MosesInstall, report: Callable[[str], None],
                   table_name: str) -> EvalResult:
    rep_dir = config.out_dir / spec.slug / f"rep{replicate}"
    result_path = rep_dir / "result.json"
    if result_path.is_file() and (rep_dir / "mert" / "moses.ini").is_file():
        report(f"{spec.name} replicate {replicate}: done earlier, skipped")
        return read_result(result_path)
    tuning = TuningConfig(
        ini_path=ini_path, dev_src=config.dev.src_path, dev_ref=config.dev.ref_path,
        work_dir=rep_dir / "mert", base_dir=config.base_dir, threads=config.threads,
        nbest=config.nbest, seed=config.seed + replicate, batch_mira=config.batch_mira,
        max_iterations=config.max_iterations, extra_args=config.mert_extra_args)
    tuned = tune(moses, tuning, progress=lambda i, b: report(
        f"{spec.name} replicate {replicate}: iteration {i} dev BLEU "
        f"{'?' if b is None else f'{b:.2f}'}"))
    num_base = len(MosesIni.read(config.base_dir / config.ini_path).weights(table_name)) \
        if spec.new_columns else 0
    new_columns = list(range(num_base, num_base + len(spec.new_columns)))
    warnings = tuned.warnings + check_tuned_weights(
        MosesIni.read(tuned.ini_path), table_name, new_columns,
        [config.initial_weight] * len(new_columns))
    for warning in dict.fromkeys(warnings):  # each once
        report(f"warning: {warning}")
    hyp = decode(moses, tuned.ini_path, config.base_dir / config.test.src_path,
                 rep_dir / "test.hyp", config.threads, config.base_dir)
    result = evaluate_file(hyp, config.base_dir / config.test.ref_path, config.detokenize_lang)
    result.dev_bleu = tuned.dev_bleu
    write_result(result, result_path)
    report(f"{spec.name} replicate {replicate}: test BLEU {result.bleu:.2f}")
    return result


def run_ablation(config: AblationConfig, moses: MosesInstall,
                 report: Callable[[str], None] = logger.info):
    """Build, tune and evaluate every system; write results.{csv,md}; return the summary."""
    base_ini = MosesIni.read(config.base_dir / config.ini_path)
    table = base_ini.phrase_table(config.feature)
    num_base = table.int_arg("num-features", base_ini.origin)
    rescored = config.base_dir / config.rescored_table
    specs = plan_systems(num_base, read_num_scores(rescored), config.systems, str(rescored))
    data = [ParallelSet(d.label, config.base_dir / d.src_path, config.base_dir / d.ref_path)
            for d in (config.dev, config.test)]
    require_preflight(config.base_dir / config.ini_path, config.base_dir, moses.root,
                      data=data, check_install=True)
    inis = {spec.name: _system_ini(spec, config, base_ini, num_base, moses) for spec in specs}
    results: dict[str, list[EvalResult]] = {spec.name: [] for spec in specs}
    for replicate in range(1, config.replicates + 1):
        for spec in specs:
            results[spec.name].append(
                _run_replicate(spec, replicate, inis[spec.name], config, moses, report, table.name))
    refs = read_lines(config.base_dir / config.test.ref_path)
    # Replicate r of each system is paired with replicate r of Baseline: the R test outputs
    # are concatenated, so the test sees optimizer variance as well as sampling variance.
    concatenated = [(name, [line for r in runs for line in read_lines(Path(r.hyp_path))])
                    for name, runs in results.items()]
    p_values = compare(concatenated, refs * config.replicates, config.test_type,
                       config.num_samples, config.detokenize_lang)
    summary = summarize(results, p_values)
    write_tables(summary, results, config.out_dir)
    return summary
