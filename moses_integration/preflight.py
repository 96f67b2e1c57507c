"""Checks that take seconds and catch what would otherwise fail an hour into tuning: Moses
installed, every file moses.ini names present, the phrase table's score count equal to
num-features, the language model loadable with the order the ini claims, an NPLM model's order
its NeuralLM line's and a Moses that has the NeuralLM feature (one built --with-nplm), and the
dev/test sets parallel and non-empty. Each check returns problems as one line each."""

from __future__ import annotations

import math
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

from rescorer.counts import counted
from rescorer.errors import PhraseTableFormatError, RescorerError
from rescorer.runtime.optional_packages import missing_package_line

from .child_process import run
from .errors import MosesConfigError, MosesNotFoundError, PreflightError
from .ini.moses_ini import MosesIni
from .ini.moses_install import COMPACT_BINARY, TUNING_BINARIES, TUNING_SCRIPTS, MosesInstall, find_moses
from .ini.neural_lm import nplm_order
from .line_files import count_lines
from .tables.phrase_table import read_num_scores

__all__ = [
    "ParallelSet",
    "check_moses",
    "check_ini_syntax",
    "check_ini_files",
    "check_num_features",
    "check_language_models",
    "check_neural_lms",
    "check_neural_lm_support",
    "check_parallel",
    "run_preflight",
]

# Files Moses also accepts in place of `path=` as written (binarized variants, added .gz).
_PATH_VARIANTS = ("", ".gz", ".minphr", ".minlexr", ".binphr.idx", ".binlexr.idx")


@dataclass(frozen=True)
class ParallelSet:
    """A source file and its references, e.g. the dev set; `label` names it in messages. A
    second human translation (`extra_refs`) cuts the noise of a BLEU difference."""

    label: str
    src_path: Path
    ref_path: Path
    extra_refs: tuple = ()

    @property
    def ref_paths(self) -> tuple:
        return (self.ref_path, *self.extra_refs)


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


def check_moses(moses: Union[MosesInstall, Path, None], need_compact: bool = False) -> list[str]:
    """Moses found (or given, found already: its messages then say how), with the binaries and
    scripts mert-moses.pl and decoding need."""
    if not isinstance(moses, MosesInstall):
        try:
            moses = find_moses(moses)
        except MosesNotFoundError as exc:
            return [str(exc)]
    binaries = TUNING_BINARIES + ((COMPACT_BINARY,) if need_compact else ())
    missing = moses.missing(binaries, TUNING_SCRIPTS)
    return [f"Moses at {moses.root} (from {moses.found_by}) lacks {name}" for name in missing]


def _features(ini: MosesIni) -> list:
    """The features, bad tokens skipped (run_preflight reports them once)."""
    return ini.features(problems=[])


def check_ini_syntax(ini: MosesIni) -> list[str]:
    """Feature lines made of key=value tokens, and [weight] lines of finite numbers whose count
    matches num-features= where the feature gives it: Moses refuses to load anything else."""
    problems: list[str] = []
    features = {f.name: f for f in ini.features(problems=problems)}
    for i in ini.section_lines("weight"):
        name, sep, rest = ini.lines[i].partition("=")
        name = name.strip()
        if not sep:
            problems.append(f"{ini.origin}:{i + 1}: expected 'name= weights' in [weight], found "
                            f"{ini.lines[i].strip()!r}")
            continue
        try:
            values = [float(v) for v in rest.split()]
        except ValueError:
            bad = next(v for v in rest.split() if not _is_float(v))
            problems.append(f"{ini.origin}:{i + 1}: expected numbers after '{name}=', found {bad!r}")
            continue
        if not all(math.isfinite(v) for v in values):
            problems.append(f"{ini.origin}:{i + 1}: expected finite weights after '{name}=', "
                            f"found {rest.split()}")
            continue
        feature = features.get(name)
        count = feature.args.get("num-features") if feature is not None else None
        if count is not None and count.isdigit() and int(count) != len(values):
            problems.append(f"{ini.origin}:{i + 1}: expected {counted(int(count), 'weight')} for {name} "
                            f"(num-features={count} on line {feature.line_no + 1}), found {len(values)}")
    return problems


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_ini_files(ini: MosesIni, base_dir: Path) -> list[str]:
    """Every `path=` of a feature exists, resolved against base_dir as Moses would."""
    problems = []
    for feature in _features(ini):
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
    for feature in _features(ini):
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
                f"{table}:1: expected {counted(expected, 'score')} (num-features={expected} in "
                f"{ini.origin}:{feature.line_no + 1}), found {found}")
    return problems


