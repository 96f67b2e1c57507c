"""OpenNMT-py's gold-scoring functions called directly, without decoding (runs in .venv-onmt).

This is the second, kinder peer figure: ``onmt_translate`` always decodes as well, while a user
who only wants scores could call the translator's own ``_run_encoder`` and ``_score_target``
(what ``-verbose`` prints as GOLD SCORE) on OpenNMT's own batches. Batches are built first and
excluded from the timing, so this times the model and OpenNMT's scoring code only.

Usage (inside the venv): python onmt_direct.py -model M.pt -src S -tgt T [-batch_size 64]
Prints one JSON object: pairs, seconds, mean gold score.
"""

import json
import sys
import time

import torch
from onmt.constants import CorpusTask
from onmt.inputters.dynamic_iterator import build_dynamic_dataset_iter
from onmt.opts import translate_opts
from onmt.transforms import get_transforms_cls
from onmt.translate.translator import build_translator
from onmt.utils.logging import init_logger
from onmt.utils.parse import ArgumentParser


def main() -> int:
    parser = ArgumentParser(description="onmt_direct.py")
    translate_opts(parser)
    opt = parser.parse_args()
    ArgumentParser.validate_translate_opts(opt)
    ArgumentParser._get_all_transform_translate(opt)
    ArgumentParser._validate_transforms_opts(opt)
    ArgumentParser.validate_translate_opts_dynamic(opt)
    logger = init_logger(opt.log_file)
    translator = build_translator(opt, opt.gpu, logger=logger, report_score=False)
    transforms_cls = get_transforms_cls(opt._all_transform)
    infer_iter = build_dynamic_dataset_iter(opt, transforms_cls, translator.vocabs,
                                            task=CorpusTask.INFER, device_id=opt.gpu)
    batches = [batch for batch, _ in infer_iter]
    model = translator.model
    model.eval()

    def score_all():
        total, count = 0.0, 0
        with torch.no_grad():
            for batch in batches:
                src, enc_final_hs, enc_out, src_len = translator._run_encoder(batch)
                model.decoder.init_state(src, enc_out, enc_final_hs)
                gold, _ = translator._score_target(batch, enc_out, src_len, None)
                total += float(gold.sum())
                count += gold.numel()
        return total, count

    with torch.no_grad():  # warm-up: one batch, so one-time kernel set-up is not timed
        src, enc_final_hs, enc_out, src_len = translator._run_encoder(batches[0])
        model.decoder.init_state(src, enc_out, enc_final_hs)
        translator._score_target(batches[0], enc_out, src_len, None)
    start = time.perf_counter()
    total, count = score_all()
    seconds = time.perf_counter() - start
    print(json.dumps({"pairs": count, "seconds": seconds, "mean_gold_score": total / max(count, 1),
                      "batches": len(batches), "threads": torch.get_num_threads()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
