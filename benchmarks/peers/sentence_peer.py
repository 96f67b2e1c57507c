"""rescorer's sentence Transformer against OpenNMT-py 3.5.1's on the same architecture, sizes and
data, in one run: training target tokens/s and translation sentences/s, fp32 on the CPU.

    OMP_NUM_THREADS=1 python3 benchmarks/peers/sentence_peer.py [--src train.en.gz --tgt train.fr.gz] [--threads 1]
    OMP_NUM_THREADS=1 python3 benchmarks/peers/sentence_peer.py --smoke      # about 2 minutes

The corpus's first --max-sentences line pairs (at most 80 words a side, as `rescore train
--parallel` keeps them) are segmented once by rescorer's own sentencepiece BPE
(rescorer.data.subwords, --subword-size pieces per side) and both systems train on those
pieces, with vocabularies of the same pieces: rescorer's `--arch transformer --preset small` and
OpenNMT-py's Transformer configured to match it (onmt_sentence.py, which also lists what could
not be matched; the run prints both). Each round trains a fresh model of each system for
--warmup updates, then times --updates more (real target tokens, [EOS] included, no padding),
alternating which goes first (timing.interleave); then each system's last model translates the
same --sentences source sentences (beam 5, Wu's length penalty 0.6, batches of 32, the same
length bound), once more per round, alternated, after a warm-up on the first batch. Figures are
medians over rounds, and the ratio rescorer / OpenNMT-py the median of the per-round ratios.
The models are barely trained, so their outputs run to the length bound (which the two systems
apply differently): each one's 1-best pieces per sentence, and its pieces/s, are printed too.
With --forced-length N both translate every sentence to exactly N pieces, so that the searches do
equal work whatever the models: rescorer with `--min-length N` and a length bound of N (N pieces,
then the step that scores [EOS]), OpenNMT-py with -min_length and -max_length N + 1 (N + 1 pieces,
no [EOS]): N + 1 decoder steps a hypothesis in both. OpenNMT-py runs in benchmarks/peers/.venv-onmt
(setup_onmt_venv.sh, made on first use), never in rescorer's environment; everything the run
writes goes under --work.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402

from benchmarks.peers.onmt_peer import ensure_venv  # noqa: E402
from benchmarks.peers.onmt_sentence import (UNMATCHED, Recipe, noam_rate, onmt_batch_count, onmt_batch_size,  # noqa: E402
                           onmt_train_options, onmt_translate_args, run_onmt_train, run_onmt_translate,
                           write_onmt_vocab)
from benchmarks.helpers.pairs import DEFAULT_TABLE, RESULTS_DIR  # noqa: E402
from benchmarks.helpers.timing import interleave, median  # noqa: E402

CORPUS = DEFAULT_TABLE.parent.parent / "corpus"
MAX_WORDS = 80  # words a side: what `rescore train --parallel` keeps (rescorer.training.recipes.SENTENCE_RECIPE)
SMOKE = dict(max_sentences=2000, subword_size=1000, batch_tokens=2000, warmup=2, updates=4, rounds=2,
             sentences=16)


@dataclasses.dataclass
class Corpus:
    """The benchmark's data: tokenized training pairs and translation input, their pieces, the subword models."""

    train_text: tuple  # (source, target) tokenized files
    train_pieces: tuple  # the same, as pieces
    input_text: Path
    input_pieces: Path
    sides: object  # rescorer.data.subwords.SubwordSides
    pairs: int
    dropped: int


def read_prefix(src: Path, tgt: Path, count: int) -> tuple[list[tuple[str, str]], int]:
    """The first `count` line pairs (0: all) that both systems can train on: non-empty, UTF-8,
    at most MAX_WORDS words a side; and how many of them were left out."""
    from rescorer.data.subwords import not_utf8, tokens_line

    kept, dropped = [], 0
    with gzip.open(src, "rb") as fs, gzip.open(tgt, "rb") as ft:
        for number, (s, t) in enumerate(zip(fs, ft)):
            if count and number >= count:
                break
            s, t = (tokens_line(x.decode("utf-8", "surrogateescape")) for x in (s, t))
            if not s or not t or not_utf8(s) or not_utf8(t) or max(len(s.split()), len(t.split())) > MAX_WORDS:
                dropped += 1
                continue
            kept.append((s, t))
    return kept, dropped


def read_input(path: Path, count: int) -> list[str]:
    from rescorer.data.subwords import not_utf8, tokens_line
    from rescorer.scoring.translation import read_sentences

    lines = [tokens_line(line) for line in read_sentences(path)]
    return [line for line in lines if line and not not_utf8(line)][:count]