def check_language_models(ini: MosesIni, base_dir: Path) -> list[str]:
    """Each KENLM model loads with the `kenlm` module and has the order= the ini gives."""
    models = [f for f in _features(ini) if f.kind == "KENLM"]
    if not models:
        return []
    try:
        import kenlm
    except ImportError:
        return [missing_package_line("kenlm", "checking the language model")]
    problems = []
    for feature in models:
        path = resolve(feature.args.get("path", ""), base_dir)
        where = f"{ini.origin}:{feature.line_no + 1}"
        if not path.is_file():
            continue  # reported by check_ini_files
        try:
            model = kenlm.Model(str(path))
        except Exception as exc:  # kenlm raises OSError, RuntimeError, UnicodeDecodeError...
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


def _neural_lm_paths(ini: MosesIni, base_dir: Path) -> list[tuple[Path, str, Optional[str]]]:
    """(model file, where, order=) of each NeuralLM line."""
    return [(resolve(f.args.get("path", ""), base_dir), f"{ini.origin}:{f.line_no + 1}", f.args.get("order"))
            for f in _features(ini) if f.kind == "NeuralLM"]


def check_neural_lms(models: Sequence[tuple[Path, str, Optional[str]]]) -> list[str]:
    """Each NPLM model file reads as one (its \\config) and has the order= its NeuralLM line gives
    (Moses' NeuralLMWrapper refuses another, after the tables have loaded). `models`: (file, where
    it is named, the line's order= or None for a model not in the ini yet)."""
    problems = []
    for path, where, order in models:
        if not path.is_file():
            if order is None:  # an ini's own missing file is reported by check_ini_files
                problems.append(f"{where}: NPLM model {path} not found")
            continue
        try:
            found = nplm_order(path)
        except MosesConfigError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if order is not None and order != str(found):
            problems.append(f"{where}: NeuralLM order={order} but {path} is a {found}-gram model "
                            f"(ngram_size {found})")
    return problems


# Moses' own words when its build lacks a feature (moses/FF/Factory.cpp).
_NOT_REGISTERED = "Feature name NeuralLM is not registered"


