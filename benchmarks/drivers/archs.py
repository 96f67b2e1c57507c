"""Model-only scoring speed of every architecture's `paper` preset (issue 8), on the same pairs.

Each architecture is randomly initialised (seed 0) at its paper sizes but with the real table's
15,000-word shortlists (the papers' own 30k/50k vocabularies would only make the output layers
larger than this table needs), and scores the same evenly spaced sample of real pairs through
`rescorer.scoring.batch_scoring.score_encoded`. Rounds are interleaved (cho2014, rnnsearch, luong, luong,
rnnsearch, ...) and each architecture's speed relative to cho2014 is the median of per-round
ratios, since the machine is shared.

    python benchmarks/drivers/archs.py [--archs cho2014,luong] [--pairs 600] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from benchmarks.helpers import ours  # noqa: E402
from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR, sample_pairs  # noqa: E402
from benchmarks.drivers.report import format_archs  # noqa: E402
from rescorer.errors import ModelSettingError  # noqa: E402
from rescorer.models.flops import flops_per_batch  # noqa: E402
from rescorer.models import architecture_names, count_parameters, get_architecture  # noqa: E402

__all__ = ["parse_archs", "model_only_archs"]


def parse_archs(text: str) -> list:
    """'all' or a comma list of registered architectures (an unknown one is refused naming the valid)."""
    names = architecture_names() if text == "all" else [name.strip() for name in text.split(",") if name.strip()]
    try:
        for name in names:
            get_architecture(name)
    except ModelSettingError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return names


def model_only_archs(archs: list, vocabs, num_pairs: int, rounds: int, log=print,
                     precisions=("fp32", "bf16", "int8")) -> dict:
    """pairs/s, MFLOP/pair and speed relative to the first architecture (fp32), per architecture,
    and each one's bf16 and int8 speed over its fp32 (the same rounds)."""
    pairs = sample_pairs(num_pairs)
    bundles = {arch: ours.make_bundle("paper", *vocabs, arch=arch) for arch in archs}
    scorers = {(arch, precision): ours.int8_bundle(bundle) if precision == "int8" else bundle
               for arch, bundle in bundles.items() for precision in precisions}
    data = ours.encode(next(iter(bundles.values())), pairs)  # the same shortlists for all
    for (arch, precision), scorer in scorers.items():
        ours.warm_up(scorer, data, precision=precision)
    times = {key: [] for key in scorers}
    for index in range(rounds):
        log(f"architectures, paper presets: round {index + 1}/{rounds}")
        for key in (list(scorers) if index % 2 == 0 else list(scorers)[::-1]):
            times[key].append(ours.time_model_only(scorers[key], data, precision=key[1]))
    first = archs[0]
    results = {}
    for arch, bundle in bundles.items():
        fp32 = times[arch, "fp32"]
        seconds = statistics.median(fp32)
        flops = flops_per_batch(bundle.config, data.src_lengths, data.tgt_lengths) / len(data.src)
        results[arch] = {
            "settings": {k: v for k, v in bundle.config.to_dict().items() if v is not None},
            "parameters": count_parameters(bundle.model), "pairs": len(data.src), "seconds": seconds,
            "pairs_per_s": len(data.src) / seconds, "flops_per_pair": flops,
            "gflops": flops * len(data.src) / seconds / 1e9,
            f"speed_over_{first}": statistics.median(a / b for a, b in zip(times[first, "fp32"], fp32)),
            "rounds": fp32}
        for precision in precisions[1:]:
            other = times[arch, precision]
            results[arch][precision] = {"pairs_per_s": len(data.src) / statistics.median(other),
                                        "speed_over_fp32": statistics.median(a / b for a, b in zip(fp32, other)),
                                        "rounds": other}
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", type=parse_archs, default="all", help="comma list, or all (default)")
    parser.add_argument("--pairs", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    vocabs = ours.load_shortlists(DEFAULT_TABLE, RESULTS_DIR)
    print("\n".join(format_archs(model_only_archs(args.archs, vocabs, args.pairs, args.rounds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
