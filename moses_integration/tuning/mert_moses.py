"""Run Moses' own tuning driver, scripts/training/mert-moses.pl, as a subprocess with an
argument list; stream its log to a file; report each finished iteration with the dev BLEU
the optimizer found; resume an interrupted run with --continue; say why it stopped; check the
tuned weights. `tuning.record.json` in the working directory says what the run began with
(step_provenance.py): a rerun continues or reuses it only with the same, and refuses otherwise."""

from __future__ import annotations

import logging
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from rescorer.io.atomic_output import write_atomically

from ..child_process import process_group
from ..errors import MosesConfigError, MosesRunError
from ..ini.moses_ini import MosesIni
from ..ini.moses_install import MosesInstall
from ..line_files import is_gzipped, open_binary_read
from ..settings import TuningSettings
from ..step_provenance import Step, changed, damaged, files_of, fingerprint, ini_files, record
from .dev_curve import MERT_DEFAULT_MAX_ITERATIONS, read_stop_reason

__all__ = [
    "TuningResult",
    "build_mert_argv",
    "read_iteration_bleu",
    "read_finished_step",
    "iterations_run",
    "check_tuned_weights",
    "tune",
    "tuning_step",
]

logger = logging.getLogger(__name__)

# mert's log ends "Best point: w1 ... wn  => 0.400271"; kbmira's has "Best BLEU = 0.40".
# These are the regexes mert-moses.pl itself uses (get_weights_from_mert).
_MERT_BEST = re.compile(r"Best point:\s*([\s\d.\-e]+?)\s*=> ([\-\d.]+)")
_MIRA_BEST = re.compile(r"Best BLEU = ([\-\d.]+)")
_INI_BLEU = re.compile(r"^# BLEU (\S+) on dev")


@dataclass
class TuningResult:
    """Where the tuned moses.ini is, the dev BLEU (0-100) of its last iteration, how many
    iterations it took and why it stopped (mert_history: convergence, max-iterations, unknown)."""

    ini_path: Path
    dev_bleu: Optional[float]
    iterations: int
    warnings: list = field(default_factory=list)
    stopped_by: str = "unknown"


def read_finished_step(work_dir: Path) -> Optional[int]:
    """The last iteration mert-moses.pl finished (finished_step.txt), or None."""
    path = work_dir / "finished_step.txt"
    if not path.is_file():
        return None
    text = path.read_text().strip()
    if not text:
        return None  # being written right now (mert-moses.pl does not write it atomically)
    if not text.isdigit():
        raise MosesConfigError(f"{path}:1: expected an iteration number, found {text!r}")
    return int(text)


def iterations_run(work_dir: Path, max_iterations: Optional[int]) -> Optional[int]:
    """How many iterations the run decoded and optimized: finished_step.txt, at most
    --maximum-iterations. Stopped by the limit, mert-moses.pl leaves its loop at run = max + 1
    and still marks that run finished (copying mert.log to run<max+1>.mert.log), see its source."""
    step = read_finished_step(work_dir)
    return None if step is None else min(step, max_iterations or MERT_DEFAULT_MAX_ITERATIONS)


def read_iteration_bleu(work_dir: Path, iteration: int) -> Optional[float]:
    """Dev BLEU (0-100) the optimizer reached at `iteration`, from runN.mert.log; None if absent.

    This is BLEU on the pooled n-best lists, which mert-moses.pl also prints as "BEST at N"."""
    path = work_dir / f"run{iteration}.mert.log"
    if not path.is_file():
        return None
    bleu = None
    for line in path.read_text(errors="replace").splitlines():
        match = _MERT_BEST.search(line) or _MIRA_BEST.search(line)
        if match:
            bleu = float(match.groups()[-1])
    return None if bleu is None else 100.0 * bleu


def read_ini_bleu(ini_path: Path) -> Optional[float]:
    """The `# BLEU 0.40 on dev` header mert-moses.pl writes into a tuned moses.ini (0-100)."""
    for line in ini_path.read_text(errors="replace").splitlines()[:10]:
        match = _INI_BLEU.match(line)
        if match:
            try:
                return 100.0 * float(match.group(1))
            except ValueError:
                return None  # "--not-estimated--"
    return None


def _plain_copy(path: Path, target: Path, always_copy: bool = False) -> Path:
    """mert-moses.pl and the extractor want plain text: decompress gzipped dev files once (and
    copy plain ones too with `always_copy`, where the name matters)."""
    if not is_gzipped(path) and not always_copy:
        return path.resolve()
    if not target.exists():
        with open_binary_read(path) as src:
            write_atomically(target, src.read())
    return target.resolve()


