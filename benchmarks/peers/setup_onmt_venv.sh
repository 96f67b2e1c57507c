#!/usr/bin/env bash
# Create benchmarks/peers/.venv-onmt: a clean virtual environment holding OpenNMT-py 3.5.1, the peer
# the benchmark compares against. OpenNMT-py declares torch<2.3; we install the same torch as
# the project (2.13.0, CPU build) and OpenNMT-py with --no-deps, then its dependencies with
# torch pinned by a constraints file so pip never swaps torch. Never a dependency of rescorer.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${ONMT_VENV:-$here/.venv-onmt}"
torch_version="${TORCH_VERSION:-2.13.0}"

if [[ -x "$venv/bin/onmt_translate" ]] && "$venv/bin/python" -c "import onmt.bin.translate" 2>/dev/null; then
    echo "OpenNMT-py venv ready: $venv" >&2
    exit 0
fi
python3 -m venv "$venv"
pip="$venv/bin/pip"
"$pip" install --quiet --upgrade pip wheel
"$pip" install --quiet "torch==$torch_version"
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
echo "torch==$torch_version" > "$constraints"
"$pip" install --quiet --no-deps "OpenNMT-py==3.5.1"
# OpenNMT-py's own install_requires, read from its metadata, less torch (pinned above);
# spacy among them is imported by onmt.
mapfile -t requirements < <("$venv/bin/python" -c '
import importlib.metadata as m, re
for r in m.requires("OpenNMT-py") or []:
    if re.match(r"torch\b", r) is None and "extra ==" not in r:
        print(r.replace(" ", ""))
')
"$pip" install --quiet -c "$constraints" "${requirements[@]}"
"$venv/bin/python" -c "import torch, onmt; print('OpenNMT-py venv ready:', '$venv', 'torch', torch.__version__)" >&2
