"""`moses add-feature --nplm`: add an NPLM language model (`rescore export-nplm`) to a moses.ini as
Moses' `NeuralLM` feature, the line Moses' own scripts/training/create_nplm_ini.py writes:

    NeuralLM factor=0 order=N path=MODEL.nplm name=NAME        ([feature])
    NAME= 0.1                                                  ([weight])

Moses' NeuralLMWrapper refuses a model whose ngram_size is not the line's order, so the order
is read from the file's own \\config. Nothing else in the ini changes.

The ablation's decoding rows (study/decoding_rows.py) add the same line to each system's ini.
Their NeuralLM starts with the weight of the ini's n-gram language model (neural_lm_start): the two
score the same thing, the log-probability of the target words, in the same units, where a fixed
0.1 ignores what the system was tuned to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import MosesConfigError
from .moses_ini import Feature, MosesIni

__all__ = ["DEFAULT_NAME", "DEFAULT_WEIGHT", "NGRAM_LM_KINDS", "NeuralLmJob", "add_neural_lm", "add_neural_lm_line",
           "neural_lm_start", "nplm_order"]

DEFAULT_NAME = "NeuralLM0"  # what Moses calls the first NeuralLM line without name=
DEFAULT_WEIGHT = 0.1  # create_nplm_ini.py's
NGRAM_LM_KINDS = ("KENLM", "SRILM", "IRSTLM", "RANDLM", "DALM")  # Moses' n-gram language model features


@dataclass(frozen=True)
class NeuralLmJob:
    """What `moses add-feature --nplm` was asked; the paths are the caller's (relative to the cwd)."""

    ini_path: Path
    nplm_path: Path
    out_path: Path
    base_dir: Path  # what the ini's relative paths are relative to
    name: Optional[str] = None  # default DEFAULT_NAME
    initial_weight: Optional[float] = None  # default DEFAULT_WEIGHT


def nplm_order(path: Path) -> int:
    """The ngram_size of an NPLM model file's \\config (read no further)."""
    try:
        with open(path, encoding="utf-8") as file:
            first = file.readline().rstrip("\r\n")
            if first != "\\config":
                raise MosesConfigError(f"{path}:1: not an NPLM model file (expected \\config, found {first[:40]!r})")
            for number, line in enumerate(file, 2):
                fields = line.split()
                if not fields:
                    break
                if fields[0] == "ngram_size":
                    if len(fields) != 2 or not fields[1].isdigit() or int(fields[1]) < 2:
                        raise MosesConfigError(f"{path}:{number}: expected ngram_size <order of 2 or more>, "
                                               f"found {line.strip()[:40]!r}")
                    return int(fields[1])
    except UnicodeDecodeError:
        raise MosesConfigError(f"{path}: not an NPLM model file (not UTF-8 text)") from None
    except OSError as error:
        raise MosesConfigError(f"{path}: cannot read the NPLM model file ({error.strerror or error})") from None
    raise MosesConfigError(f"{path}: its \\config gives no ngram_size")


def _shown(path: Path, base_dir: Path) -> str:
    """Relative to base_dir when the file lies under it, like the ini's other paths."""
    try:
        return str(path.resolve().relative_to(base_dir.resolve()))
    except ValueError:
        return str(path.resolve())


def add_neural_lm_line(ini: MosesIni, nplm_path: Path, shown_path: str, name: str, weight: float) -> Feature:
    """Add `NeuralLM factor=0 order=N path=SHOWN name=NAME` and `NAME= WEIGHT` to `ini` (in place),
    N the model file's own ngram_size."""
    if not name or any(char.isspace() for char in name) or "=" in name:
        raise MosesConfigError(f"feature name {name!r}: Moses takes a name without spaces or '='")
    order = nplm_order(nplm_path)
    feature = ini.add_feature_line("NeuralLM", {"factor": "0", "order": str(order), "path": shown_path,
                                                "name": name}, [weight])
    ini.check_weights(name)
    return feature


def neural_lm_start(ini: MosesIni, override: Optional[float] = None) -> float:
    """The NeuralLM's starting weight in a system: `override` when given, else the weight of the
    ini's n-gram language model when it has exactly one, else create_nplm_ini.py's 0.1."""
    if override is not None:
        return override
    models = [feature for feature in ini.features() if feature.kind in NGRAM_LM_KINDS]
    if len(models) != 1:
        return DEFAULT_WEIGHT
    weights = ini.weights(models[0].name)
    return weights[0] if len(weights) == 1 and weights[0] != 0 else DEFAULT_WEIGHT


def add_neural_lm(job: NeuralLmJob) -> str:
    """Write `job.out_path`: the ini with the NeuralLM line and its weight; a one-line summary."""
    name = job.name or DEFAULT_NAME
    ini = MosesIni.read(job.ini_path)
    weight = DEFAULT_WEIGHT if job.initial_weight is None else job.initial_weight
    feature = add_neural_lm_line(ini, job.nplm_path, _shown(job.nplm_path, job.base_dir), name, weight)
    ini.write(job.out_path, force=True)
    return (f"{job.out_path}: {ini.lines[feature.line_no].strip()} (line {feature.line_no + 1}), "
            f"{name}= {weight:g}")
