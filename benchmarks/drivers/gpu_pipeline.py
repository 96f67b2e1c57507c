"""Scoring a phrase table on one GPU, old host path against new, in one run of under 5 minutes.

On a machine with a CUDA GPU (an H100 or H200 with 16 host cores, PyTorch installed, no
network needed), from the repository root:

    python3 benchmarks/drivers/gpu_pipeline.py [--lines 800000] [--presets small,paper] [--ranks 4]

`rescore score TABLE --model M -o OUT.gz --device cuda` runs on a table of `--lines` lines: the
bundled 4,000-line slice of the real bible table repeated (or the first lines of `--table`),
with randomly initialised `cho2014` models of each preset over the slice's words, filled up
to the preset's shortlist size (speed does not depend on the weights; the output layer has the
preset's size). Alternately, per preset: one process with `--host-workers 0` (the reader and
writer threads of the model's process: the old path) and with the default host workers (the
new path, worker processes), in fp32 and bf16; the new path writing plain text (no gzip); and
`torchrun` ranks on the one GPU (new path, bf16 and fp32).

Printed per run: pairs/s as the summary line gives it (from the start of scoring to the
assembled output; starting Python, torch and CUDA is not counted), the model's matmul
TFLOP/s (rescorer.models.flops) and its share of the card's dense bf16 peak (the datasheet's
for an H100/H200 SXM, else the 8192^3 bf16 matmul rate measured here, which is also printed).
Checked: the fp32 outputs of the old path, the new path and the ranks are byte-identical.

gzip: the output is compressed by one thread per process, python-isal's when installed (a
dependency of rescorer; 3-7x faster than zlib), else zlib, which may cap one process near
250k lines/s; the plain-text row shows the pipeline without it. To carry isal to a machine
without it, see the device machine's notes on carrying wheels and pass `--site DIR`.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

EXAMPLE_TABLE = REPO / "examples" / "phrase-table.gz"
# Dense bf16 peak of the datasheets (TFLOP/s): the SXM H100 and the H200 share the GH100's.
DATASHEET_BF16_TFLOPS = {"H200": 989.4, "H100 80GB HBM3": 989.4, "H100 SXM": 989.4, "H100 PCIe": 756.0}


def build_table(source: Path, lines: int, path: Path) -> list[bytes]:
    """`lines` lines: `source`'s lines repeated, or its first `lines` (gzip level 1: fast to make)."""
    with gzip.open(source, "rb") as file:
        rows = file.read().split(b"\n")[:-1]
    rows = (rows * -(-lines // len(rows)))[:lines]
    path.write_bytes(gzip.compress(b"\n".join(rows) + b"\n", compresslevel=1))
    return rows


def make_model(preset: str, rows: list[bytes], path: Path):
    """A random cho2014 model at `preset`, over the table's words filled up to its shortlist size."""
    from rescorer.data.vocabulary import Vocabulary
    from rescorer.models import ModelSettings, build_model
    from rescorer.models.model_files import ModelBundle, save_model

    settings = ModelSettings.make("cho2014", preset)
    size = settings.shortlist_size
    vocabs = []
    for side in (0, 1):
        counts = collections.Counter(word for row in rows[:4000]
                                     for word in row.split(b" ||| ")[side].decode("utf-8", "replace").split())
        words = Vocabulary.from_counts(counts, size).tokens
        vocabs.append(Vocabulary(words + [f"<filler-{i}>" for i in range(size + 3 - len(words))]))
    torch.manual_seed(0)
    model = build_model(settings.config(len(vocabs[0]), len(vocabs[1]))).eval()
    save_model(ModelBundle(model, *vocabs, {"benchmark": f"random init, cho2014 preset {preset}"}), path)
    return model.config


def table_flops(config, rows: list[bytes]) -> int:
    """Matmul FLOPs to score every row once (rescorer.models.flops)."""
    from rescorer.models.flops import flops_per_batch

    src_lens, tgt_lens = [], []
    for row in rows:
        fields = row.split(b" ||| ")
        src_lens.append(len(fields[0].split()))
        tgt_lens.append(len(fields[1].split()))
    return flops_per_batch(config, src_lens, tgt_lens)


def measured_bf16_tflops() -> float:
    """TFLOP/s of an 8192^3 bf16 matrix product on this GPU (the mean of 10 after 3 warm-ups)."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        a @ b
    torch.cuda.synchronize()
    return 10 * 2 * 8192 ** 3 / (time.perf_counter() - start) / 1e12


def score(table: Path, model: Path, output: Path, device: str, precision: str, workers, ranks: int,
          env: dict) -> float:
    """pairs/s of one `rescore score` run, from its summary line."""
    launcher = [sys.executable, "-m", "rescorer"] if ranks == 1 else \
        [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}", "-m", "rescorer"]
    command = [*launcher, "score", str(table), "--model", str(model), "-o", str(output), "--device", device,
               "--precision", precision, "--force", *(["--host-workers", str(workers)] if workers is not None else [])]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    found = re.search(r"lines in \d+, out \d+.*?([\d.]+) s, (\d+) pairs/s", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return float(found.group(2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=800_000)
    parser.add_argument("--table", type=Path, default=EXAMPLE_TABLE,
                        help="lines repeated to --lines [default: the bundled 4,000-line slice]")
    parser.add_argument("--presets", default="small,paper")
    parser.add_argument("--ranks", type=int, default=4, help="torchrun ranks on the one GPU (0: none)")
    parser.add_argument("--site", type=Path, help="a directory of packages to put first on PYTHONPATH (isal)")
    parser.add_argument("--deadline", type=float, default=280, help="seconds after which no run starts")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of this script (no peak)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device: this benchmark needs a GPU (--device cpu: a dry run)")
    paths = [str(args.site)] if args.site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(REPO), os.environ.get("PYTHONPATH", "")])}
    sys.path[:0] = paths
    from rescorer.io.gzip_io import gzip_backend
    from rescorer.scoring.host_pipeline import default_host_workers

    if args.device == "cuda":
        name = torch.cuda.get_device_name()
        measured = measured_bf16_tflops()
        peak = next((value for key, value in DATASHEET_BF16_TFLOPS.items() if key in name), measured)
        print(f"{name}: bf16 8192^3 matmul {measured:.0f} TFLOP/s measured, peak taken {peak:.0f}")
    else:
        peak = float("nan")
    print(f"torch {torch.__version__}, {os.cpu_count()} cores, gzip {gzip_backend()}, new path: "
          f"{default_host_workers(args.device) or 2} host workers (1 process)", flush=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-pipeline-"))
    try:
        table = work / "table.gz"
        rows = build_table(args.table, args.lines, table)
        new = None if args.device == "cuda" else 2  # the default on CUDA; on a CPU (a dry run) 2
        runs = [("old", 0, "fp32", 1, ".gz"), ("new", new, "fp32", 1, ".gz"), ("old", 0, "bf16", 1, ".gz"),
                ("new", new, "bf16", 1, ".gz"), ("new", new, "bf16", 1, ".txt")]
        if args.ranks > 1:
            runs += [("new", new, "bf16", args.ranks, ".gz"), ("new", new, "fp32", args.ranks, ".gz")]
        print(f"{args.lines:,} lines ({args.table.name} repeated); pairs/s as the summary gives it\n")
        print(f"{'preset':7}{'path':5}{'prec':6}{'ranks':>6}{'out':>5}{'pairs/s':>11}{'TFLOP/s':>9}{'of peak':>9}",
              flush=True)
        same = []
        for preset in args.presets.split(","):
            config = make_model(preset, rows, work / f"{preset}.pt")
            flops = table_flops(config, rows)
            fp32 = {}
            for path, workers, precision, ranks, suffix in runs:
                if time.perf_counter() - started > args.deadline:
                    print(f"{preset:7}{path:5}{precision:6}{ranks:6}{suffix:>5}    skipped: past --deadline")
                    continue
                output = work / f"out{suffix}"  # one name: the gzip header holds it
                rate = score(table, work / f"{preset}.pt", output, args.device, precision, workers, ranks, env)
                tflops = rate * flops / len(rows) / 1e12
                print(f"{preset:7}{path:5}{precision:6}{ranks:6}{suffix:>5}{rate:11,.0f}{tflops:9.1f}"
                      f"{tflops / peak:9.2%}", flush=True)
                if precision == "fp32" and suffix == ".gz":
                    fp32[f"{path}, {ranks} rank(s)"] = output.read_bytes()
            if len(fp32) > 1:
                first = next(iter(fp32.values()))
                same.append(f"{preset} fp32: {', '.join(fp32)}: "
                            f"{'byte-identical' if all(out == first for out in fp32.values()) else 'DIFFER'}")
        print("\n" + "\n".join(same))
        print(f"\n{time.perf_counter() - started:.0f} s in all")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
