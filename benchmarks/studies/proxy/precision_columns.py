"""How far a model's column moves with the scoring precision, in the figures `--precision auto`
checks (mean |delta log p| and the share of sources whose best target is kept), over the pairs the
proxy bench uses: the same table scored by the same models in fp32, then bf16, then int8, so that
the proxy's BLEU of each column can be set beside these figures (docs/proxy-study.md).

    python benchmarks/studies/proxy/precision_columns.py WORK/scored-3prec.gz fwd=5,12,16 inv=6,13,17 \
        > benchmarks/studies/proxy/results/precision/columns.tsv

A MODEL=FP32,BF16,INT8 argument names the table's score columns (1 the first) of one model's
log p written as probabilities, as `rescore score` writes them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from moses_integration.proxy.phrase_columns import table_entries  # noqa: E402
from rescorer.counts import counted  # noqa: E402
from rescorer.errors import RescorerError  # noqa: E402
from rescorer.scoring.precision_check import MAX_MEAN_DELTA, MIN_BEST_KEPT, compare  # noqa: E402


def parse_model(text: str) -> tuple[str, list[int]]:
    name, sep, columns = text.partition("=")
    indices = [int(column) for column in columns.split(",")] if sep else []
    if not name or len(indices) != 3 or min(indices) < 1:
        raise SystemExit(f"precision_columns.py: {text!r}: expected MODEL=FP32,BF16,INT8 (score columns, 1 the first)")
    return name, indices


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    table, models = Path(sys.argv[1]), [parse_model(text) for text in sys.argv[2:]]
    sources, scores = [], []
    try:
        for source, _, scores_field, _ in table_entries(table):  # every line checked, as the proxy reads tables
            sources.append(source)
            scores.append([float(value) for value in scores_field.split()])
    except RescorerError as error:
        raise SystemExit(f"precision_columns.py: {error}") from None
    num_scores = len(scores[0]) if scores else 0
    for name, columns in models:
        if max(columns) > num_scores:
            raise SystemExit(f"precision_columns.py: {name}={','.join(map(str, columns))}: {table} has "
                             f"{counted(num_scores, 'score')} a line")
    log_p = np.log(np.asarray(scores, dtype=np.float64))
    print(f"model\tprecision\tpairs\tmean |delta log p|\tbest target kept\tsources with 2+ targets\t"
          f"within auto's bounds ({MAX_MEAN_DELTA}, {MIN_BEST_KEPT:.0%})")
    for name, (fp32, *others) in models:
        for precision, column in zip(("bf16", "int8"), others):
            check = compare(name, log_p[:, fp32 - 1], log_p[:, column - 1], sources)
            print(f"{name}\t{precision}\t{check.pairs}\t{check.mean_delta:.4f}\t{check.best_kept:.4f}\t"
                  f"{check.sources}\t{'yes' if check.passed else 'no'}")


if __name__ == "__main__":
    main()
