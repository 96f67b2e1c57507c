"""Tune n-best reranking weights with Moses' own tools, as mert-moses.pl runs them for one
iteration: `extractor` turns an n-best list into feature and BLEU-statistics files, then `mert`
(Och's line search with random restarts) or `kbmira` (batch MIRA, Cherry and Foster 2012)
finds the weights. Weights come back by the extractor's feature names (`LM0_0`, ...).

mert reads its start from `init.opt` (weights, then the random restarts' lower and upper
bounds, 0 and 1 as mert-moses.pl sets them) and logs `Best point: w1 .. wn => BLEU`; kbmira
reads `Name= value` lines and writes `F<i> weight` lines, which are scaled to sum |w| = 1 as
mert-moses.pl does (get_weights_from_mert).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from rescorer.counts import counted
from rescorer.io.atomic_output import atomic_paths, write_atomically

from ..child_process import process_group
from ..errors import MosesRunError
from ..ini.moses_install import MosesInstall
from ..line_files import open_binary_read

__all__ = ["TunedWeights", "extract", "feature_names", "tune_weights", "tune_in_numpy", "OPTIMIZERS"]

OPTIMIZERS = ("mert", "kbmira")
SCORER_ARGS = ("--sctype", "BLEU", "--scconfig", "case:true")  # mert-moses.pl's defaults
_MERT_BEST = re.compile(r"Best point:\s*([\s\d.\-e]+?)\s*=> ([\-\d.]+)")
_MIRA_BEST = re.compile(r"Best BLEU = ([\-\d.]+)")
_MIRA_WEIGHT = re.compile(r"^F(\d+) ([\-.\de]+)")


@dataclass(frozen=True)
class TunedWeights:
    weights: dict  # extractor name -> weight
    dev_bleu: float  # the optimizer's own dev BLEU (0-100) of the reranked list


def _run(argv: Sequence[str], cwd: Path, log_path: Path, stdout_path: Path) -> None:
    with open(stdout_path, "wb") as out, open(log_path, "wb") as log, \
            process_group([str(a) for a in argv], cwd=cwd, stdout=out, stderr=log) as process:
        code = process.wait()
    if code != 0:
        raise MosesRunError(f"{Path(argv[0]).name} exited with status {code}; see {log_path}")


def extract(install: MosesInstall, nbest_path: Path, ref_paths: Sequence[Path], features_path: Path,
            scores_path: Path) -> None:
    """`extractor --scfile S --ffile F -r REF0,REF1 -n NBEST`; both files appear only once complete."""
    with atomic_paths(features_path, scores_path) as (features, scores):
        argv = [install.binary("extractor"), *SCORER_ARGS, "--scfile", scores.resolve(),
                "--ffile", features.resolve(), "-r", ",".join(str(Path(r).resolve()) for r in ref_paths),
                "-n", Path(nbest_path).resolve()]
        _run(argv, features_path.parent, features_path.with_name("extract.log"),
             features_path.with_name("extract.out"))


def feature_names(features_path: Path) -> list[str]:
    """The names on the extractor's first header line: `FEATURES_TXT_BEGIN_0 id count dims names...`."""
    with open_binary_read(features_path) as handle:
        header = handle.readline().decode("utf-8").split()
    if len(header) < 5 or header[0] != "FEATURES_TXT_BEGIN_0" or len(header) - 4 != int(header[3]):
        raise MosesRunError(f"{features_path}:1: not an extractor feature file (header {' '.join(header[:5])!r})")
    return header[4:]


def _start_values(names: Sequence[str], start: Mapping[str, float]) -> list[float]:
    """The starting weight of each feature, in the files' order; one line naming any without one."""
    missing = [name for name in names if name not in start]
    if missing:
        raise MosesRunError(f"no starting weight for {', '.join(missing)}")
    return [start[name] for name in names]


def tune_in_numpy(features_path: Path, scores_path: Path, start: Mapping[str, float], seed: int,
                  restarts: int = 20, optimizer: str = "mert") -> TunedWeights:
    """What `mert` does with the extractor's files, by this package's MERT in numpy
    (mert_search.optimize: the same search, restarts uniform in [0, 1], sum |w| = 1); with
    `optimizer` "pro", Hopkins and May's PRO (pro_search.optimize_pro: `seed` draws its pairs,
    which need no start)."""
    import numpy as np

    from .extractor_files import read_extractor_files
    from .mert_search import optimize
    from .pro_search import optimize_pro

    arrays = read_extractor_files([features_path], [scores_path])
    initial = np.array(_start_values(arrays.names, start))
    if optimizer == "pro":
        result = optimize_pro(arrays, seed)
    elif optimizer == "mert":
        result = optimize(arrays, initial, restarts=restarts, seed=seed)
    else:
        raise ValueError(f"optimizer must be mert or pro in numpy, found {optimizer!r}")
    return TunedWeights(dict(zip(arrays.names, map(float, result.weights))), round(100 * result.bleu, 4))


def _base(name: str) -> str:
    return name.rsplit("_", 1)[0]


def tune_weights(install: MosesInstall, optimizer: str, features_path: Path, scores_path: Path,
                 start: Mapping[str, float], seed: int, work_dir: Path, restarts: int = 20) -> TunedWeights:
    """Run mert or kbmira in `work_dir` from the `start` weights (one per feature name)."""
    names = feature_names(features_path)
    _start_values(names, start)
    work_dir.mkdir(parents=True, exist_ok=True)
    files = ["--ffile", Path(features_path).resolve(), "--scfile", Path(scores_path).resolve()]
    log = work_dir / f"{optimizer}.log"
    if optimizer == "mert":
        write_atomically(work_dir / "init.opt", (" ".join(f"{start[n]:g}" for n in names) + "\n"
                                                 + " ".join("0" for _ in names) + "\n"
                                                 + " ".join("1" for _ in names) + "\n").encode())
        _run([install.binary("mert"), "-d", len(names), *SCORER_ARGS, *files, "--ifile", "init.opt",
              "-n", restarts, "-r", seed], work_dir, log, work_dir / "mert.out")
        found = _MERT_BEST.search(log.read_text(errors="replace"))
        if not found:
            raise MosesRunError(f"{log}: no 'Best point' line")
        values = [float(v) for v in found.group(1).split()]
        bleu = float(found.group(2))
    elif optimizer == "kbmira":
        write_atomically(work_dir / "init.dense", "".join(f"{_base(n)}= {start[n]:f}\n" for n in names).encode())
        _run([install.binary("kbmira"), *SCORER_ARGS, "--dense-init", "init.dense", *files, "-r", seed,
              "-o", "mira.weights"], work_dir, log, work_dir / "kbmira.out")
        values = [0.0] * len(names)
        for line in (work_dir / "mira.weights").read_text().splitlines():
            match = _MIRA_WEIGHT.match(line)
            if match and int(match.group(1)) < len(names):
                values[int(match.group(1))] = float(match.group(2))
        total = sum(abs(v) for v in values)
        if total < 1e-9:
            raise MosesRunError(f"{work_dir / 'mira.weights'}: no usable weights")
        values = [v / total for v in values]
        found = _MIRA_BEST.search(log.read_text(errors="replace"))
        bleu = float(found.group(1)) if found else float("nan")
    else:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, found {optimizer!r}")
    if len(values) != len(names):
        raise MosesRunError(f"{log}: {counted(len(values), 'weight')} for {counted(len(names), 'feature')}")
    return TunedWeights(dict(zip(names, values)), round(100 * bleu, 4))
