"""How long `rescore` takes to answer before it does any work: the group's help, a command's
help and bad-usage refusals, each a fresh process (issue 46's goal: at most 0.5 s), beside the
interpreter alone and `import torch`, which every command paid before torch loaded lazily.

    python3 benchmarks/drivers/cli_startup.py [--rounds 7] [--out benchmarks/drivers/cli_startup.tsv]

The cases run interleaved, round after round, so that a busy machine slows them alike; the
table gives each one's median, minimum and maximum in seconds and its median as a fraction of
`import torch`'s.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
EXAMPLE = REPO / "examples" / "phrase-table.gz"

from rescorer.runtime.cpu_features import cpu_features  # noqa: E402


def cases(rescore: str, scratch: Path) -> dict[str, list[str]]:
    model = str(scratch / "m.pt")  # never written: every rescore case below is refused or help
    return {
        "python3 -c pass": [sys.executable, "-c", "pass"],
        "python3 -c 'import torch'": [sys.executable, "-c", "import torch"],
        "rescore --help": [rescore, "--help"],
        "rescore train --help": [rescore, "train", "--help"],
        "rescore moses rerank --help": [rescore, "moses", "rerank", "--help"],
        "rescore train TABLE -o M --no-such-option": [rescore, "train", str(EXAMPLE), "-o", model, "--no-such-option"],
        "rescore train TABLE -o M --arch transformer --attention-heads 3":
            [rescore, "train", str(EXAMPLE), "-o", model, "--arch", "transformer", "--attention-heads", "3"],
    }


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "drivers" / "cli_startup.tsv")
    args = parser.parse_args()
    rescore = shutil.which("rescore")
    if rescore is None:
        sys.exit("cli_startup.py: the rescore command is not installed (pip install -e .)")
    with tempfile.TemporaryDirectory() as scratch:
        commands = cases(rescore, Path(scratch))
        times = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(timed(command))
    torch_median = statistics.median(times["python3 -c 'import torch'"])
    lines = ["case\tmedian s\tmin s\tmax s\tmedian / import torch"]
    for name, seconds in times.items():
        median = statistics.median(seconds)
        lines.append(f"{name}\t{median:.3f}\t{min(seconds):.3f}\t{max(seconds):.3f}\t{median / torch_median:.2f}")
    load = os.getloadavg()[0]
    features = cpu_features()
    lines.append(f"# {args.rounds} rounds, interleaved; {features.model if features else platform.machine()}, "
                 f"{os.cpu_count()} CPUs, load average {load:.1f} at the end; python {platform.python_version()}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
