"""Cut the reranking example (examples/rerank/) from the bible-en-fr system's stored n-best lists.

Usage: python examples/cut_example_nbest.py BIBLE_EN_FR_DIR examples/rerank

Takes the first verses of the dev and test sets with both references, each verse's best
hypotheses from the tuned Baseline's 200-best lists (lines kept byte for byte, ids unchanged, in
the decoder's order), the first verse pairs of the training corpus for a sentence model, and the
tuned moses.ini whose weights start the reranker's.
"""

import gzip
import shutil
import sys
from itertools import islice
from pathlib import Path

NUM_VERSES = 100  # of dev and of test
NBEST = 20  # hypotheses a verse, the decoder's best
NUM_TRAIN = 3000  # verse pairs for the guide's sentence model


def copy_lines(source: Path, out: Path, count: int) -> None:
    with gzip.open(source, "rb") as lines, gzip.GzipFile(out, "wb", 9, mtime=0) as written:
        written.writelines(islice(lines, count))


def cut_nbest(source: Path, out: Path) -> None:
    """The first NBEST lines of each of the first NUM_VERSES ids."""
    taken: dict = {}
    with gzip.open(source, "rb") as lines, gzip.GzipFile(out, "wb", 9, mtime=0) as written:
        for line in lines:
            sentence = int(line.split(b" ||| ", 1)[0])
            if sentence >= NUM_VERSES:
                break
            taken[sentence] = taken.get(sentence, 0) + 1
            if taken[sentence] <= NBEST:
                written.write(line)


def main(data: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for part in ("dev", "test"):
        for name in (f"{part}.en", f"{part}.fr", f"{part}.ref-darby.fr"):
            copy_lines(data / "corpus" / f"{name}.gz", out / f"{name}.gz", NUM_VERSES)
        cut_nbest(data / "nbest" / f"{part}.nbest200.gz", out / f"{part}.nbest.gz")
    for name in ("train.en", "train.fr"):
        copy_lines(data / "corpus" / f"{name}.gz", out / f"{name}.gz", NUM_TRAIN)
    shutil.copyfile(data / "tuning" / "moses.ini", out / "moses.ini")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
