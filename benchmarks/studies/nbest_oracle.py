"""The headroom of a reranker: the corpus BLEU of an n-best list's oracle (each sentence's
hypothesis of best sentence BLEU against the references) beside its 1-best. If the oracle is far
above the 1-best, the lists hold better translations and a reranker's features are what limit
it. Used by docs/moses.md.

    python3 benchmarks/studies/nbest_oracle.py rerank/test.decoder.nbest --source test.en.gz test.fr.gz test.ref-darby.fr.gz
"""

from __future__ import annotations

import argparse
from pathlib import Path

from moses_integration.evaluation.scores import score, sentence_bleu
from moses_integration.nbest.candidates import first_best, read_nbest
from moses_integration.line_files import read_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nbest", type=Path, help="a Moses n-best list")
    parser.add_argument("--source", type=Path, required=True,
                        help="the decoder's input: every line of the list is checked against it")
    parser.add_argument("refs", type=Path, nargs="+", help="its references, line-aligned (gzip allowed)")
    args = parser.parse_args()
    refs = [read_lines(path) for path in args.refs]
    sentences = read_nbest(args.nbest, read_lines(args.source), str(args.source))
    oracle = [max(hypotheses, key=lambda h: sentence_bleu(h.words, [r[i] for r in refs])).words
              if hypotheses else "" for i, hypotheses in enumerate(sentences)]
    sizes = [len(hypotheses) for hypotheses in sentences]
    print(f"{args.nbest}: {len(sentences)} sentences, {sum(sizes) / len(sizes):.1f} hypotheses each on average")
    print(f"1-best BLEU {score(first_best(sentences), refs).bleu:.2f}, oracle BLEU {score(oracle, refs).bleu:.2f}")


if __name__ == "__main__":
    main()