def dev_references(settings: TuningSettings, work_dir: Path) -> Path:
    """The references argument of mert-moses.pl: the one reference file, or with several a prefix
    whose files `dev.ref0`, `dev.ref1`, ... it finds itself (its rule: a path that is not a file
    is a prefix, followed by 0, 1, ...). Plain copies in the working directory either way."""
    paths = settings.dev_set.ref_paths
    if len(paths) == 1:
        return _plain_copy(paths[0], work_dir / "dev.ref")
    for index, path in enumerate(paths):
        copy = work_dir / f"dev.ref{index}"
        copy.unlink(missing_ok=True)  # the references of this run, never those of an earlier one
        _plain_copy(path, copy, always_copy=True)
    (work_dir / f"dev.ref{len(paths)}").unlink(missing_ok=True)  # else it would be read as one more
    (work_dir / "dev.ref").unlink(missing_ok=True)  # else it would be read as the only one
    return (work_dir / "dev.ref").resolve()


def build_mert_argv(moses: MosesInstall, settings: TuningSettings, ini_for_run: Path,
                    dev_src: Path, dev_ref: Path, resume: bool) -> list[str]:
    """The mert-moses.pl command line, as a list (no shell), with absolute paths."""
    argv = [
        str(moses.script("training/mert-moses.pl")),
        str(dev_src), str(dev_ref), str(moses.binary("moses")), str(ini_for_run),
        f"--working-dir={settings.work_dir.resolve()}",
        f"--mertdir={moses.bin_dir}",
        f"--rootdir={moses.scripts_dir}",
        "--decoder-flags=" + " ".join(["-threads", str(settings.threads), *settings.decoder_flags]),
        # mert's random restarts in a pool of as many threads as the decoder has: half of an
        # iteration is mert on one core otherwise. The weights are the same (the restarts are
        # drawn before the pool starts and their results read in order, mert.cpp); batch MIRA
        # ignores it.
        f"--threads={settings.threads}",
        f"--nbest={settings.nbest_size}",
    ]
    # --predictable-seeds would seed every replicate alike (seed = 1000 * iteration), so a
    # replicate's seed goes straight to the optimizer: mert and kbmira both take `-r SEED`.
    # The trailing space matters: mert-moses.pl appends "--sctype BLEU" to mertmertargs
    # without a separator ("$mertargs $mertmertargs" . "$sctype ..."), see its source.
    if settings.seed is not None:
        if settings.optimizer == "batch-mira":
            argv.append(f"--batch-mira-args=-r {settings.seed} ")
        else:
            argv.append(f"--mertmertargs=-r {settings.seed} ")
    if settings.optimizer == "batch-mira":
        # MIRA's dev BLEU does not climb steadily, so its last iteration is not its best:
        # mert-moses.pl then keeps the iteration whose 1-best scored highest on dev.
        argv += ["--batch-mira", "--return-best-dev"]
    if settings.max_iterations is not None:
        argv.append(f"--maximum-iterations={settings.max_iterations}")
    if resume:
        argv.append("--continue")
    return argv