def learned_subwords(pairs: list, size: int, work: Path):
    """One BPE model per side, learned once per corpus prefix and size (kept in `work`)."""
    from rescorer.data.subwords import SubwordModel, SubwordSides, learn_subwords

    digest = hashlib.sha256("\n".join(f"{s}\t{t}" for s, t in pairs).encode("utf-8", "surrogateescape"))
    stored = [work / f"bpe{size}-{digest.hexdigest()[:12]}.{side}.model" for side in ("src", "tgt")]
    if not all(path.exists() for path in stored):
        for index, path in enumerate(stored):
            path.write_bytes(learn_subwords([pair[index] for pair in pairs], size, "bpe").proto)
    return SubwordSides(*(SubwordModel(path.read_bytes(), "bpe") for path in stored))


def write_lines(path: Path, lines) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8", errors="surrogateescape")
    return path


def prepare_corpus(args, work: Path) -> Corpus:
    pairs, dropped = read_prefix(args.src, args.tgt, args.max_sentences)
    sides = learned_subwords(pairs, args.subword_size, work)
    sources = read_input(args.translate_input, args.sentences)
    text = (write_lines(work / "train.src.txt", (s for s, _ in pairs)),
            write_lines(work / "train.tgt.txt", (t for _, t in pairs)))
    pieces = (write_lines(work / "train.src.sp", (" ".join(sides.source.segment(s)) for s, _ in pairs)),
              write_lines(work / "train.tgt.sp", (" ".join(sides.target.segment(t)) for _, t in pairs)))
    return Corpus(text, pieces, write_lines(work / "input.txt", sources),
                  write_lines(work / "input.sp", (" ".join(sides.source.segment(s)) for s in sources)),
                  sides, len(pairs), dropped)


def train_settings(recipe: Recipe):
    """rescorer's training settings for the recipe (the sentence recipe less weight decay, which
    OpenNMT-py 3.5.1 lacks); validation and checkpoints never happen inside the timed updates."""
    from rescorer.training.settings import TrainSettings

    return TrainSettings(batch_tokens=recipe.batch_tokens, label_smoothing=recipe.label_smoothing,
                         learning_rate=recipe.learning_rate, warmup_updates=recipe.warmup_updates,
                         lr_schedule="inverse-sqrt", weight_decay=0.0, clip_norm=recipe.clip_norm,
                         seed=recipe.seed, subwords="bpe", max_pair_length=MAX_WORDS,
                         valid_every=10 ** 9, checkpoint_every=10 ** 9)


