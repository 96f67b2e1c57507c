"""The host's side of scoring a phrase table: each stage alone, and the pipeline's ceiling, old
path against new, in one run.

- ``--stages``: each host stage alone on one thread, in CPU seconds (process time, so that other
  work on a shared machine does not count): read+gunzip, parse, encode, batch+pad, the model,
  format, insert the scores, write+gzip; as pairs (lines) per second.
- end to end: `rescore score`'s unit path (`rescore_table`, in this process) on the same table,
  alternately with ``--host-workers 0`` (today's reader and writer threads in the model's
  process) and ``--host-workers N`` (worker processes), with the given model (a tiny-preset model
  trained briefly: the default) and with a null model (the same shortlists, a forward that costs
  nothing): the second is the host pipeline's ceiling in pairs/s. The summary's pairs/s counts
  from the units' start to the assembled output, the workers' start included. The CPU seconds
  of the model's process per million pairs (all its threads) bound one process's rate on a host
  with cores to spare, which a loaded machine's wall-clock figures cannot show.
- the outputs of both paths are compared byte for byte.

    python benchmarks/drivers/host_pipeline_speed.py [--lines 200000] [--workers 1] [--rounds 2] [--stages]

Run with OMP_NUM_THREADS=1 (one torch thread, as the figures in RESULTS.md were measured).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR  # noqa: E402
from benchmarks.helpers.timing import interleave  # noqa: E402


def table_prefix(table: Path, lines: int, directory: Path) -> Path:
    """The table's first `lines` lines, gzipped (cached)."""
    path = directory / f"prefix-{lines}.gz"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        with gzip.open(table, "rb") as source, gzip.open(path, "wb") as out:
            out.writelines(itertools.islice(source, lines))
    return path


def tiny_model(table: Path, directory: Path) -> Path:
    """A tiny-preset model trained briefly (200 updates, seeded) on `table` (cached)."""
    from rescorer.training.pipeline import train_on_table
    from rescorer.training.trainer import TrainSettings

    path = directory / f"tiny-{table.stem}.pt"
    if not path.exists():
        train_on_table(table, path, preset="tiny", settings=TrainSettings(max_updates=200, seed=1))
    return path


