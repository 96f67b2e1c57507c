"""Small real Moses systems for the ablation tests: the real model/moses.ini on a slice of the
real phrase table (the bundled example: 4,000 lines spread over the whole table) and of the real
reordering table, with rescored copies in the layouts `rescore score` writes."""

import gzip
import itertools
import math
from functools import lru_cache
from pathlib import Path

from moses_integration.ini.moses_ini import MosesIni
from tests.fake_moses import FIXTURES
from tests.helpers import EXAMPLE_TABLE  # noqa: E402  (re-exported for the moses tests)

REORDERING = FIXTURES / "model/reordering-table.wbe-msd-bidirectional-fe.gz"


@lru_cache(maxsize=1)
def reordering_slice() -> bytes:
    """Every 500th line of the real reordering table (4,468 lines), gzipped."""
    with gzip.open(REORDERING, "rb") as table:
        return gzip.compress(b"".join(itertools.islice(table, 0, None, 500)), mtime=0)


def model_score(i: int) -> str:
    """A model column's value on line i: exp(log p), log p from -1 to -17."""
    return f"{math.exp(-(i % 17) - 1):.6g}"


def penalty(i: int) -> str:
    """The word-penalty column's value on line i: exp(count), the count 0 or 1."""
    return f"{math.exp(i % 2):.6g}"


def small_system(tmp_path: Path, num_lines: int = 300, new_columns=(model_score, penalty)) -> tuple:
    """moses.ini (absolute paths) over the first lines of the example table, and a rescored copy
    with `new_columns` appended to each line's scores."""
    base, rescored = tmp_path / "pt.gz", tmp_path / "pt.rescored.gz"
    with gzip.open(EXAMPLE_TABLE, "rb") as src, \
            gzip.open(base, "wb") as out_base, gzip.open(rescored, "wb") as out_resc:
        for i in range(num_lines):
            line = next(src)
            out_base.write(line)
            fields = line.split(b" ||| ")
            fields[2] += "".join(f" {column(i)}" for column in new_columns).encode()
            out_resc.write(b" ||| ".join(fields))
    reordering = tmp_path / "reordering-table.gz"
    reordering.write_bytes(reordering_slice())
    ini = MosesIni.read(FIXTURES / "model/moses.ini")
    ini.make_paths_absolute(FIXTURES)
    ini.set_feature_arg(ini.phrase_table(), "path", str(base))
    ini.set_feature_arg(ini.feature("LexicalReordering0"), "path", str(reordering))
    ini.write(tmp_path / "moses.ini")
    return tmp_path / "moses.ini", rescored


def expected_starts(table, weights, kinds):
    """The README's rule written out: C = mean |w_i| m_i over the ini's columns; a model column
    starts at C / m, the word penalty at -C / m over its non-zero lines (3 significant digits)."""
    logs = [[abs(max(math.log(max(float(v), 1e-300)), -100.0)) for v in line.split(b" ||| ")[2].split()]
            for line in gzip.open(table, "rb").read().splitlines()]
    columns = list(zip(*logs))
    c = sum(abs(w) * sum(columns[i]) / len(logs) for i, w in enumerate(weights)) / len(weights)
    starts = []
    for offset, kind in enumerate(kinds):
        values = columns[len(weights) + offset]
        if kind == "wp":
            nonzero = [v for v in values if v > 1e-12]
            starts.append(-float(f"{c / (sum(nonzero) / len(nonzero) if nonzero else 1):.3g}"))
        else:
            starts.append(float(f"{c / (sum(values) / len(values)):.3g}"))
    return starts
