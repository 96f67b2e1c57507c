"""The proxy bench (issue 44): BLEU of phrase-table columns, sentence models and ablations
judged in minutes on the stored n-best lists of the bible bench, without Moses.

    # 1. the phrase pairs the stored lists use, as table lines, for `rescore score`:
    python benchmarks/studies/proxy/proxy_bench.py pairs -o WORK/pairs.gz
    rescore score WORK/pairs.gz --model fwd.pt --per-word --unk-penalty -o WORK/scored.gz
    # 2. the systems, tuned on the odd dev verses, scored on all 802 test verses:
    python benchmarks/studies/proxy/proxy_bench.py run --table WORK/scored.gz \
        --column fwd=-3 --column fwdpw=-2 --column wp=-1 \
        --system +RNN=fwd --system +RNN+WP=fwd,wp --system -LM0=-LM0 \
        --replicates 3 --out benchmarks/studies/proxy/results/NAME

A system is `NAME=ITEM,ITEM,...`: an item is a column named by `--column NAME=INDEX` (the scored
table's score column, 1 the first, -1 the last, `/word` for the value per target word), a
sentence model named by `--sentence-model NAME=MODEL.pt` (NAME its log p, NAMEpw per word of the
side it predicts), a target language model (the CSLM) named by `--lm NAME=MODEL.pt` (the same of
the hypothesis), an ensemble of those named by `--mixture NAME=MODEL,MODEL` (their mixture), or `-FEATURE` to leave one of the lists' features out (`-LM0`,
`-TranslationModel0_2`). Baseline (the lists' own features) is always the first row. Each
replicate r tunes every system once by MERT in numpy (seed r, 20 random restarts by default)
from the lists' tuned weights, as the bench's mert-moses.pl runs start from them; new features
start at 0. `--optimizer pro` tunes by PRO instead (Hopkins and May's tuning as ranking, seed r
drawing its pairs; no start, no restarts).

Written to --out: results.tsv (summarize()'s columns, as `moses ablation` reports them),
results.md (the table), replicates.tsv (each run's dev and test BLEU, chrF and weights) and
run.json (the command, the machine, the time each phase took).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from moses_integration.errors import NbestFormatError  # noqa: E402
from moses_integration.ini.moses_ini import MosesIni  # noqa: E402
from moses_integration.line_files import read_lines  # noqa: E402
from moses_integration.nbest.nbest_file import read_nbest_list  # noqa: E402
from moses_integration.nbest.reranking import start_weights  # noqa: E402
from moses_integration.proxy.bench import (BenchTuning, ProxySystem, bench_set, decoder_first_best,  # noqa: E402
                                           run_bench)
from moses_integration.proxy.phrase_columns import (phrase_pairs_of, read_table_columns,  # noqa: E402
                                                    column_sums, table_column, write_pair_table)
from moses_integration.proxy.report import markdown_table  # noqa: E402
from rescorer.counts import counted  # noqa: E402
from rescorer.io.atomic_output import write_atomically  # noqa: E402

DATA = HERE.parents[3] / "shared" / "data" / "bible-en-fr"  # ../shared beside the checkout


def _files(data: Path) -> dict:
    return {"dev": (data / "nbest/dev.nbest200.gz", data / "corpus/dev.en.gz",
                    [data / "corpus/dev.fr.gz", data / "corpus/dev.ref-darby.fr.gz"]),
            "test": (data / "nbest/test.nbest200.gz", data / "corpus/test.en.gz",
                     [data / "corpus/test.fr.gz", data / "corpus/test.ref-darby.fr.gz"]),
            "ini": data / "tuning/moses.ini", "table": data / "model/phrase-table.gz"}


def read_side(files: tuple, rows=None, size=None):
    """The stored lists of a set (only the sentences `rows`; only each one's first `size`
    hypotheses) and its references."""
    nbest_path, src_path, ref_paths = files
    sources = read_lines(src_path)
    references = [read_lines(path) for path in ref_paths]
    for path, stream in zip(ref_paths, references):
        if len(stream) != len(sources):
            raise SystemExit(f"proxy_bench.py: {path}: {counted(len(stream), 'line')}, but the source {src_path} has "
                             f"{len(sources)}")
    nbest = read_nbest_list(nbest_path, sources, str(src_path))
    if size is not None:
        nbest = nbest.first(size)
    if rows is not None:
        nbest = nbest.rows(rows)
        references = [[stream[i] for i in rows] for stream in references]
    return nbest, references


def parse_named(text: str, option: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise SystemExit(f"proxy_bench.py: {option} {text!r}: expected NAME=VALUE")
    return name, value


def column_reader(spec: str, num_scores: int, found: dict):
    """`-3/word` -> the value of that column as the decoder reads it (per target word)."""
    index_text, _, unit = spec.partition("/")
    index = int(index_text)
    if unit not in ("", "word") or index == 0 or abs(index) > num_scores:
        raise SystemExit(f"proxy_bench.py: --column index {spec!r}: expected 1..{num_scores} or -1..-{num_scores}, "
                         f"optionally /word")
    return table_column(found, index - 1 if index > 0 else num_scores + index, per_word=unit == "word")


def parse_system(text: str) -> ProxySystem:
    name, items = parse_named(text, "--system")
    parts = [item.strip() for item in items.split(",") if item.strip()]
    return ProxySystem(name, tuple(p for p in parts if not p.startswith("-")),
                       tuple(p[1:] for p in parts if p.startswith("-")))


def sentence_features(models: list, sides: dict, cache_dir=None, lms: list = (), mixtures: list = ()) -> None:
    """Each named sentence model's log p of every hypothesis given its source, and each named
    target language model's (the CSLM: `rescore train --lm`) log p of the hypothesis, in-process,
    torch, fp32, as the feature NAME, and per word of the side the model predicts as NAMEpw (the
    hypothesis, or the source for an inverse model), as `moses rerank` adds them. With
    `cache_dir`, a model's scores of one list are kept there, named by the model's and the pairs'
    checksums, and read back instead of scoring again. Each of `mixtures` (NAME, [MODEL NAME, ...])
    adds the ensemble of those models as one feature: their mixture log((p_1 + ... + p_n) / n),
    as `rescore score --ensemble` mixes phrase models, and its per-word form."""
    import numpy as np

    named = []
    if models:
        from rescorer.scoring.rnn_scorer import InProcessScorer

        scorer = InProcessScorer("cpu", "fp32")
        named += [(name, path, scorer.direction(Path(path)) == "inverse",
                   lambda pairs, path=path: scorer.score_pairs(Path(path), pairs)) for name, path in models]
    if lms:
        from rescorer.scoring.lm_scoring import InProcessLmScorer

        lm_scorer = InProcessLmScorer("cpu", "fp32")
        named += [(name, path, False,
                   lambda pairs, path=path: lm_scorer.score_sentences(Path(path), [h for _, h in pairs]))
                  for name, path in lms]
    words_of = {}  # (side, model name): the words of the side the model predicts, per hypothesis
    for name, model, inverse, score in named:
        model_sum = _checksum(Path(model).read_bytes()) if cache_dir is not None else None
        for side, data in sides.items():
            nbest = data.nbest
            sentence_of = nbest.sentence_of_rows()
            pairs = [(nbest.sources[s], h) for s, h in zip(sentence_of, nbest.hypotheses)]
            distinct = list(dict.fromkeys(pairs))
            cached = None if cache_dir is None else Path(cache_dir) / f"{model_sum}-{_checksum(repr(distinct).encode())}.npy"
            if cached is not None and cached.is_file():
                values = np.load(cached)
            else:
                values = np.asarray(score(distinct), dtype=float)
                if cached is not None:
                    cached.parent.mkdir(parents=True, exist_ok=True)
                    with open(cached.with_suffix(".partial"), "wb") as handle:
                        np.save(handle, values)
                    cached.with_suffix(".partial").replace(cached)
            scores = dict(zip(distinct, values))
            data.added[name] = np.array([scores[pair] for pair in pairs])
            words = np.array([max(1, len((source if inverse else hypothesis).split())) for source, hypothesis in pairs])
            data.added[name + "pw"] = data.added[name] / words
            words_of[side, name] = words
    predicts = {name: inverse for name, _, inverse, _ in named}
    for name, members in mixtures:
        unknown = [member for member in members if member not in predicts]
        if unknown or len({predicts[member] for member in members}) != 1:
            raise SystemExit(f"proxy_bench.py: --mixture {name}: expected the names of sentence models or LMs that "
                             f"predict the same side, found {', '.join(members)}")
        for side, data in sides.items():
            data.added[name] = np.logaddexp.reduce([data.added[m] for m in members], axis=0) - np.log(len(members))
            data.added[name + "pw"] = data.added[name] / words_of[side, members[0]]


def _checksum(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]


def run(args) -> None:
    files = _files(args.data)
    clock = {"start": time.time()}
    dev_rows = list(range(0, 842, 2))  # the bench's MERT dev set: the odd lines (1st, 3rd, ...)
    dev = bench_set(*read_side(files["dev"], dev_rows, args.nbest_size))
    test = bench_set(*read_side(files["test"], size=args.nbest_size))
    clock["read"] = time.time()
    columns = [parse_named(c, "--column") for c in args.column]
    if columns:
        if not args.table:
            raise SystemExit("proxy_bench.py: --column needs --table")
        sides = {"dev": dev, "test": test}
        pairs = {side: phrase_pairs_of(data.nbest) for side, data in sides.items()}
        wanted = set(pairs["dev"].pairs) | set(pairs["test"].pairs)
        num_scores, found = read_table_columns(args.table, wanted)
        for name, spec in columns:
            value_of = column_reader(spec, num_scores, found)
            for side, data in sides.items():
                data.added[name] = column_sums(data.nbest, pairs[side], value_of, name, str(args.table))
    if args.sentence_model or args.lm or args.mixture:  # a mixture of no models is refused, not left out
        mixtures = [(name, members.split(",")) for name, members in (parse_named(m, "--mixture") for m in args.mixture)]
        sentence_features([parse_named(m, "--sentence-model") for m in args.sentence_model],
                          {"dev": dev, "test": test}, args.cache_dir, [parse_named(m, "--lm") for m in args.lm],
                          mixtures)
    clock["features"] = time.time()
    systems = [ProxySystem("Baseline")] + [parse_system(s) for s in args.system]
    start = start_weights(MosesIni.read(files["ini"]), dev.nbest.feature_names, 0.0)
    tuning = BenchTuning(start, args.restarts, args.spread, args.optimizer)
    result = run_bench(systems, dev, test, tuning, list(range(1, args.replicates + 1)),
                       progress=lambda line: print(line, file=sys.stderr, flush=True))
    clock["bench"] = time.time()
    first_best = decoder_first_best(test)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(out / "results.tsv", result.summary.to_csv(sep="\t", index=False).encode())
    write_atomically(out / "replicates.tsv", result.replicates.to_csv(sep="\t", index=False).encode())
    write_atomically(out / "results.md", markdown_table(result.summary, first_best, len(test.references),
                                                        test.nbest.num_sentences, dev.nbest.num_sentences,
                                                        tuning, args.nbest_size or 200).encode())
    run_record = {"argv": [_without_folders(a) for a in sys.argv[1:]], "machine": platform.processor() or platform.machine(),
                  "cpu": _cpu_name(), "seconds": {"read": round(clock["read"] - clock["start"], 1),
                                                  "features": round(clock["features"] - clock["read"], 1),
                                                  "tune_and_score": round(clock["bench"] - clock["features"], 1)},
                  "systems": len(systems), "replicates": args.replicates, "restarts": args.restarts,
                  "spread": args.spread, **({"nbest_size": args.nbest_size} if args.nbest_size else {}),
                  **({"optimizer": args.optimizer} if args.optimizer != "mert" else {})}
    write_atomically(out / "run.json", (json.dumps(run_record, indent=2) + "\n").encode())
    print((out / "results.md").read_text())


def _without_folders(arg: str) -> str:
    """An argument as run.json keeps it: an absolute path (alone or as NAME=PATH) by its file's
    name, so that no machine's folders reach a committed file."""
    name, sep, value = arg.rpartition("=")
    if Path(value).is_absolute():
        return name + sep + Path(value).name
    return arg


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def pairs(args) -> None:
    files = _files(args.data)
    wanted: set = set()
    for side in ("dev", "test"):
        nbest, _ = read_side(files[side])
        wanted |= set(phrase_pairs_of(nbest).pairs)
    written = write_pair_table(args.table or files["table"], wanted, args.output, force=args.force)
    print(f"{args.output}: {written} table lines for {len(wanted)} distinct phrase pairs of the dev and test "
          f"lists (the rest are unknown words passed through)", file=sys.stderr)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the bible-en-fr folder [%(default)s]")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pairs", help="the table lines of the phrase pairs the lists use")
    p.add_argument("--table", type=Path, help="phrase table [DATA/model/phrase-table.gz]")
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--force", action="store_true")
    p.set_defaults(func=pairs)
    r = sub.add_parser("run", help="tune, rerank and score the systems")
    r.add_argument("--table", type=Path, help="a table holding every pair the lists use (e.g. scored pairs)")
    r.add_argument("--column", action="append", default=[], help="NAME=INDEX[/word]")
    r.add_argument("--sentence-model", action="append", default=[],
                   help="NAME=MODEL.pt: the features NAME (log p) and NAMEpw (per word of the side it predicts)")
    r.add_argument("--lm", action="append", default=[],
                   help="NAME=CSLM.pt: a target language model (rescore train --lm): NAME its log p of the "
                        "hypothesis, NAMEpw per hypothesis word")
    r.add_argument("--mixture", action="append", default=[],
                   help="NAME=MODEL,MODEL,...: the named sentence models' (or LMs') mixture as one feature, "
                        "their ensemble (NAME and NAMEpw)")
    r.add_argument("--nbest-size", type=int, help="only each sentence's first N hypotheses [all 200]")
    r.add_argument("--cache-dir", type=Path, help="keep the sentence models' scores here, to reuse in a later run")
    r.add_argument("--system", action="append", default=[], help="NAME=ITEM,ITEM,... (-FEATURE drops one)")
    r.add_argument("--optimizer", choices=("mert", "pro"), default="mert",
                   help="MERT (line search from the lists' weights) or PRO (tuning as ranking) [mert]")
    r.add_argument("--replicates", type=int, default=3)
    r.add_argument("--restarts", type=int, default=20)
    r.add_argument("--spread", type=float, default=0.3,
                   help="restarts near the start (weights x (1 + SPREAD N(0,1))); 0: mert's uniform [0, 1]")
    r.add_argument("--out", type=Path, required=True)
    r.set_defaults(func=run)
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (NbestFormatError, ValueError) as error:
        raise SystemExit(f"proxy_bench.py: {error}") from None


if __name__ == "__main__":
    main()
