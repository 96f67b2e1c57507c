"""Held-out perplexity of a CSLM (`rescore train --lm`) beside the bench's 4-gram KenLM, on the
same text, counted the same way.

Both models predict every word of a sentence and then its end (</s>, the CSLM's [EOS]), the
left context padded with the sentence begin; the perplexity is exp(-sum of ln p / that count).
The two differ only in what an unknown word is: KenLM's vocabulary is all of train.fr and it
scores a word it never saw as <unk>; the CSLM's is a shortlist and it scores every word outside
it as [UNK] (a whole class of words, so its p is too high: Cho et al., footnote 3). So the table
gives both figures over all tokens (words outside the vocabulary included, as `kenlm`'s
perplexity() counts them: the 45.1 and 51.5 of the bench's README), and both over the tokens the
CSLM knows (its shortlist's words and the ends) where neither model's unknown-word guess enters.
Mean |log Z| is how far the CSLM's softmax is from self-normalized (0 for NPLM's export).

    python benchmarks/studies/cslm_perplexity.py cslm.pt [--kenlm lm/fr.binlm] [--text dev.fr.gz ...]
"""

from __future__ import annotations

import argparse
import gzip
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from rescorer.data.lm_corpus import ngram_stream  # noqa: E402
from rescorer.models.lm_files import load_lm  # noqa: E402
from rescorer.scoring.lm_scoring import word_log_probs  # noqa: E402
from rescorer.training.lm_trainer import held_out_figures  # noqa: E402

BENCH = HERE.parents[2] / "shared" / "data" / "bible-en-fr"
LN10 = math.log(10)


def read_sentences(path: Path) -> list[list[str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.split() for line in handle]


def kenlm_word_log_probs(model, sentences: list[list[str]]) -> tuple[list[np.ndarray], int]:
    """ln p of each word and </s> of each sentence, and how many words are KenLM OOVs."""
    per_sentence, oovs = [], 0
    for words in sentences:
        scores = list(model.full_scores(" ".join(words), bos=True, eos=True))
        oovs += sum(1 for _, _, oov in scores if oov)
        per_sentence.append(np.array([log10 * LN10 for log10, _, _ in scores]))
    return per_sentence, oovs


def perplexity(logps: np.ndarray) -> float:
    return math.exp(-logps.sum() / len(logps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="CSLM file (rescore train --lm)")
    parser.add_argument("--kenlm", type=Path, default=BENCH / "lm" / "fr.binlm")
    parser.add_argument("--text", type=Path, nargs="+",
                        default=[BENCH / "corpus" / "dev.fr.gz", BENCH / "corpus" / "test.fr.gz"])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    import kenlm

    device = torch.device(args.device)
    bundle = load_lm(args.model, device)
    kenlm_model = kenlm.Model(str(args.kenlm))
    print(f"CSLM {args.model}: order {bundle.config.order}, embeddings {bundle.config.embedding_size}, hidden "
          f"{'x'.join(map(str, bundle.config.hidden_sizes))}, shortlist {len(bundle.vocab) - 4} words, "
          f"{bundle.training.get('state', {}).get('updates', '?')} updates; KenLM {args.kenlm.name} "
          f"(order {kenlm_model.order}); device {device.type}, {torch.get_num_threads()} threads")
    print()
    print("| text | sentences | tokens (words + ends) | KenLM OOV | CSLM [UNK] | KenLM ppl | CSLM ppl "
          "| KenLM ppl, CSLM-known tokens | CSLM ppl, CSLM-known tokens | CSLM mean abs log Z | CSLM s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in args.text:
        sentences = read_sentences(path)
        started = time.perf_counter()
        cslm = np.concatenate(word_log_probs(bundle, sentences, device))
        seconds = time.perf_counter() - started
        ngrams = ngram_stream(sentences, bundle.vocab, bundle.config.order)
        figures = held_out_figures(bundle.model, ngrams, ngrams.targets, device)
        known = ngrams.stream[ngrams.targets] != 1  # [UNK]: the words outside the shortlist
        kenlm_logps, oovs = kenlm_word_log_probs(kenlm_model, sentences)
        kenlm_all = np.concatenate(kenlm_logps)
        assert len(kenlm_all) == len(cslm), "both models predict each word and each end"
        print(f"| {path.name} | {len(sentences)} | {len(cslm)} | {oovs} | {int((~known).sum())} "
              f"| {perplexity(kenlm_all):.2f} | {perplexity(cslm):.2f} | {perplexity(kenlm_all[known]):.2f} "
              f"| {perplexity(cslm[known]):.2f} | {figures.mean_abs_log_z:.3f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
