"""`rescore --help`, every command's help and the bad-usage refusals run without importing torch
(issue 46: the CLI starts in a fraction of a second; torch loads when a command runs). Timing
is benchmarks/drivers/cli_startup.py's job; this checks the mechanism, in one fresh interpreter."""

import json
import subprocess
import sys

import pytest

# Each a command line and the exit status it must end with; the refusals come from click (an
# unknown option, a bad choice) and from the settings checks that run before any work.
REFUSALS = [
    (["train", "{table}", "-o", "{out}", "--no-such-option"], 2),
    (["train", "{table}", "-o", "{out}", "--arch", "nosuch"], 2),
    (["train", "{table}", "-o", "{out}", "--arch", "cho2014", "--attention", "local-m"], 2),
    (["train", "{table}", "-o", "{out}", "--arch", "transformer", "--attention-heads", "3"], 2),
    (["train", "{table}", "-o", "{out}", "--arch", "luong", "--attention-window", "3"], 2),
    (["train", "{table}", "-o", "{out}", "--subwords", "bpe", "--shortlist-size", "100"], 2),
    (["train", "{table}", "-o", "{out}", "--label-smoothing", "0.1", "--sampled-softmax", "100"], 2),
    (["train", "--lm", "{table}", "-o", "{out}", "--arch", "rnnsearch"], 2),
    (["score", "{table}"], 2),
    (["moses", "rerank"], 2),
]

PROBE = """
import json, sys
from cli import main
from rescorer.cli.main import main as group

def run(args):
    try:
        main(args, prog_name="rescore")
    except SystemExit as end:
        return end.code or 0
    return 0

def helps(command, words):
    yield words + ["--help"]
    for name, sub in getattr(command, "commands", {}).items():
        yield from helps(sub, words + [name])

cases = json.loads(sys.argv[1])
codes = [run(words) for words in helps(group, [])] + [run(words) for words, _ in cases]
print(json.dumps({"codes": codes, "torch": "torch" in sys.modules}), file=sys.__stdout__)
"""


@pytest.fixture
def refusals(example_table, tmp_path):
    return [([word.format(table=example_table, out=tmp_path / "m.pt") for word in words], code)
            for words, code in REFUSALS]


def test_help_and_bad_usage_never_import_torch(refusals, tmp_path):
    probe = subprocess.run([sys.executable, "-c", PROBE, json.dumps(refusals)], capture_output=True,
                           text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr
    result = json.loads(probe.stdout.strip().splitlines()[-1])
    helps = len(result["codes"]) - len(refusals)
    assert helps > 20  # the group, its commands and the moses subcommands
    assert result["codes"] == [0] * helps + [code for _, code in refusals], probe.stderr
    assert not result["torch"]
    assert not (tmp_path / "m.pt").exists()


def test_the_probe_sees_torch_when_a_command_loads_it(tiny_model_path, example_table, tmp_path):
    """The check above could pass by never looking: a command that does work loads torch."""
    out = tmp_path / "scored.gz"
    case = [[["score", str(example_table), "--model", str(tiny_model_path), "-o", str(out), "-q"], 0]]
    probe = subprocess.run([sys.executable, "-c", PROBE, json.dumps(case)], capture_output=True, text=True,
                           timeout=300)
    assert probe.returncode == 0, probe.stderr
    result = json.loads(probe.stdout.strip().splitlines()[-1])
    assert result["codes"][-1] == 0 and result["torch"] and out.exists()
