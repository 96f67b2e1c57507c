"""Checks that take seconds and catch what would otherwise fail an hour into tuning: Moses
installed, every file moses.ini names present, the phrase table's score count equal to
num-features, the language model loadable with the order the ini claims, and the dev/test
sets parallel and non-empty. Each check returns problems as one line each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from rescorer.errors import PhraseTableFormatError

from .errors import MosesConfigError, MosesNotFoundError, PreflightError
from .moses_install import COMPACT_BINARY, TUNING_BINARIES, TUNING_SCRIPTS, find_moses
from .moses_ini import MosesIni
from .phrase_table import read_num_scores
from .textio import count_lines

__all__ = [
    "ParallelSet",
    "check_moses",
    "check_ini_files",
    "check_num_features",
    "check_language_models",
    "check_parallel",
    "run_preflight",
]

# Files Moses also accepts in place of `path=` as written (binarized variants, added .gz).
_PATH_VARIANTS = ("", ".gz", ".minphr", ".minlexr", ".binphr.idx", ".binlexr.idx")


@dataclass(frozen=True)
class ParallelSet:
    """A source file and its reference, e.g. the dev set; `label` names it in messages."""

    label: str
    src_path: Path
    ref_path: Path


def resolve(path: str, base_dir: Path) -> Path:
    """A moses.ini path as Moses sees it: relative paths are relative to the decoder's cwd."""
    candidate = Path(path)
    return candidate if candidate.is_absolute() else base_dir / candidate


def _existing(path: Path) -> Optional[Path]:
    for suffix in _PATH_VARIANTS:
        candidate = path.with_name(path.name + suffix)
        if candidate.exists():
            return candidate
    return None


def check_moses(moses_dir: Optional[Path], need_compact: bool = False) -> list[str]:
    """Moses found, with the binaries and scripts mert-moses.pl and decoding need."""
    try:
        moses = find_moses(moses_dir)
    except MosesNotFoundError as exc:
        return [str(exc)]
    binaries = TUNING_BINARIES + ((COMPACT_BINARY,) if need_compact else ())
    missing = moses.missing(binaries, TUNING_SCRIPTS)
    return [f"Moses at {moses.root} (from {moses.found_by}) lacks {name}" for name in missing]


def check_ini_files(ini: MosesIni, base_dir: Path) -> list[str]:
    """Every `path=` of a feature exists, resolved against base_dir as Moses would."""
    problems = []
    for feature in ini.features():
        path = feature.args.get("path")
        if path is None or _existing(resolve(path, base_dir)) is not None:
            continue
        hint = ""
        for parent in list(Path(ini.origin).resolve().parents)[:2]:
            if parent != base_dir.resolve() and _existing(resolve(path, parent)):
                hint = f"; it exists relative to {parent}: pass --base-dir {parent}"
                break
        problems.append(
            f"{ini.origin}:{feature.line_no + 1}: {feature.name} path={path} not found "
            f"(relative paths resolve against --base-dir {base_dir}, like Moses' working "
            f"directory){hint}")
    return problems


def check_num_features(ini: MosesIni, base_dir: Path) -> list[str]:
    """A text phrase table's first line has as many scores as num-features= says."""
    problems = []
    for feature in ini.features():
        if feature.kind != "PhraseDictionaryMemory" or "path" not in feature.args:
            continue
        table = _existing(resolve(feature.args["path"], base_dir))
        if table is None:
            continue  # reported by check_ini_files
        try:
            expected = feature.int_arg("num-features", ini.origin)
            found = read_num_scores(table)
        except (MosesConfigError, PhraseTableFormatError) as exc:
            problems.append(str(exc))
            continue
        if found != expected:
            problems.append(
                f"{table}:1: expected {expected} scores (num-features={expected} in "
                f"{ini.origin}:{feature.line_no + 1}), found {found}")
    return problems


def check_language_models(ini: MosesIni, base_dir: Path) -> list[str]:
    """Each KENLM model loads with the `kenlm` module and has the order= the ini gives."""
    models = [f for f in ini.features() if f.kind == "KENLM"]
    if not models:
        return []
    try:
        import kenlm
    except ImportError:
        return ["cannot check the language model: the kenlm Python module is not installed "
                "(pip install kenlm, or pip install 'rescorer[moses]')"]
    problems = []
    for feature in models:
        path = resolve(feature.args.get("path", ""), base_dir)
        where = f"{ini.origin}:{feature.line_no + 1}"
        if not path.is_file():
            continue  # reported by check_ini_files
        try:
            model = kenlm.Model(str(path))
        except (OSError, RuntimeError) as exc:
            problems.append(f"{where}: {feature.name} {path} does not load with kenlm: "
                            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        order = feature.args.get("order")
        if order is None or not order.isdigit():
            problems.append(f"{where}: expected order=<integer> on the {feature.name} line, found {order!r}")
        elif int(order) != model.order:
            problems.append(f"{where}: {feature.name} order={order} but {path} is a "
                            f"{model.order}-gram model")
    return problems


def check_parallel(data: ParallelSet) -> list[str]:
    """Source and reference exist, are non-empty and have equal line counts (gzip allowed)."""
    problems, counts = [], []
    for role, path in (("source", data.src_path), ("reference", data.ref_path)):
        if not path.is_file():
            problems.append(f"{data.label} {role} {path} not found")
            continue
        try:
            count = count_lines(path)
        except (OSError, EOFError) as exc:
            problems.append(f"{data.label} {role} {path} is unreadable: {exc}")
            continue
        if count == 0:
            problems.append(f"{data.label} {role} {path} is empty")
        counts.append((path, count))
    if len(counts) == 2 and counts[0][1] != counts[1][1] and counts[0][1] and counts[1][1]:
        problems.append(f"{data.label}: {counts[0][0]} has {counts[0][1]} lines but "
                        f"{counts[1][0]} has {counts[1][1]}; expected a line-aligned pair")
    return problems


def run_preflight(ini_path: Path, base_dir: Path, moses_dir: Optional[Path] = None,
                  data: Sequence[ParallelSet] = (), check_install: bool = True) -> list[str]:
    """All checks; returns the problems (empty when ready). Raise them with `PreflightError`."""
    try:
        ini = MosesIni.read(ini_path)
    except MosesConfigError as exc:
        return [str(exc)]
    need_compact = any(f.kind == "PhraseDictionaryCompact" for f in ini.features())
    problems = check_moses(moses_dir, need_compact) if check_install else []
    problems += check_ini_files(ini, base_dir)
    problems += check_num_features(ini, base_dir)
    problems += check_language_models(ini, base_dir)
    for item in data:
        problems += check_parallel(item)
    return problems


def require_preflight(*args, **kwargs) -> None:
    """`run_preflight`, raising PreflightError if anything failed."""
    problems = run_preflight(*args, **kwargs)
    if problems:
        raise PreflightError(problems)