class RescorerSide:
    """rescorer's model, pair cache and trainer (a fresh model per round), and its translation."""

    def __init__(self, corpus: Corpus, recipe: Recipe, preset: str, work: Path):
        from rescorer.data.pair_sources import ParallelCorpusPairs
        from rescorer.models.settings import ModelSettings
        from rescorer.training.pipeline import PairEncoding, encode_table

        self.recipe, self.work, self.sides = recipe, work, corpus.sides
        self.src_vocab, self.tgt_vocab = corpus.sides.source.vocabulary(), corpus.sides.target.vocabulary()
        self.model_settings = ModelSettings.make(arch="transformer", preset=preset, dropout=recipe.dropout)
        self.config = self.model_settings.config(len(self.src_vocab), len(self.tgt_vocab))
        self.settings = train_settings(recipe)
        self.cache = encode_table(ParallelCorpusPairs(*corpus.train_text, utf8_only=True),
                                  PairEncoding(self.src_vocab, self.tgt_vocab, max_pair_length=MAX_WORDS,
                                               subwords=corpus.sides), work / "rescorer.cache")
        if self.cache.num_pairs != corpus.pairs:
            raise RuntimeError(f"rescorer's cache holds {self.cache.num_pairs} pairs, the corpus {corpus.pairs}")
        self.trainer = None

    def new_trainer(self):
        from rescorer.models.model_files import ModelBundle
        from rescorer.training.pipeline import new_model
        from rescorer.training.trainer import Trainer

        torch.manual_seed(self.recipe.seed)
        bundle = ModelBundle(new_model(self.model_settings, self.src_vocab, self.tgt_vocab), self.src_vocab,
                             self.tgt_vocab, subwords=self.sides)
        # the cache as its own validation set: every pair trains, as in OpenNMT-py (no validation runs here)
        trainer = Trainer(bundle, self.cache, self.settings, torch.device("cpu"), "fp32",
                          self.work / "rescorer.checkpoint", valid_cache=self.cache)
        trainer.model.train()
        return trainer

    def train(self, warmup: int, updates: int) -> dict:
        """A fresh model: `warmup` updates, then `updates` timed ones."""
        self.trainer = trainer = self.new_trainer()
        for _ in range(warmup):
            trainer.step()
        tokens, start = trainer.state.train_tokens, time.perf_counter()
        for _ in range(updates):
            trainer.step()
        seconds = time.perf_counter() - start
        return {"updates": updates, "seconds": seconds, "target_tokens": trainer.state.train_tokens - tokens}

    @property
    def parameters(self) -> int:
        model = self.trainer.model if self.trainer else self.new_trainer().model
        return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())

    def search_settings(self, length_ratio: float, forced_length: int = 0):
        from rescorer.scoring.settings import TranslateSettings

        r = self.recipe
        lengths = (dict(length_ratio=1e-9, length_slack=forced_length, min_length=forced_length)  # int(~0 x source) + N
                   if forced_length else dict(length_ratio=length_ratio, length_slack=r.length_slack))
        return TranslateSettings(beam=r.beam, alpha=r.alpha, batch_size=r.translate_batch, **lengths)

    def translate(self, input_text: Path, output: Path, length_ratio: float, forced_length: int = 0) -> dict:
        """The last trained model translates the input, as `rescore translate` does after loading it;
        the search is wrapped to note each 1-best's pieces ([EOS] not counted)."""
        from rescorer.scoring import translation

        bundle, search, pieces = self.trainer.bundle, translation.batch_beam_search, []

        def noted(*args, **kwargs):
            found = search(*args, **kwargs)
            pieces.extend(len(best[0].hypothesis.tokens) for best in found)
            return found

        bundle.model.eval()
        translation.batch_beam_search = noted
        try:
            start = time.perf_counter()
            summary = translation.translate_file(bundle, input_text, output,
                                                 self.search_settings(length_ratio, forced_length), force=True)
            seconds = time.perf_counter() - start
        finally:
            translation.batch_beam_search = search
        return {"sentences": summary.sentences, "seconds": seconds, "pieces": sum(pieces),
                "at_bound": summary.forced_ends}


class OnmtSide:
    """OpenNMT-py's runs: its config from rescorer's, a fresh model per round, its last checkpoint translating."""

    def __init__(self, corpus: Corpus, rescorer: RescorerSide, recipe: Recipe, work: Path, steps: int,
                 threads: int):
        self.recipe, self.work, self.corpus, self.steps, self.threads = recipe, work, corpus, steps, threads
        vocabs = []
        for side, sub in (("src", corpus.sides.source), ("tgt", corpus.sides.target)):
            pieces = sub.pieces[1:]  # less sentencepiece's <unk>, as rescorer's vocabulary
            write_onmt_vocab(pieces, work / f"onmt.{side}.vocab")
            vocabs.append(len(pieces))
        lengths = rescorer.cache.lengths("src"), rescorer.cache.lengths("tgt")
        self.rescorer_batches = rescorer.new_trainer().schedule.updates_per_epoch
        self.batch_size = onmt_batch_size(*lengths, self.rescorer_batches)
        self.batches = onmt_batch_count(*lengths, self.batch_size)
        self.save_model = work / "onmt"
        self.options = onmt_train_options(
            rescorer.config, recipe, src_text=corpus.train_pieces[0], tgt_text=corpus.train_pieces[1],
            src_vocab=work / "onmt.src.vocab", tgt_vocab=work / "onmt.tgt.vocab", src_vocab_size=vocabs[0] + 4,
            tgt_vocab_size=vocabs[1] + 4, batch_size=self.batch_size, bucket_size=corpus.pairs, steps=steps,
            save_model=self.save_model)
        self.parameters = None

    def train(self, warmup: int) -> dict:
        result = run_onmt_train(self.options, self.work / "onmt-train.yaml", warmup, self.threads)
        self.parameters = result["parameters"]
        return result

    def translate(self, output: Path, length_ratio: float, forced_length: int = 0) -> dict:
        model = self.work / f"onmt_step_{self.steps}.pt"
        args = onmt_translate_args(model, self.corpus.input_pieces, output, self.recipe, length_ratio,
                                   forced_steps=forced_length + 1 if forced_length else 0)
        result = run_onmt_translate(args, self.recipe.translate_batch, self.threads,
                                    self.work / "onmt-translate.log")
        result["pieces"] = sum(len(line.split()) for line in result.pop("predictions"))
        return result


