"""The ablation's decoding rows: Cho et al.'s Table 1 with the CSLM in the decoder's search, as
the paper used it, beside its n-best reranking (reranked_rows.py). The CSLM exported in NPLM's
format (`rescore export-nplm`) becomes Moses' NeuralLM feature in the inis of Baseline, +RNN and
+RNN+WP (or of Baseline and the --system ones); each such system, +CSLM(dec), +CSLM(dec)+RNN and
+CSLM(dec)+RNN+WP, is tuned by MERT, replicate r starting from the same replicate of the system
it extends (warm; cold: from that system's cold-start ini) plus the NeuralLM's starting weight
(ini/neural_lm.py), then decoded on test and scored like every other system.

`--system +CSLM(dec)+RNN` asks for that row alone; the system it extends is built too (its
finished replicates are reused, as always), since its tuned weights start the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ..errors import MosesConfigError
from ..ini.moses_ini import MosesIni
from ..ini.neural_lm import DEFAULT_NAME, add_neural_lm_line, neural_lm_start
from ..tables.columns import SystemSpec

__all__ = ["DECODING_TAG", "NEURAL_LM", "DecodingRow", "built_systems", "decoding_row_name", "extended_system",
           "neural_lm_ini", "plan_decoding_rows"]

DECODING_TAG = "+CSLM(dec)"
NEURAL_LM = DEFAULT_NAME  # the feature's name in the rows' inis: NeuralLM0, as Moses names the first
_DEFAULT_EXTENDED = ("+RNN", "+RNN+WP")  # besides Baseline, as the CSLM's reranked rows


@dataclass(frozen=True)
class DecodingRow:
    """A decoding row: `spec` its name, the columns of the system it extends and its own
    directory; `base` that system, whose tuned replicate r starts the row's replicate r."""

    spec: SystemSpec
    base: SystemSpec


def decoding_row_name(system: str) -> str:
    """+CSLM(dec) for Baseline, +CSLM(dec)+RNN for +RNN: the reranked rows' names, marked."""
    return DECODING_TAG if system == "Baseline" else f"{DECODING_TAG}{system}"


def extended_system(name: str) -> Optional[str]:
    """The system a decoding row's name extends (+CSLM(dec)+RNN: +RNN), or None for another name."""
    if not name.startswith(DECODING_TAG):
        return None
    return name[len(DECODING_TAG):] or "Baseline"


def built_systems(wanted: Optional[Sequence[str]]) -> Optional[list]:
    """The --system names with each decoding row replaced by the system it extends (None: all)."""
    if not wanted:
        return None
    return list(dict.fromkeys(extended_system(name) or name for name in wanted))


def plan_decoding_rows(specs: Sequence[SystemSpec], wanted: Optional[Sequence[str]],
                       nplm: Optional[Path]) -> list[DecodingRow]:
    """The rows: those --system names, else Baseline, +RNN and +RNN+WP (or Baseline and the
    --system ones) among the built `specs`; none without an NPLM model."""
    asked = [name for name in wanted or () if extended_system(name) is not None]
    if nplm is None:
        if asked:
            raise MosesConfigError(f"system(s) {', '.join(asked)} decode with the CSLM as Moses' NeuralLM: "
                                   "give its NPLM export with --nplm (rescore export-nplm)")
        return []
    by_name = {spec.name: spec for spec in specs}
    if asked:
        extended = [extended_system(name) for name in asked]
    else:
        extended = ["Baseline", *(built_systems(wanted) or _DEFAULT_EXTENDED)]
    extended = [name for name in _in_table_order(specs, extended) if name in by_name]
    rows = []
    taken = {spec.slug for spec in specs}
    for name in extended:
        base = by_name[name]
        slug = "cslm-dec" if name == "Baseline" else f"cslm-dec-{base.slug}"
        if slug in taken:
            raise MosesConfigError(f"system {decoding_row_name(name)}'s directory name {slug!r} is taken by "
                                   "another system; rename the columns with --new-columns")
        rows.append(DecodingRow(SystemSpec(decoding_row_name(name), base.new_columns, slug), base))
    return rows


def _in_table_order(specs: Sequence[SystemSpec], names: Sequence[str]) -> list:
    """`names` in the order of the systems (so the rows follow the table), each once."""
    order = {spec.name: i for i, spec in enumerate(specs)}
    return sorted(dict.fromkeys(names), key=lambda name: order.get(name, len(order)))


def neural_lm_ini(system_ini: MosesIni, nplm_path: Path, initial_weight: Optional[float]) -> MosesIni:
    """A system's ini (absolute paths) with the NeuralLM line, the model by absolute path, and its
    starting weight: `initial_weight`, else that of the ini's n-gram language model."""
    ini = MosesIni(system_ini.text(), origin=system_ini.origin)
    add_neural_lm_line(ini, nplm_path, str(nplm_path.resolve()), NEURAL_LM,
                       neural_lm_start(system_ini, initial_weight))
    return ini
