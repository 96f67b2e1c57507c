"""OpenNMT-py 3.5.1 timed from the inside, for sentence_peer.py (runs in .venv-onmt, never in rescorer's env).

    python onmt_sentence_venv.py train --measure-after W --threads T -config onmt.yaml
    python onmt_sentence_venv.py translate --warmup-sentences K --threads T [onmt_translate options]

train: onmt_train itself (onmt.bin.train.train), with its trainer's update
(Trainer._gradient_accumulation: forward, backward, optimizer step) wrapped to read the clock
and the real target tokens (the loss's non-padding count, [EOS] included, [BOS] not) after every
update. The figure covers the updates after the first W, from the end of update W to the end of
the last: their batches' making included (num_workers 0: in this process), start-up, vocabulary
and model building, the first bucket's filling and the final checkpoint excluded.

translate: onmt_translate's engine (onmt.inference_engine.InferenceEnginePY), built once (model
load excluded), warmed on the input's first K sentences, then timed over the whole input file
(reading, beam search and writing). The predictions come back, so the caller measures their length.

Each prints one JSON object as its last line.
"""

import argparse
import json
import sys
import time


def parse(argv):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("job", choices=["train", "translate"])
    parser.add_argument("--measure-after", type=int, default=0)
    parser.add_argument("--warmup-sentences", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    return parser.parse_known_args(argv)


def train(args, onmt_argv) -> dict:
    import torch
    from onmt import trainer as onmt_trainer
    from onmt.bin.train import _get_parser, train as onmt_train

    ends, tokens, parameters = [], [], []
    update = onmt_trainer.Trainer._gradient_accumulation

    def timed_update(self, true_batches, normalization, total_stats, report_stats):
        if not parameters:
            parameters.append(sum(p.numel() for p in {id(p): p for p in self.model.parameters()}.values()))
        update(self, true_batches, normalization, total_stats, report_stats)
        ends.append(time.perf_counter())
        tokens.append(total_stats.n_words)

    onmt_trainer.Trainer._gradient_accumulation = timed_update
    torch.set_num_threads(args.threads)
    onmt_train(_get_parser().parse_args(onmt_argv))
    first = args.measure_after
    if not 1 <= first < len(ends):
        raise SystemExit(f"onmt_train made {len(ends)} updates: need more than the {first} warm-up ones (at least 1)")
    return {"updates": len(ends) - first, "seconds": ends[-1] - ends[first - 1],
            "target_tokens": int(tokens[-1] - tokens[first - 1]),
            "parameters": parameters[0], "threads": torch.get_num_threads()}


def translate(args, onmt_argv) -> dict:
    import torch
    from onmt.bin.translate import _get_parser
    from onmt.inference_engine import InferenceEnginePY
    from onmt.utils.misc import set_random_seed
    from onmt.utils.parse import ArgumentParser

    torch.set_num_threads(args.threads)
    opt = _get_parser().parse_args(onmt_argv)
    ArgumentParser.validate_translate_opts(opt)
    ArgumentParser._get_all_transform_translate(opt)
    ArgumentParser._validate_transforms_opts(opt)
    ArgumentParser.validate_translate_opts_dynamic(opt)
    set_random_seed(opt.seed, False)
    engine = InferenceEnginePY(opt)
    if args.warmup_sentences:
        with open(opt.src, encoding="utf-8") as f:
            warm = [line.rstrip("\n") for _, line in zip(range(args.warmup_sentences), f)]
        engine.infer_list(warm)
    engine.translator.out_file.seek(0)  # the output file holds the timed pass alone
    engine.translator.out_file.truncate()
    start = time.perf_counter()
    _, predictions = engine.infer_file()
    seconds = time.perf_counter() - start
    engine.terminate()
    return {"sentences": len(predictions), "seconds": seconds,
            "predictions": [best[0] for best in predictions], "threads": torch.get_num_threads()}


def main(argv=None) -> int:
    args, onmt_argv = parse(sys.argv[1:] if argv is None else argv)
    result = (train if args.job == "train" else translate)(args, onmt_argv)
    sys.stdout.flush()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