def check_neural_lm_support(moses: Union[MosesInstall, Path, None], nplm_path: Path) -> list[str]:
    """The decoder knows the NeuralLM feature: `moses -show-weights` on an ini with one NeuralLM
    line (Moses builds its features there but loads no model or table, so this takes
    milliseconds). Only a Moses built --with-nplm registers the feature."""
    if not isinstance(moses, MosesInstall):
        try:
            moses = find_moses(moses)
        except MosesNotFoundError:
            return []  # reported by check_moses
    decoder = moses.binary("moses")
    if not decoder.is_file():
        return []  # reported by check_moses
    try:
        order = nplm_order(nplm_path)
    except MosesConfigError:
        order = 5  # the file is reported by check_neural_lms; -show-weights does not read it
    with tempfile.TemporaryDirectory(prefix="nplm-probe.") as probe_dir:
        probe = Path(probe_dir) / "moses.ini"
        probe.write_text(
            "[feature]\n"
            f"PhraseDictionaryMemory name=TranslationModel0 num-features=1 path={probe_dir}/none "
            "input-factor=0 output-factor=0\n"
            f"NeuralLM factor=0 order={order} path={Path(nplm_path).resolve()} name=NeuralLM0\n\n"
            "[weight]\nTranslationModel0= 1\nNeuralLM0= 0.1\n")
        try:
            done = run([decoder, "-show-weights", "-f", probe], cwd=probe_dir, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [f"{decoder} -show-weights on a NeuralLM line did not run ({exc})"]
    if done.returncode == 0:
        return []
    said = done.stderr.decode("utf-8", "replace") + done.stdout.decode("utf-8", "replace")
    if _NOT_REGISTERED in said:
        return [f"Moses at {moses.root} (from {moses.found_by}) cannot decode with an NPLM model: its "
                f"bin/moses says '{_NOT_REGISTERED}', so it was built without NPLM (rebuild it with "
                "./bjam --with-nplm=NPLM_DIR)"]
    last = next((line.strip() for line in reversed(said.splitlines()) if line.strip()), "no message")
    return [f"{decoder} -show-weights on a NeuralLM line exited with status {done.returncode}: {last}"]


def check_parallel(data: ParallelSet) -> list[str]:
    """Source and references exist, are non-empty and have equal line counts (gzip allowed)."""
    problems, counts = [], []
    for role, path in (("source", data.src_path), *(("reference", path) for path in data.ref_paths)):
        if not path.is_file():
            problems.append(f"{data.label} {role} {path} not found")
            continue
        try:
            count = count_lines(path)
        except (OSError, RescorerError) as exc:
            problems.append(f"{data.label} {role} {path} is unreadable: {exc}")
            continue
        if count == 0:
            problems.append(f"{data.label} {role} {path} is empty")
        counts.append((path, count))
    for path, count in counts[1:]:
        if counts[0][0] == data.src_path and count != counts[0][1] and count and counts[0][1]:
            problems.append(f"{data.label}: {counts[0][0]} has {counted(counts[0][1], 'line')} but "
                            f"{path} has {count}; expected a line-aligned pair")
    return problems


def run_preflight(ini_path: Path, base_dir: Path, moses_dir: Union[MosesInstall, Path, None] = None,
                  data: Sequence[ParallelSet] = (), check_install: bool = True,
                  neural_lms: Sequence[Path] = ()) -> list[str]:
    """All checks; returns the problems (empty when ready). Raise them with `PreflightError`.
    `neural_lms`: NPLM models the run will add to the ini as NeuralLM features (the ablation's
    decoding rows), checked like the ini's own.

    Every check runs whatever the others found: an unreadable ini still leaves the
    installation and the data sets checked, and a check that fails unexpectedly is one line."""
    try:
        ini: Optional[MosesIni] = MosesIni.read(ini_path)
        problems: list[str] = []
    except MosesConfigError as exc:
        ini, problems = None, [str(exc)]
    need_compact = ini is not None and any(f.kind == "PhraseDictionaryCompact" for f in _features(ini))
    models = (_neural_lm_paths(ini, base_dir) if ini is not None else []) + [
        (Path(path), "--nplm", None) for path in neural_lms]
    checks = [("Moses installation", check_moses, (moses_dir, need_compact))] if check_install else []
    if check_install and models:
        checks.append(("NeuralLM support", check_neural_lm_support, (moses_dir, models[0][0])))
    if ini is not None:
        checks += [("moses.ini syntax", check_ini_syntax, (ini,)),
                   ("moses.ini paths", check_ini_files, (ini, base_dir)),
                   ("phrase-table scores", check_num_features, (ini, base_dir)),
                   ("language models", check_language_models, (ini, base_dir))]
    if models:
        checks.append(("NPLM models", check_neural_lms, (models,)))
    checks += [(f"{item.label} set", check_parallel, (item,)) for item in data]
    for label, check, args in checks:
        try:
            problems += check(*args)
        except Exception as exc:  # one check's surprise must not hide the others' results
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problems.append(f"{label}: could not be checked ({first})")
    return problems


def require_preflight(*args, **kwargs) -> None:
    """`run_preflight`, raising PreflightError if anything failed."""
    problems = run_preflight(*args, **kwargs)
    if problems:
        raise PreflightError(problems)