def rate(result: dict, amount: str) -> float:
    return result[amount] / result["seconds"]


def print_settings(args, recipe: Recipe, corpus: Corpus, rescorer: RescorerSide, onmt: OnmtSide,
                   length_ratio: float) -> None:
    c, o = rescorer.config, onmt.options
    rows = [
        ("architecture", f"transformer, preset {args.preset}", f"{o['encoder_type']}/{o['decoder_type']}"),
        ("layers (encoder + decoder)", f"{c.encoder_layers} + {c.decoder_layers}", f"{o['enc_layers']} + {o['dec_layers']}"),
        ("d_model / feed-forward / heads", f"{c.embed_dim} / {c.hidden_size} / {c.attention_heads}",
         f"{o['hidden_size']} / {o['transformer_ff']} / {o['heads']}"),
        ("layer norm", "pre-norm (norm_first), + one after each stack", "pre-norm (its only placement), + one after each stack"),
        ("tied target embeddings", str(c.tied_embeddings), f"share_decoder_embeddings {o['share_decoder_embeddings']}"),
        ("vocabulary (source, target)", f"{c.src_vocab_size}, {c.tgt_vocab_size}",
         f"{o['src_vocab_size']}, {o['tgt_vocab_size']} (+<s>, <blank>)"),
        ("parameters", f"{rescorer.parameters:,}", f"{onmt.parameters:,}" if onmt.parameters else "?"),
        ("dropout (embeddings, residual, ffn, attention)", f"{c.dropout}", f"{o['dropout'][0]}, attention {o['attention_dropout'][0]}"),
        ("label smoothing", f"{rescorer.settings.label_smoothing}", f"{o['label_smoothing']}"),
        ("optimizer", f"Adam, peak lr {recipe.learning_rate:g}, inverse-sqrt after {recipe.warmup_updates} warm-up",
         f"adam, noam lr {noam_rate(recipe, c.embed_dim):.4g} (peak {recipe.learning_rate:g}), warmup {o['warmup_steps']}"),
        ("gradient-norm clip", f"{rescorer.settings.clip_norm}", f"{o['max_grad_norm']}"),
        ("token budget", f"--batch-tokens {recipe.batch_tokens}: {onmt.rescorer_batches} batches/epoch",
         f"batch_size {onmt.batch_size} tokens: {onmt.batches} batches/epoch (modelled)"),
        ("precision, threads", f"fp32, {torch.get_num_threads()}", f"{o['model_dtype']}, {args.threads}"),
        ("search", f"beam {recipe.beam}, alpha {recipe.alpha}, batch {recipe.translate_batch}, " + (
            f"exactly {args.forced_length} pieces, then [EOS]" if args.forced_length else
            f"int({length_ratio} x source) + {recipe.length_slack}"),
         f"beam_size {recipe.beam}, wu alpha {recipe.alpha}, batch_size {recipe.translate_batch}, " + (
             f"min_length = max_length = {args.forced_length + 1}" if args.forced_length else
             f"max_length_ratio {length_ratio}")),
    ]
    print(f"data: {corpus.pairs} sentence pairs of {args.src.name}/{args.tgt.name} ({corpus.dropped} of the first "
          f"{args.max_sentences or 'all'} left out: empty, not UTF-8 or over {MAX_WORDS} words); BPE {args.subword_size} "
          f"pieces a side (rescorer.data.subwords); {len(read_input(args.translate_input, args.sentences))} sentences of "
          f"{args.translate_input.name} to translate")
    width = max(len(row[0]) for row in rows)
    print(f"{'':{width}s}  {'rescorer':52s} OpenNMT-py 3.5.1")
    for name, ours, theirs in rows:
        print(f"{name:{width}s}  {ours:52s} {theirs}")
    print("not matched:")
    for line in UNMATCHED:
        print(f"  - {line}")