class NullScorer(torch.nn.Module):
    """A model whose forward costs nothing: -(target length + 1) for every pair. It stands in for
    a model so fast that only the host pipeline is left to measure."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.weight = torch.nn.Parameter(torch.zeros(1))  # a device, and weights for the journal

    def forward(self, src, src_lengths, tgt, tgt_lengths):
        return -(tgt_lengths.to(torch.float32) + 1) + self.weight


def stage_rates(table: Path, bundle, chunk_size: int = 20000) -> dict:
    """Pairs per CPU second of each host stage alone, on one thread."""
    from rescorer.data.batching import padded_batches
    from rescorer.io.atomic_output import AtomicOutput
    from rescorer.io.compression import decompressing_reader
    from rescorer.io.score_format import format_moses_scores
    from rescorer.io.table_reader import parse_line
    from rescorer.scoring.batch_scoring import DEFAULT_TOKEN_BUDGET, score_batches
    from rescorer.scoring.chunk_encoding import encode_chunk
    from rescorer.scoring.chunks import ScoringModels, chunk_lines

    def timed(work):
        start = time.process_time()
        result = work()
        return time.process_time() - start, result

    rates = {}
    with open(table, "rb") as file:
        seconds, lines = timed(lambda: list(decompressing_reader(file, str(table))))
    count = len(lines)
    rates["read+gunzip"] = count / seconds
    raws = [line[:-1] for line in lines]
    num_scores = parse_line(raws[0], 1, None).num_scores
    seconds, entries = timed(lambda: [parse_line(raw, i, num_scores) for i, raw in enumerate(raws, 1)])
    rates["parse"] = count / seconds
    models = ScoringModels.of([bundle])
    seconds, chunks = timed(lambda: [encode_chunk(entries[i:i + chunk_size], models.vocabularies)
                                     for i in range(0, count, chunk_size)])
    rates["encode"] = count / seconds
    seconds, batches = timed(lambda: [padded_batches(c.encodings[0].src_seqs, c.encodings[0].tgt_seqs,
                                                     DEFAULT_TOKEN_BUDGET) for c in chunks])
    rates["batch+pad"] = count / seconds
    seconds, logps = timed(lambda: [score_batches(bundle.model, b, c.num_pairs) for c, b in zip(chunks, batches)])
    rates["model (1 thread)"] = count / seconds
    seconds, _ = timed(lambda: [format_moses_scores(logp) for logp in logps])
    rates["format floats"] = count / seconds
    seconds, written = timed(lambda: [list(chunk_lines(c.entries, [logp], format_moses_scores, None))
                                      for c, logp in zip(chunks, logps)])
    rates["format+insert"] = count / seconds
    with tempfile.TemporaryDirectory() as directory:
        def write():
            with AtomicOutput(Path(directory) / "out.gz") as output:
                for chunk_written in written:
                    output.write_lines(chunk_written)
        seconds, _ = timed(write)
    rates["write+gzip"] = count / seconds
    return rates


def one_run(table: Path, bundle, workers: int, output: Path, cpu: dict) -> float:
    """pairs/s of one `rescore_table` run with `workers` host workers (its summary's figure); the
    CPU seconds per million pairs of this process and of its workers are appended to `cpu`."""
    from rescorer.scoring.settings import ScoreSettings
    from rescorer.scoring.table_rescoring import rescore_table

    settings = ScoreSettings(force=True, host_workers=workers, precision="fp32")
    own, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = rescore_table(table, output, bundle, settings)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, once the pool has joined them
    per_million = 1e6 / summary.lines_written
    cpu.setdefault("this process", []).append((time.process_time() - own) * per_million)
    cpu.setdefault("workers", []).append(max(0.0, after.ru_utime + after.ru_stime - children.ru_utime
                                             - children.ru_stime) * per_million)
    return summary.pairs_per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--lines", type=int, default=200_000, help="the table's first LINES lines")
    parser.add_argument("--model", type=Path, help="default: a tiny-preset model trained briefly on the prefix")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="host workers of the new path [default: the cores less 1]")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stages", action="store_true", help="also time each host stage alone")
    args = parser.parse_args()
    from rescorer.io.gzip_io import gzip_backend
    from rescorer.models.model_files import ModelBundle, load_model

    table = table_prefix(args.table, args.lines, RESULTS_DIR)
    bundle = load_model(args.model or tiny_model(table, RESULTS_DIR), torch.device("cpu"))
    null = ModelBundle(NullScorer(bundle.config), bundle.src_vocab, bundle.tgt_vocab)
    print(f"{args.lines:,} lines of {args.table.name} ({table}); {torch.get_num_threads()} torch thread(s), "
          f"{os.cpu_count()} cores, gzip {gzip_backend()}, new path: {args.workers} host worker(s)")
    if args.stages:
        print("\neach host stage alone, one thread (pairs per CPU second):")
        for stage, rate in stage_rates(table, bundle).items():
            print(f"  {stage:18} {rate:12,.0f}")
    work = Path(tempfile.mkdtemp(dir=RESULTS_DIR))
    try:
        runs, cpu = {}, {}
        for name, scorer in (("tiny model", bundle), ("null model", null)):
            for label, workers in (("old", 0), ("new", args.workers)):
                key = f"{name}, {label}"
                cpu[key] = {}
                runs[key] = (lambda scorer=scorer, workers=workers, key=key, out=work / f"{name[:4]}-{label}":
                             one_run(table, scorer, workers, out / "out.gz", cpu[key]))
                (work / f"{name[:4]}-{label}").mkdir()
        rates = interleave(runs, args.rounds)
        print(f"\nend to end, pairs/s (median of {args.rounds}, alternated; every run's figure in brackets), "
              f"and CPU seconds per million pairs (medians) of the model's process and of the workers:")
        for name, values in rates.items():
            own, workers = (statistics.median(cpu[name][part]) for part in ("this process", "workers"))
            print(f"  {name:18} {statistics.median(values):10,.0f}   [{', '.join(f'{v:,.0f}' for v in values)}]"
                  f"   CPU s/M pairs: process {own:6.1f}, workers {workers:6.1f}")
        for name in ("tiny", "null"):
            same = (work / f"{name}-old" / "out.gz").read_bytes() == (work / f"{name}-new" / "out.gz").read_bytes()
            print(f"  {name} model: old and new outputs {'byte-identical' if same else 'DIFFER'}")
        for name in ("tiny model", "null model"):
            ratio = np.median(rates[f"{name}, new"]) / np.median(rates[f"{name}, old"])
            print(f"  {name}: new / old {ratio:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
