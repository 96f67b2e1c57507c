"""Why MERT finds little use for a new phrase-table column: within each dev sentence's n-best
list, the Spearman correlation of every dense feature with sentence BLEU (how well the feature
alone tells the better hypotheses apart), and of the new columns with the table's own four.
Means over the sentences whose list varies. Used by docs/phrase-feature-study.md.

    python3 benchmarks/studies/nbest_correlation.py mert/run4.best100.out.gz --source dev.en mert/dev.ref0 mert/dev.ref1
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import pandas as pd

from moses_integration.evaluation.scores import sentence_bleu
from moses_integration.nbest.candidates import read_nbest
from moses_integration.line_files import read_lines

TABLE_COLUMNS = ["p(f|e)", "lex(f|e)", "p(e|f)", "lex(e|f)"]


def readable(name: str) -> str:
    """TranslationModel0_2 -> p(e|f); TranslationModel0_4 -> new column 1."""
    if name.startswith("TranslationModel0_"):
        index = int(name.rsplit("_", 1)[1])
        return TABLE_COLUMNS[index] if index < 4 else f"new column {index - 3}"
    return name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nbest", type=Path, help="a Moses n-best list of the dev set")
    parser.add_argument("--source", type=Path, required=True,
                        help="the decoder's input: every line of the list is checked against it")
    parser.add_argument("refs", type=Path, nargs="+", help="the dev references, line-aligned")
    args = parser.parse_args()
    refs = [read_lines(path) for path in args.refs]
    with_bleu, with_table = defaultdict(list), defaultdict(list)
    for sentence, hypotheses in enumerate(read_nbest(args.nbest, read_lines(args.source), str(args.source))):
        if not hypotheses:
            continue
        frame = pd.DataFrame([dict(h.features) for h in hypotheses]).rename(columns=readable)
        frame["BLEU"] = [sentence_bleu(h.words, [ref[sentence] for ref in refs]) for h in hypotheses]
        ranks = frame.loc[:, frame.nunique() > 1].rank()  # Spearman = Pearson of the ranks
        if "BLEU" not in ranks or len(ranks) < 5:
            continue
        correlations = ranks.corr()
        for name in correlations.columns.drop("BLEU"):
            with_bleu[name].append(correlations.at[name, "BLEU"])
            if name.startswith("new column"):
                for column in TABLE_COLUMNS:
                    if column in correlations:
                        with_table[(name, column)].append(correlations.at[name, column])
    print("mean within-sentence Spearman with sentence BLEU (sentences):")
    for name, values in sorted(with_bleu.items(), key=lambda item: -pd.Series(item[1]).mean()):
        print(f"  {name:20s} {pd.Series(values).mean():+.3f} ({len(values)})")
    print("mean within-sentence Spearman of each new column with the table's columns:")
    for (name, column), values in sorted(with_table.items()):
        print(f"  {name} with {column:9s} {pd.Series(values).mean():+.3f}")


if __name__ == "__main__":
    main()
