"""Cut the example phrase table from a real Moses one: all lines of random sources, plus random lines.

Usage: python examples/cut_example_table.py REAL_TABLE.gz OUT.gz
Keeps the bytes and the (sorted) order of every line it takes; seeded, so the cut is reproducible.
"""

import gzip
import random
import sys
from itertools import groupby

NUM_SOURCES = 400  # sources with several targets, taken with all their lines
MIN_TARGETS, MAX_TARGETS = 3, 20  # "several": skip 1-2 targets, and very frequent words with thousands
NUM_LINES = 4000  # then random other lines up to this total
SEED = 1


def source_groups(table_path):
    """(source bytes, number of lines) for each run of lines with the same source."""
    with gzip.open(table_path, "rb") as table:
        for src, lines in groupby(table, key=lambda line: line.split(b" ||| ", 1)[0]):
            yield src, sum(1 for _ in lines)


def main(table_path, out_path):
    rng = random.Random(SEED)
    counts = list(source_groups(table_path))
    candidates = [src for src, count in counts if MIN_TARGETS <= count <= MAX_TARGETS]
    chosen = set(rng.sample(candidates, NUM_SOURCES))
    num_chosen_lines = sum(count for src, count in counts if src in chosen)
    num_other_lines = sum(count for _, count in counts) - num_chosen_lines
    others = set(rng.sample(range(num_other_lines), NUM_LINES - num_chosen_lines))
    other_index = 0
    with gzip.open(table_path, "rb") as table, gzip.GzipFile(out_path, "wb", 9, mtime=0) as out:
        for line in table:
            if line.split(b" ||| ", 1)[0] in chosen:
                out.write(line)
            else:
                if other_index in others:
                    out.write(line)
                other_index += 1


if __name__ == "__main__":
    main(*sys.argv[1:])
