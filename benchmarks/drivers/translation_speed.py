"""How much batching buys `rescore translate`: sentences/s of the beam search over batches of
sentences against the same search one sentence at a time (rescorer.models.search), on the same
model and sentences, alternated in one run so that machine noise hits both alike. The outputs
are checked equal. With --batch-size 1 it measured the merge of the two searches (issue 46):
translation_speed_one_source.tsv.

    OMP_NUM_THREADS=1 python3 benchmarks/drivers/translation_speed.py MODEL SOURCES [--sentences 100] [--beam 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: rescorer, benchmarks
from benchmarks.helpers.timing import interleave, median  # noqa: E402
from rescorer.models.batch_search import batch_beam_search  # noqa: E402
from rescorer.models.model_files import load_model  # noqa: E402
from rescorer.models.search import beam_search  # noqa: E402
from rescorer.scoring.translation import (SearchSettings, max_output_length, read_sentences,  # noqa: E402
                                         with_length_cap)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("sources")
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bundle = load_model(args.model)
    source = bundle.src_encoding  # words through the shortlist, or the model's subword pieces
    sources = [source.vocab.encode(source.units(line)) for line in read_sentences(args.sources) if line.split()]
    sources = sources[:args.sentences]
    settings = with_length_cap(bundle, SearchSettings(beam=args.beam, nbest_size=args.beam))
    lengths = [max_output_length(len(ids), settings) for ids in sources]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))

    def batched() -> float:
        start = time.perf_counter()
        for at in range(0, len(order), args.batch_size):
            chunk = order[at:at + args.batch_size]
            batch_beam_search(bundle.model, [sources[i] for i in chunk], args.beam, [lengths[i] for i in chunk],
                              alpha=0.0, nbest=args.beam)
        return time.perf_counter() - start

    def one_by_one() -> float:
        start = time.perf_counter()
        for ids, length in zip(sources, lengths):
            beam_search(bundle.model, ids, args.beam, length)
        return time.perf_counter() - start

    check = batch_beam_search(bundle.model, sources[:8], args.beam, lengths[:8], alpha=0.0, nbest=args.beam)
    for ids, length, found in zip(sources[:8], lengths[:8], check):
        assert [t.hypothesis.tokens for t in found] == [h.tokens for h in beam_search(bundle.model, ids, args.beam, length)]
    times = interleave({"batched": batched, "one by one": one_by_one}, args.rounds)
    print(f"{bundle.config.arch} {args.model}: {len(sources)} sentences, beam {args.beam}, batch "
          f"{args.batch_size}, {torch.get_num_threads()} thread(s), median of {args.rounds} alternated rounds")
    for name, samples in times.items():
        print(f"  {name:11s} {len(sources) / median(samples):7.2f} sentences/s")
    print(f"  batched / one by one: {median(times['one by one']) / median(times['batched']):.2f}x")


if __name__ == "__main__":
    main()