def report(train: dict, translate: dict, rounds: int, forced_length: int = 0) -> None:
    """Median rates, and the ratio as the median of the per-round ratios."""
    def line(label, results, amount, unit):
        ours = [rate(r, amount) for r in results["rescorer"]]
        theirs = [rate(r, amount) for r in results["OpenNMT-py"]]
        ratio = median([a / b for a, b in zip(ours, theirs)])
        print(f"{label}: rescorer {median(ours):,.1f} {unit}, OpenNMT-py {median(theirs):,.1f} {unit}; "
              f"rescorer / OpenNMT-py {ratio:.2f}x (rounds: {', '.join(f'{a / b:.2f}' for a, b in zip(ours, theirs))})")

    def per(results, amount, count):
        return median([r[amount] / r[count] for r in results])

    line("training", train, "target_tokens", "target tokens/s")
    print(f"  real target tokens per timed update: rescorer {per(train['rescorer'], 'target_tokens', 'updates'):.0f}, "
          f"OpenNMT-py {per(train['OpenNMT-py'], 'target_tokens', 'updates'):.0f}")
    line("translation", translate, "sentences", "sentences/s")
    ours, theirs = (per(translate[system], "pieces", "sentences") for system in ("rescorer", "OpenNMT-py"))
    if forced_length:
        print(f"  every hypothesis ran {forced_length + 1} decoder steps in both (--forced-length {forced_length}); "
              f"1-best pieces per sentence: rescorer {ours:.1f}, OpenNMT-py {theirs:.1f} (its last step writes a "
              f"piece, rescorer's scores [EOS])")
    else:
        last = translate["rescorer"][-1]
        print(f"  1-best pieces per sentence: rescorer {ours:.1f} ({last['at_bound']} of {last['sentences']} stopped "
              f"by the length bound), OpenNMT-py {theirs:.1f}; as their lengths differ, per piece:")
        line("  1-best pieces/s", translate, "pieces", "pieces/s")
    print(f"(medians of {rounds} alternated rounds)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=CORPUS / "train.en.gz")
    parser.add_argument("--tgt", type=Path, default=CORPUS / "train.fr.gz")
    parser.add_argument("--translate-input", type=Path, default=CORPUS / "dev.en.gz",
                        help="source sentences to translate (its first --sentences)")
    parser.add_argument("--max-sentences", type=int, default=0, help="the corpus's first N line pairs (0: all)")
    parser.add_argument("--preset", default="small")
    parser.add_argument("--subword-size", type=int, default=8000)
    parser.add_argument("--batch-tokens", type=int, default=4000)
    parser.add_argument("--warmup", type=int, default=5, help="untimed updates before the timed ones")
    parser.add_argument("--updates", type=int, default=20, help="timed updates per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=100, help="sentences to translate")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--forced-length", type=int, default=0, metavar="N",
                        help="translate every sentence to exactly N pieces in both systems: equal work (0: off)")
    parser.add_argument("--work", type=Path, default=RESULTS_DIR / "sentence-peer")
    parser.add_argument("--smoke", action="store_true", help="a 2-minute check: " +
                        ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in SMOKE.items()))
    args = parser.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    if args.warmup < 1 or args.updates < 1 or args.forced_length < 0:
        parser.error("--warmup and --updates must be at least 1, --forced-length at least 0")
    torch.set_num_threads(args.threads)
    ensure_venv()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    recipe = Recipe(batch_tokens=args.batch_tokens)
    started = time.perf_counter()
    corpus = prepare_corpus(args, work)
    rescorer = RescorerSide(corpus, recipe, args.preset, work)
    onmt = OnmtSide(corpus, rescorer, recipe, work, args.warmup + args.updates, args.threads)
    print(f"prepared in {time.perf_counter() - started:.0f} s; {torch.__version__}, {args.threads} thread(s)", flush=True)
    if args.warmup + args.updates > onmt.rescorer_batches:
        print(f"note: {args.warmup + args.updates} updates pass an epoch ({onmt.rescorer_batches} batches): inside "
              f"the timed ones OpenNMT-py refills its bucket and rescorer draws the next epoch's batches")

    train = interleave({"rescorer": lambda: rescorer.train(args.warmup, args.updates),
                        "OpenNMT-py": lambda: onmt.train(args.warmup)}, args.rounds)
    length_ratio = rescorer.trainer.length_cap["ratio"]  # measured on the training pieces
    forced = args.forced_length
    rescorer.translate(write_lines(work / "warm.txt", read_input(args.translate_input, recipe.translate_batch)),
                       work / "warm.out", length_ratio, forced)  # the model's first batch, untimed
    translate = interleave({"rescorer": lambda: rescorer.translate(corpus.input_text, work / "rescorer.out",
                                                                   length_ratio, forced),
                            "OpenNMT-py": lambda: onmt.translate(work / "onmt.out", length_ratio, forced)}, args.rounds)
    print_settings(args, recipe, corpus, rescorer, onmt, length_ratio)
    print(f"timed: {args.updates} updates after {args.warmup} per round; {len(read_input(args.translate_input, args.sentences))} sentences")
    report(train, translate, args.rounds, forced)
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
