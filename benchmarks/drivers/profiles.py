"""Where the time goes: the model's operators (torch.profiler) and the reader's stages.

- `profile_model_only`: one `score_encoded` pass of the paper preset under torch.profiler,
  the operators by self CPU time (matmuls are what the roofline counts; the rest is what
  keeps the model from its matmul rate);
- `reader_breakdown`: CPU seconds per 100k lines of each stage the reader thread and the
  writer thread run for `rescore score`: decompress and split lines, parse, encode, format and
  write (with the garbage collector as during a pass: long-lived objects frozen).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from benchmarks.helpers import ours  # noqa: E402
from rescorer.scoring import batch_scoring as scoring  # noqa: E402
from rescorer.io.compression import decompressing_reader  # noqa: E402
from rescorer.models.precision import autocast  # noqa: E402
from rescorer.data.phrase_encoding import encode_phrases  # noqa: E402
from rescorer.io.table_reader import PhraseTableReader, append_scores  # noqa: E402
from rescorer.io.score_format import format_moses_scores  # noqa: E402
from rescorer.io.atomic_output import AtomicOutput  # noqa: E402

__all__ = ["profile_model_only", "reader_breakdown"]


def profile_model_only(bundle, data, threads: int, rows: int = 14, precision: str = "fp32") -> dict:
    """The operator table of one pass (self CPU time), and the matmuls' share of it."""
    with ours.threads(threads), _batches_on_this_thread():
        ours.warm_up(bundle, data, precision=precision)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            ours.time_model_only(bundle, data, precision=precision)
    averages = prof.key_averages()
    total = sum(event.self_cpu_time_total for event in averages)
    matmul = sum(event.self_cpu_time_total for event in averages
                 if event.key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::addmv", "aten::mv",
                                  "aten::_int_mm", "mkldnn::_linear_pointwise"))
    return {"threads": threads, "precision": precision, "pairs": len(data.src), "matmul_share": matmul / total,
            "table": averages.table(sort_by="self_cpu_time_total", row_limit=rows)}


@contextlib.contextmanager
def _batches_on_this_thread():
    """On N > 1 threads rescorer scores N batches at once on worker threads, which torch.profiler
    does not follow (it saw only the main thread's 12 us). Profile the same batches one after
    another on all threads instead: benchmarks/drivers/tried.py measures both schedules at the same
    speed for `paper`, so the operator mix is the same."""
    def one_after_another(model, src_seqs, tgt_seqs, batches, precision, workers, scores):
        with scoring._no_grad(precision), autocast(torch.device("cpu"), precision):
            for batch in batches:
                tensors = [*scoring._padded(src_seqs, batch), *scoring._padded(tgt_seqs, batch)]
                scores[batch] = model(*tensors).double().numpy()

    original = scoring._score_in_workers
    scoring._score_in_workers = one_after_another
    try:
        yield
    finally:
        scoring._score_in_workers = original


def _cpu_seconds(fn):
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def reader_breakdown(table: Path, vocabs, work_dir: Path, chunk_size: int = 20000) -> dict:
    """CPU seconds per 100k lines of each stage of the pipeline's reader and writer threads,
    through the same calls (`rescore score`'s reader encodes and writes chunks this way)."""
    src_vocab, tgt_vocab = vocabs
    gc.freeze()  # as during a pass (rescoring.long_lived_objects_frozen)
    try:
        def split_lines():
            with open(table, "rb") as raw:
                return sum(1 for _ in decompressing_reader(raw, str(table)))

        decompress, lines = _cpu_seconds(split_lines)

        def parse():
            with PhraseTableReader(table) as reader:
                return list(reader)

        parse_seconds, entries = _cpu_seconds(parse)
        chunks = [entries[i:i + chunk_size] for i in range(0, len(entries), chunk_size)]
        encode, _ = _cpu_seconds(lambda: [(encode_phrases([e.src for e in chunk], src_vocab),
                                           encode_phrases([e.tgt for e in chunk], tgt_vocab)) for chunk in chunks])
        logp = np.random.default_rng(0).normal(-18.0, 5.0, chunk_size)

        def write():
            with AtomicOutput(work_dir / "reader-breakdown.gz", force=True) as output:
                for chunk in chunks:
                    for entry, score in zip(chunk, format_moses_scores(logp[:len(chunk)])):
                        output.write_line(append_scores(entry, [score]))

        write_seconds, _ = _cpu_seconds(write)
        (work_dir / "reader-breakdown.gz").unlink(missing_ok=True)
    finally:
        gc.unfreeze()
    per = 100000 / lines
    return {"lines": lines, "decompress_split": decompress * per, "parse_including_decompress": parse_seconds * per,
            "encode": encode * per, "format_write": write_seconds * per}


def format_profiles(results: dict) -> list:
    lines = []
    reader = results.get("reader_breakdown")
    if reader:
        lines.append(f"\nReader and writer threads, CPU seconds per 100k lines ({reader['lines']} lines of the e2e small table)")
        lines.append(f"  decompress + split lines {reader['decompress_split']:.2f}; parse (incl. decompress) "
                     f"{reader['parse_including_decompress']:.2f}; encode {reader['encode']:.2f}; format + compress + write "
                     f"{reader['format_write']:.2f}")
    for profile_row in results.get("profiles", []):
        lines.append(f"\nProfile: paper preset, {profile_row['precision']}, {profile_row['threads']} thread(s), "
                     f"{profile_row['pairs']} pairs (torch.profiler; matmuls {100 * profile_row['matmul_share']:.0f}% "
                     f"of self CPU time)")
        lines.extend("  " + line for line in profile_row["table"].splitlines())
    return lines
