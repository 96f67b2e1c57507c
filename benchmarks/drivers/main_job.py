"""The main job a user waits for: `rescore TABLE` end to end with the default settings, each
phase timed, its peak memory, and the trained model's held-out and honest held-out perplexity
(issue 33).

    nice -n 10 python benchmarks/drivers/main_job.py [--table TABLE] [--max-lines N] [--max-time S]
        [--json-out NEW.json] [--compare OLD.json] [-- MORE RESCORE OPTIONS]

The command runs as a child process (`python -m rescorer TABLE -o OUT`, this checkout first on
the path); its progress and summary lines are stamped as they arrive, and the phases are the
spans between them:
- read and cache: start to the first update (interpreter start, counting words, encoding the
  pair cache, building the model);
- train: to the training summary line;
- score: to the scoring summary line (loading the model, `--precision auto`'s check, scoring;
  the writer thread compresses and writes while the model scores, so writing is inside it);
- write: from the scoring summary to exit (the last flush and the rename into place).
Peak memory is the child's peak resident set (getrusage of the children). The perplexities on
all held-out pairs and on the honest ones (rescorer.training.honest_heldout: those no training
pair contains on both sides) are those training recorded in the model file, at its kept update.

`--max-lines N` runs on the table's first N lines (written to a gzipped prefix first, untimed)
for a quick check; the full bible table takes about 35 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR  # noqa: E402

PHASES = ("read and cache", "train", "score", "write")

SUMMARY_PATTERNS = {
    "valid_pairs": (r"trained on \d+ pairs \((\d+) held out", int),
    "train_pairs": (r"trained on (\d+) pairs", int),
    "updates": (r"(\d+) updates(?: \([^)]*\))?, stopped:", int),
    "stopped_because": (r"stopped: ([^;]+);", str),
    "heldout_ppl_reported": (r"valid perplexity ([\d.]+|inf)", float),
    "unigram_ppl": (r"\), unigram ([\d.]+)", float),  # all held-out pairs; the honest ones' unigram comes first
    "target_tokens_per_s": (r"(\d+) target tokens/s", int),
    "precision": (r"precision auto: (\w+)", str),
    # absent where no check ran (a CPU without bf16 units, an explicit precision)
    "bf16_mean_delta": (r"precision auto: .*mean \|delta log p\| ([0-9.e+-]+)", float),
    "bf16_bound": (r"precision auto: .*mean \|delta log p\| \S+ over \d+ pairs \(bound ([0-9.e+-]+)\)", float),
    "lines_out": (r"lines in \d+, out (\d+)", int),
    "pairs_per_s_reported": (r"s, (\d+) pairs/s; wrote", int),
}


def write_prefix(table: Path, lines: int, path: Path) -> None:
    with gzip.open(table, "rb") as source, gzip.open(path, "wb", compresslevel=1) as prefix:
        for number, line in enumerate(source):
            if number == lines:
                break
            prefix.write(line)


def run_main_job(table: Path, work: Path, rescore_args: list) -> dict:
    """Run `rescore TABLE` and time its phases from its output lines; the figures it prints."""
    output = work / "out.gz"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "rescorer", str(table), "-o", str(output), *rescore_args]
    started = time.perf_counter()
    stamps, lines = {}, []
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=work,
                             text=True, bufsize=1)
    for chunk in child.stdout:
        now = time.perf_counter() - started
        for line in re.split(r"[\r\n]+", chunk):
            if not line.strip():
                continue
            lines.append(line)
            if line.startswith("training") and "train_start" not in stamps:
                stamps["train_start"] = now
            elif line.startswith("trained on "):
                stamps["train_end"] = now
            elif line.startswith("lines in "):
                stamps["score_end"] = now
    code = child.wait()
    stamps["exit"] = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    (work / "rescore.log").write_text("\n".join(lines) + "\n")
    if code != 0 or not {"train_start", "train_end", "score_end"} <= stamps.keys():
        sys.exit(f"main_job: `{' '.join(command)}` failed (exit {code}); its output is in {work / 'rescore.log'}:\n"
                 + "\n".join(lines[-10:]))
    text = "\n".join(lines)
    figures = {"command": " ".join(["rescore", str(table), "-o", "OUT", *rescore_args]),
               "seconds": {"read and cache": stamps["train_start"],
                           "train": stamps["train_end"] - stamps["train_start"],
                           "score": stamps["score_end"] - stamps["train_end"],
                           "write": stamps["exit"] - stamps["score_end"],
                           "total": stamps["exit"]},
               "peak_rss_mb": peak_kb / 1024}
    for key, (pattern, kind) in SUMMARY_PATTERNS.items():
        found = re.search(pattern, text)
        figures[key] = kind(found.group(1)) if found else None
    figures["model"] = str(work / "out.model.pt")
    return figures


def precision_reason(figures: dict) -> str:
    """Why: bf16's mean |delta log p| on the check's sample, where the CPU has bf16 units."""
    delta = figures.get("bf16_mean_delta")
    return "" if delta is None else f", bf16 moving log p by {delta:.3g} on average (bound {figures['bf16_bound']:g})"


def heldout_figures(model_path: Path) -> dict:
    """The perplexities on all held-out pairs and on the honest ones that training recorded in
    the model file, of the weights it holds (the best validation's, or with --average their mean)."""
    from rescorer.models.model_files import read_model_file

    training = read_model_file(model_path)["training"]
    state = training["state"]
    averaged = bool(state.get("averaged_updates"))
    return {"heldout_ppl": state["averaged_valid_ppl" if averaged else "best_valid_ppl"],
            "honest_ppl": state.get("averaged_honest_ppl" if averaged else "honest_ppl_at_best"),
            "num_heldout": training["valid_pairs"], "num_honest": training.get("honest_pairs"),
            "num_pairs": training["num_pairs"]}


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    return {"cpu": cpu, "cores": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "load_average": os.getloadavg()[0], "commit": commit.strip(), "date": time.strftime("%Y-%m-%d")}


ROWS = [("read and cache", lambda f: f["seconds"]["read and cache"], "{:,.1f} s"),
        ("train", lambda f: f["seconds"]["train"], "{:,.1f} s"),
        ("score (writing overlapped)", lambda f: f["seconds"]["score"], "{:,.1f} s"),
        ("write (finish)", lambda f: f["seconds"]["write"], "{:,.1f} s"),
        ("total", lambda f: f["seconds"]["total"], "{:,.1f} s"),
        ("peak resident memory", lambda f: f["peak_rss_mb"], "{:,.0f} MB"),
        ("updates", lambda f: f["updates"], "{:,}"),
        ("held-out pairs", lambda f: f["num_heldout"], "{:,}"),
        ("held-out perplexity", lambda f: f["heldout_ppl"], "{:.2f}"),
        ("honest held-out pairs", lambda f: f["num_honest"], "{:,}"),
        ("honest held-out perplexity", lambda f: f["honest_ppl"], "{:.2f}"),
        ("unigram perplexity", lambda f: f["unigram_ppl"], "{:.2f}"),
        ("scoring pairs/s (reported)", lambda f: f["pairs_per_s_reported"], "{:,}")]


def cell(figures: dict, get, form: str) -> str:
    try:
        value = get(figures)
    except (KeyError, TypeError):
        return "-"
    return "-" if value is None else form.format(value)


def table(figures: dict, old: dict | None) -> str:
    header = "| | now | before | now / before |\n|---|---|---|---|" if old else "| | figure |\n|---|---|"
    rows = [header]
    for name, get, form in ROWS:
        if old is None:
            rows.append(f"| {name} | {cell(figures, get, form)} |")
            continue
        try:
            ratio = f"{get(figures) / get(old):.2f}"
        except (KeyError, TypeError, ZeroDivisionError):
            ratio = "-"
        rows.append(f"| {name} | {cell(figures, get, form)} | {cell(old, get, form)} | {ratio} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE, help="phrase table (default: the bible table)")
    parser.add_argument("--max-lines", type=int, default=None, help="run on the table's first N lines")
    parser.add_argument("--max-time", type=float, default=None, help="passed to rescore: training's time limit (s)")
    parser.add_argument("--work", type=Path, default=RESULTS_DIR / "main-job", help="where the run's files go (replaced)")
    parser.add_argument("--json-out", type=Path, default=None, help="write this run's figures here")
    parser.add_argument("--compare", type=Path, default=None, help="a previous run's --json-out, printed beside")
    parser.add_argument("rescore_args", nargs="*", help="more rescore options, after --")
    args = parser.parse_args()
    old = json.loads(args.compare.read_text()) if args.compare else None
    shutil.rmtree(args.work, ignore_errors=True)
    args.work = args.work.resolve()
    args.work.mkdir(parents=True)
    table_path = args.table.resolve()
    if args.max_lines is not None:
        table_path = args.work / f"prefix-{args.max_lines}.gz"
        write_prefix(args.table, args.max_lines, table_path)
    rescore_args = list(args.rescore_args) + (["--max-time", str(args.max_time)] if args.max_time else [])
    about = machine()
    figures = run_main_job(table_path, args.work, rescore_args)
    figures.update(heldout_figures(Path(figures["model"])))
    figures.update(machine=about, table=str(args.table), max_lines=args.max_lines,
                   load_average_end=os.getloadavg()[0])
    print(f"`{figures['command']}` ({args.table.name}{f', first {args.max_lines:,} lines' if args.max_lines else ''}; "
          f"{about['cpu']}, {about['cores']} cores, OMP_NUM_THREADS={about['omp_num_threads']}, load average "
          f"{about['load_average']:.1f} at start, {figures['load_average_end']:.1f} at end; commit {about['commit']}; "
          f"training stopped: {figures['stopped_because']}; precision auto chose {figures['precision']}"
          f"{precision_reason(figures)})\n")
    print(table(figures, old))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
