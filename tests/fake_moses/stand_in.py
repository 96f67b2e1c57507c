"""Stand-in for Moses programs in tests (CI has no Moses). Installed under several names;
it records its argv and writes the files the real program writes, copied from the real
mert-moses.pl run in shared/data/bible-en-fr (tuning/, eval/), never invented.

Settings come from fake.json at the fake Moses root: {"fixtures": DIR, "stop_after": N|null}.
"""

import gzip
import json
import os
import shutil
import sys
from pathlib import Path

TOOL = Path(sys.argv[0]).name


def find_root() -> Path:
    here = Path(sys.argv[0]).resolve()
    for parent in here.parents:
        if (parent / "fake.json").is_file():
            return parent
    sys.exit(f"{TOOL}: fake.json not found above {here}")


ROOT = find_root()
SETTINGS = json.loads((ROOT / "fake.json").read_text())
FIXTURES = Path(SETTINGS["fixtures"])


def record() -> None:
    with open(ROOT / "calls.jsonl", "a") as log:
        log.write(json.dumps({"tool": TOOL, "argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")


def mert_moses() -> int:
    """Like mert-moses.pl: 4 positionals, --opt=value options; per-iteration files, then moses.ini."""
    positional = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = dict(a[2:].partition("=")[::2] for a in sys.argv[1:] if a.startswith("--"))
    if len(positional) != 4:
        print("usage: mert-moses.pl input-text references decoder-executable decoder.ini", file=sys.stderr)
        return 1
    work = Path(options.get("working-dir", "mert-work"))
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(work)
    tuning = FIXTURES / "tuning"
    last = int((tuning / "finished_step.txt").read_text())
    if "maximum-iterations" in options:
        last = min(last, int(options["maximum-iterations"]))
    start = 1
    if "continue" in options:
        step = Path("finished_step.txt")
        if not step.is_file():  # the real script dies the same way
            print("finished_step.txt: No such file or directory", file=sys.stderr)
            return 2
        start = int(step.read_text()) + 1
        print(f"Last finished step is {start - 1}", file=sys.stderr)
    for name in ("features.list", "init.opt"):
        shutil.copyfile(tuning / name, name)
    for run in range(start, last + 1):
        print(f"run {run} start", flush=True)
        for suffix in ("moses.ini", "dense", "init.opt", "weights.txt", "mert.log", "out.gz"):
            shutil.copyfile(tuning / f"run{run}.{suffix}", f"run{run}.{suffix}")
        shutil.copyfile(tuning / f"run{run}.mert.log", "mert.log")
        shutil.copyfile(tuning / f"run{run}.weights.txt", "weights.txt")
        Path("finished_step.txt").write_text(f"{run}\n")
        print(f"run {run} end", flush=True)
        if SETTINGS.get("stop_after") == run:
            print("Killed", file=sys.stderr)
            return 137
    shutil.copyfile(tuning / "moses.ini", "moses.ini")
    print("Training finished", flush=True)
    return 0


def decoder() -> int:
    """Like bin/moses: -show-weights prints features.list; else one line out per line in."""
    if "-show-weights" in sys.argv:
        sys.stdout.write((FIXTURES / "tuning" / "features.list").read_text())
        return 0
    with gzip.open(FIXTURES / "eval" / "test.hyp.fr.gz", "rt", encoding="utf-8") as handle:
        outputs = handle.read().splitlines(keepends=True)
    for i, _ in enumerate(sys.stdin.buffer):
        sys.stdout.write(outputs[i % len(outputs)])
    return 0


def compact() -> int:
    """processPhraseTableMin: records its arguments; writes an empty stand-in .minphr."""
    args = sys.argv[1:]
    Path(args[args.index("-out") + 1] + ".minphr").write_bytes(b"")
    return 0


if __name__ == "__main__":
    record()
    handlers = {"mert-moses.pl": mert_moses, "moses": decoder, "processPhraseTableMin": compact}
    sys.exit(handlers.get(TOOL, lambda: 0)())
