"""Where each thread of each process spends its time, from a py-spy sampling profile: for a run
whose Python (not its operators) sets the pace, such as one scoring process feeding a GPU.

    py-spy record --subprocesses --idle --threads -r 100 --format raw -o spy.txt -- \\
        python3 -m rescorer score TABLE --model M -o OUT.gz --device cuda
    python3 benchmarks/helpers/spy_summary.py spy.txt [--top 12]

py-spy (`pip install py-spy`, a static binary) samples every thread, idle ones included, so a
thread's share of its samples is its share of the wall clock. Printed per process and thread,
busiest first: its samples, then the places it was found most often, each as the deepest frame
in rescorer's own code and, after '>', the frame it was in (a torch call, a lock's wait, a read).
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*):(?P<line>\d+)\)$")


def where(frames: list[str]) -> str:
    """'file:line function > leaf function': the deepest frame of the project's code, and the leaf."""
    ours, leaf = None, frames[-1] if frames else "(no Python frame: native code or idle)"
    for frame in frames:
        found = FRAME.match(frame)
        if found and ("rescorer/" in found["file"] or "moses_integration/" in found["file"]):
            ours = f"{found['file'].split('rescorer/')[-1]}:{found['line']} {found['function']}"
    leaf_match = FRAME.match(leaf)
    leaf_name = f"{leaf_match['function']} ({Path(leaf_match['file']).name})" if leaf_match else leaf
    return f"{ours or '(outside rescorer)'} > {leaf_name}"


def _frames(stack: str) -> list[str]:
    """The stack's frames; a process's command line may hold ';' (spawned workers' `-c` code)."""
    frames, parts = [], iter(stack.split(";"))
    for part in parts:
        if part.startswith("process ") and part.count('"') == 1:
            while part.count('"') < 2:
                part += ";" + next(parts, '"')
        frames.append(part)
    return frames


def summarize(lines, top: int) -> str:
    per_thread = collections.defaultdict(collections.Counter)
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = _frames(stack)
        processes = [frame for frame in frames if frame.startswith("process ")]
        threads = [frame for frame in frames if frame.startswith("thread (")]
        code = [frame for frame in frames if not frame.startswith(("process ", "thread ("))]
        process = processes[-1].split(":", 1)[1].strip('"')[:80] if processes else "?"
        thread = threads[-1].partition(": ")[2] or threads[-1] if threads else "?"
        per_thread[(process, thread)][where(code)] += int(count)
    out = []
    for (process, thread), places in sorted(per_thread.items(), key=lambda item: -sum(item[1].values())):
        total = sum(places.values())
        out.append(f"\n{total:6d} samples  {process}  [{thread}]")
        for place, count in places.most_common(top):
            out.append(f"  {count / total:6.1%}  {place}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path, help="py-spy record --format raw output")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    with open(args.profile, encoding="utf-8", errors="replace") as file:
        print(summarize(file, args.top))


if __name__ == "__main__":
    main()