def tune(moses: MosesInstall, settings: TuningSettings,
         progress: Callable[[int, Optional[float]], None] = lambda i, b: None,
         poll_seconds: float = 5.0) -> TuningResult:
    """Run (or resume, or skip if finished) one tuning run; returns the tuned moses.ini."""
    work_dir = settings.work_dir
    final_ini = work_dir / "moses.ini"
    made_from = tuning_step(settings)
    if final_ini.is_file() or (settings.resume and read_finished_step(work_dir) is not None):
        _check_same_run(made_from)
    if final_ini.is_file():
        done = iterations_run(work_dir, settings.max_iterations) or 0
        logger.info("%s: already tuned, not re-running", work_dir)
        record(made_from)  # its moses.ini too, from now on (kept if it was recorded already)
        return _result(final_ini, done, settings)
    work_dir.mkdir(parents=True, exist_ok=True)
    if not (settings.resume and read_finished_step(work_dir) is not None):
        record(Step(made_from.name, made_from.record_path, [], made_from.inputs, made_from.settings))  # its start
    # The decoder runs inside work_dir, so the ini it gets names files by absolute path.
    ini = MosesIni.read(settings.ini_path)
    ini.make_paths_absolute(settings.base_dir)
    ini_for_run = work_dir / "input.moses.ini"
    ini.write(ini_for_run)
    dev_src = _plain_copy(settings.dev_set.src_path, work_dir / "dev.src")
    dev_ref = dev_references(settings, work_dir)
    finished = read_finished_step(work_dir)
    resume = settings.resume and finished is not None
    argv = build_mert_argv(moses, settings, ini_for_run.resolve(), dev_src, dev_ref, resume)
    log_path = work_dir / "mert-moses.log"
    logger.info("running %s", " ".join(argv))
    reported = iterations_run(work_dir, settings.max_iterations) or 0
    with open(log_path, "ab") as log, process_group(
            argv, cwd=settings.base_dir, stdout=log, stderr=subprocess.STDOUT) as process:
        while True:
            code = process.poll()
            step = iterations_run(work_dir, settings.max_iterations) or 0
            for iteration in range(reported + 1, step + 1):
                progress(iteration, read_iteration_bleu(work_dir, iteration))
            reported = max(reported, step)
            if code is not None:
                break
            try:  # wake up at once when it exits, else poll the working directory again
                process.wait(timeout=poll_seconds)
            except subprocess.TimeoutExpired:
                pass
    if code != 0 or not final_ini.is_file():
        raise MosesRunError(
            f"mert-moses.pl exited with status {code} after {reported} finished iteration(s)"
            f"{'' if final_ini.is_file() else ' without writing moses.ini'}; see {log_path} "
            "(rerun to continue from the last finished iteration)")
    record(made_from)
    return _result(final_ini, reported, settings)


def tuning_step(settings: TuningSettings) -> Step:
    """What a tuning run is made from: the ini and the files it names, the dev set, the settings
    that change its weights (not the threads: mert's restarts are drawn before its pool starts).
    (Records written before 2026-11-29 also hold "extra_args", always []: a setting no longer
    asked for is not compared, step_provenance.changed.)"""
    ini, dev = settings.ini_path, settings.dev_set
    return Step("the tuning run", settings.work_dir / "tuning.record.json", [settings.work_dir / "moses.ini"],
                {"ini": fingerprint(ini), "ini's files": ini_files(ini, settings.base_dir),
                 "dev source": fingerprint(dev.src_path), "dev references": files_of(dev.ref_paths)},
                {"optimizer": settings.optimizer, "seed": settings.seed,
                 "nbest": settings.nbest_size, "max_iterations": settings.max_iterations,
                 "decoder_flags": list(settings.decoder_flags)})


def _check_same_run(step: Step) -> None:
    """A begun or finished run is continued or reused only with what it began with; else refused,
    not redone: its iterations may have taken hours, and the user decides whether to drop them."""
    reason = changed(step) or damaged(step, only_recorded=True)
    if reason is not None:
        work_dir = step.record_path.parent
        raise MosesConfigError(f"{work_dir}: {reason}; rerun with what it began with, or delete {work_dir} "
                               "to tune again")


def _result(final_ini: Path, iterations: int, settings: TuningSettings) -> TuningResult:
    bleu = read_iteration_bleu(settings.work_dir, iterations) if iterations else None
    if bleu is None:
        bleu = read_ini_bleu(final_ini)
    return TuningResult(final_ini, bleu, iterations, check_tuned_weights(MosesIni.read(final_ini)),
                        read_stop_reason(settings.work_dir))


def check_tuned_weights(tuned: MosesIni, feature: Optional[str] = None,
                        new_columns: Sequence[int] = (),
                        initial_weights: Sequence[float] = ()) -> list[str]:
    """Warnings about weights that suggest tuning did not work: all near zero, or a new
    column's weight still exactly its initial value (the optimizer never moved it)."""
    warnings = []
    weights = tuned.all_weights()
    tunable = [w for name, values in weights.items() if not name.startswith("UnknownWordPenalty")
               for w in values]
    if tunable and max(abs(w) for w in tunable) < 1e-6:
        warnings.append(f"{tuned.origin}: all tuned weights are near zero; tuning likely failed")
    if feature is not None and new_columns:
        values = weights.get(feature, [])
        for column, initial in zip(new_columns, initial_weights):
            if column < len(values) and values[column] == initial:
                warnings.append(
                    f"{tuned.origin}: {feature} column {column + 1} weight is still its initial "
                    f"value {initial}; the optimizer never moved it (suspicious: is the column "
                    "constant, e.g. a word penalty that is always 0?)")
    return warnings
