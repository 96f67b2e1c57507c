"""The proxy bench's pairs, checked against what Moses printed: for the stored dev and test lists,
how many distinct phrase pairs the hypotheses use, how many the phrase table holds (the rest
must be unknown words passed through), and the largest difference between the table's four
scores summed over each hypothesis's rebuilt pairs and the TranslationModel0 features Moses
printed for it (6 significant digits).

    python benchmarks/studies/proxy/pair_check.py > benchmarks/studies/proxy/results/pair_check.tsv
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from moses_integration.line_files import read_lines  # noqa: E402
from moses_integration.nbest.nbest_file import read_nbest_list  # noqa: E402
from moses_integration.proxy.phrase_columns import (column_sums, is_passed_through,  # noqa: E402
                                                    phrase_pairs_of, read_table_columns, table_column)

DATA = HERE.parents[3] / "shared" / "data" / "bible-en-fr"


def main() -> None:
    lists = {side: read_nbest_list(DATA / f"nbest/{side}.nbest200.gz", read_lines(DATA / f"corpus/{side}.en.gz"))
             for side in ("dev", "test")}
    pairs = {side: phrase_pairs_of(nbest) for side, nbest in lists.items()}
    wanted = set(pairs["dev"].pairs) | set(pairs["test"].pairs)
    num_scores, found = read_table_columns(DATA / "model/phrase-table.gz", wanted)
    missing = [pair for pair in wanted if pair not in found]
    print("what\tvalue")
    print(f"distinct pairs (dev and test)\t{len(wanted)}")
    print(f"in the phrase table\t{len(found)}")
    print(f"not in it, unknown words passed through\t{sum(map(is_passed_through, missing))}")
    print(f"not in it, other\t{sum(not is_passed_through(pair) for pair in missing)}")
    for side, nbest in lists.items():
        for column in range(num_scores):
            sums = column_sums(nbest, pairs[side], table_column(found, column), "tm", "phrase-table.gz")
            printed = nbest.features[:, nbest.feature_names.index(f"TranslationModel0_{column}")]
            print(f"{side}: max |sum - TranslationModel0_{column}| over {len(sums)} hypotheses\t"
                  f"{np.abs(sums - printed).max():.3g}")


if __name__ == "__main__":
    main()
