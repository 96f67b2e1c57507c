"""The tables of docs/proxy-study.md, made from the committed result files under
benchmarks/studies/proxy/results/, so that no figure on the page is typed by hand.

    python benchmarks/studies/proxy/study_tables.py            # says which tables differ from the files
    python benchmarks/studies/proxy/study_tables.py --write    # writes them into the page

Each table stands on the page between `<!-- table: NAME -->` and `<!-- end table -->`; NAME is
one of TABLES below (benchmarks/helpers/page_tables.py). tests/test_docs.py fails when a table
on the page is not the one the files give (a study rerun and not regenerated, or a figure edited
by hand).
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from benchmarks.helpers import page_tables  # noqa: E402

RESULTS = HERE / "results"
PAGE = HERE.parents[2] / "docs" / "proxy-study.md"
MINUS = "\u2212"
DEFAULT_SYSTEM = "+fwdpw+inv"  # the best phrase system; every later row replaces its fwdpw column


# -- formatting ----------------------------------------------------------------------------------
def signed(value: float) -> str:
    """+0.13, −0.07, or 0.00 for what rounds to zero."""
    text = f"{abs(value):.2f}"
    return "0.00" if text == "0.00" else ("+" if value > 0 else MINUS) + text


def spread(mean: float, sd: float) -> str:
    return f"{mean:.2f} ± {sd:.2f}"


def thousands(number: int) -> str:
    return f"{number:,}"


def row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def table(header: tuple, rows: list) -> str:
    return "\n".join([row(*header), "|" + "---|" * len(header), *rows]) + "\n"


# -- reading -------------------------------------------------------------------------------------
def results(folder: str) -> pd.DataFrame:
    return pd.read_csv(RESULTS / folder / "results.tsv", sep="\t").set_index("system")


def replicate_bleu(folder: str, system: str) -> list:
    replicates = pd.read_csv(RESULTS / folder / "replicates.tsv", sep="\t")
    return list(replicates[replicates.system == system].sort_values("replicate").test_bleu)


def against(folder: str, system: str, base: str) -> str:
    """Δ test BLEU of `system` against `base`, then per replicate (same seed, same start)."""
    frame = results(folder)
    mean = frame.loc[system, "test_bleu_mean"] - frame.loc[base, "test_bleu_mean"]
    pairs = zip(replicate_bleu(folder, system), replicate_bleu(folder, base))
    return f"{signed(mean)} ({', '.join(signed(a - b) for a, b in pairs)})"


def summary_line(log: Path) -> str:
    """The last summary line `rescore train` wrote into a training log."""
    return [line for line in log.read_text().splitlines() if line.startswith("trained on ")][-1]


def training_summary(log: Path) -> dict:
    """A training log's figures, from its summary line: updates, whether early stopping ended
    it, the best update, held-out perplexity, honest, unigram and seconds."""
    found = re.search(r": (\d+) updates, stopped: (.*?); valid perplexity ([\d.]+) \(update (\d+); honest ([\d.]+) "
                      r".*?unigram ([\d.]+); \d+ target tokens/s; ([\d.]+) s;", summary_line(log))
    updates, stopped, ppl, best, honest, unigram, seconds = found.groups()
    return {"updates": int(updates), "early": "did not improve" in stopped, "best": int(best), "ppl": ppl,
            "honest": honest, "unigram": unigram, "seconds": float(seconds)}


def summary_cells(trained: dict) -> list:
    """A training_summary's cells: its updates (the best one's), and its held-out perplexity
    (the unigram model's; honest)."""
    return [f"{thousands(trained['updates'])} (best at {thousands(trained['best'])})",
            f"{trained['ppl']} ({trained['unigram']}); honest {trained['honest']}"]


def default_training() -> dict:
    """The default forward model's figures (training_summary)."""
    return training_summary(RESULTS / "models" / "fwd.train.log")


def verbatim(path: Path) -> str:
    """A results.md's table as written, with what follows it up to the first blank line."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    kept = lines[start:end]
    if end < len(lines) - 1 and not lines[end].strip() and not lines[end + 1].startswith("Proxy bench:"):
        kept += ["", lines[end + 1]]
    return "\n".join(kept) + "\n"


# -- the tables ----------------------------------------------------------------------------------
def study() -> str:
    return verbatim(RESULTS / "near" / "results.md")


def proxy_vs_real() -> str:
    return verbatim(RESULTS / "near" / "proxy_vs_real.md")


def wide_real() -> str:
    """real_wide_rows.sh's run: Baseline without one feature on real Moses, one replicate."""
    return verbatim(RESULTS / "real-wide" / "results.md")


def wide_real_replicates() -> str:
    """real_wide_rows.sh again with SEEDS='1 2 3': three MERT replicates a row, the 15-minute
    main job's column among them."""
    return verbatim(RESULTS / "real-wide-replicates" / "results.md")


def speed_proxy_alone() -> str:
    """The 15-minute main job's column alone on the proxy, the model of the real rows."""
    return verbatim(RESULTS / "speed-real" / "results.md")


def wide_proxy() -> str:
    """The same systems on the proxy (proxy_bench.py run --system NAME=-FEATURE)."""
    return verbatim(RESULTS / "wide" / "results.md")


def precision_columns() -> str:
    columns = pd.read_csv(RESULTS / "precision" / "columns.tsv", sep="\t")
    sources = int(columns["sources with 2+ targets"].iloc[0])
    return table(("Model", "Precision", "Mean \\|Δ log p\\| (nats)", f"Best target kept ({thousands(sources)} sources)"),
                 [row(c.model, c.precision, f"{c['mean |delta log p|']:.3f}", f"{100 * c['best target kept']:.1f}%")
                  for _, c in columns.iterrows()])


def precision_bleu() -> str:
    frame = results("precision")
    rows = []
    for precision in ("fp32", "bf16", "int8"):
        system = DEFAULT_SYSTEM if precision == "fp32" else f"{DEFAULT_SYSTEM}.{precision}"
        line = frame.loc[system]
        rows.append(row(f"{DEFAULT_SYSTEM}, {precision}", spread(line.test_bleu_mean, line.test_bleu_sd),
                        "–" if precision == "fp32" else against("precision", system, DEFAULT_SYSTEM),
                        spread(line.test_chrf_mean, line.test_chrf_sd)))
    rnn = [frame.loc[name] for name in ("+RNN", "+RNN.bf16", "+RNN.int8")]
    rows.append(row("+RNN, fp32 / bf16 / int8", " / ".join(f"{line.test_bleu_mean:.2f}" for line in rnn),
                    " / ".join(signed(line.test_bleu_mean - rnn[0].test_bleu_mean) for line in rnn[1:]),
                    " / ".join(f"{line.test_chrf_mean:.2f}" for line in rnn)))
    return table(("System", "Test BLEU", "Δ against fp32 (per replicate)", "Test chrF"), rows)


WEIGHT_DIFFERENCE = "max |weight - the 2-thread run's|"  # stability.sh's models.tsv column


def stability_models(folder: str, name: str = "models.tsv") -> pd.DataFrame:
    """stability.sh's training runs, indexed by (seed, threads)."""
    return pd.read_csv(RESULTS / folder / name, sep="\t").set_index(["seed", "threads"], drop=False)


def perplexities(run: pd.Series) -> str:
    return f"{run['best held-out perplexity']:.2f} ({run['honest perplexity']:.2f})"


def run_delta(frame: pd.DataFrame, seed: int, threads: int) -> str:
    """The proxy Δ BLEU of stability.sh's run (seed, threads) in its bench's results."""
    return signed(frame.loc[f"+s{seed}-t{threads}", "delta_test_bleu"])


def stability() -> str:
    models = stability_models("stability")
    frame = results("stability")
    rows = []
    for seed in sorted(models.seed.unique()):
        two, one = models.loc[(seed, 2)], models.loc[(seed, 1)]
        rows.append(row(str(seed), perplexities(two), f"{one[WEIGHT_DIFFERENCE]:.1f}",
                        run_delta(frame, seed, 2),
                        f"{two.seconds:.0f} / {one.seconds:.0f}"))
    rows.append(row(f"the default, trained to the end ({default_training()['ppl']})", "", "",
                    signed(frame.loc["+full", "delta_test_bleu"]), ""))
    return table(("Seed", f"Held-out perplexity at {thousands(int(models.updates.max()))} (honest)",
                  "1 thread against 2: max \\|Δ weight\\|", "Proxy Δ BLEU (+per-word column)",
                  "Seconds, 2 threads / 1 thread"), rows)


def stability_across_cpus() -> str:
    """stability.sh run again on the Intel Xeon with AMX (results/stability-amx) beside the AMD
    EPYC's run (results/stability): the same seeds, thread counts, update count and bench."""
    folders = {"amd": "stability", "amx": "stability-amx"}
    models = {cpu: stability_models(folder) for cpu, folder in folders.items()}
    frames = {cpu: results(folder) for cpu, folder in folders.items()}
    rows = []
    for seed in sorted(models["amx"].seed.unique()):
        cells = [str(seed), *(perplexities(models[cpu].loc[(seed, threads)]) for cpu in folders for threads in (2, 1)),
                 f"{models['amx'].loc[(seed, 1)][WEIGHT_DIFFERENCE]:.2g}",
                 *(run_delta(frames[cpu], seed, threads) for cpu in folders for threads in (2, 1))]
        rows.append(row(*cells))
    baseline = [spread(frames[cpu].loc["Baseline", "test_bleu_mean"], frames[cpu].loc["Baseline", "test_bleu_sd"])
                for cpu in folders]
    rows.append(row("Baseline's test BLEU", "", "", "", "", "", baseline[0], "", baseline[1], ""))
    return table(("Seed", "AMD: held-out ppl (honest), 2 threads", "AMD: 1 thread",
                  "Xeon AMX: 2 threads", "Xeon AMX: 1 thread", "Xeon: 1 thread against 2, max \\|Δ weight\\|",
                  "AMD: proxy Δ BLEU, 2 threads", "AMD: 1 thread", "Xeon: 2 threads", "Xeon: 1 thread"), rows)


def stability_strict() -> str:
    """Seed 1 on the Xeon at the same update count, before MKL's strict mode (before.tsv, the
    previous commit's code) and with it (stability.sh with SEEDS=1: models.tsv and the bench)."""
    frame = results("stability-amx-strict")
    rows = []
    for label, name in (("before (MKL's default)", "before.tsv"), ("`MKL_CBWR=AUTO,STRICT`", "models.tsv")):
        for (seed, threads), run in stability_models("stability-amx-strict", name).iterrows():
            delta = run_delta(frame, seed, threads) if name == "models.tsv" else "–"
            rows.append(row(label, str(seed), str(threads), perplexities(run), f"{run[WEIGHT_DIFFERENCE]:.2g}", delta))
    updates = thousands(int(stability_models("stability-amx-strict").updates.max()))
    return table(("MKL", "Seed", "Threads", f"Held-out perplexity at {updates} (honest)",
                  "max \\|Δ weight\\| against 2 threads", "Proxy Δ BLEU (+per-word column)"), rows)


def stability_strict_seeds() -> str:
    """stability.sh's three seeds on the Xeon with MKL's strict mode
    (results/stability-amx-strict-seeds) beside the same seeds before it (results/stability-amx)."""
    return strict_beside_before("stability-amx", "stability-amx-strict-seeds")


def stability_amd_strict() -> str:
    """The same on the AMD EPYC: results/stability-amd-strict beside results/stability."""
    return strict_beside_before("stability", "stability-amd-strict")


def strict_beside_before(before: str, strict: str) -> str:
    """stability.sh's seeds with MKL's strict mode (folder `strict`) beside the same seeds, on the
    same CPU, before it (folder `before`)."""
    folders = {"before": before, "strict": strict}
    models = {mode: stability_models(folder) for mode, folder in folders.items()}
    frames = {mode: results(folder) for mode, folder in folders.items()}
    rows = []
    for seed in sorted(models["strict"].seed.unique()):
        cells = [str(seed)]
        for mode in folders:
            one = models[mode].loc[(seed, 1)]
            cells += [perplexities(models[mode].loc[(seed, 2)]), perplexities(one), f"{one[WEIGHT_DIFFERENCE]:.2g}"]
        cells += [" / ".join(run_delta(frames[mode], seed, threads) for threads in (2, 1)) for mode in folders]
        rows.append(row(*cells))
    spans = []
    for mode in folders:
        held_out = models[mode]["best held-out perplexity"]
        spans.append(f"{held_out.min():.2f}–{held_out.max():.2f}")
    rows.append(row("all six runs", spans[0], "", "", spans[1], "", "", "", ""))
    updates = thousands(int(models["strict"].updates.max()))
    return table(("Seed", f"Before: 2 threads, held-out ppl at {updates} (honest)", "Before: 1 thread",
                  "Before: max \\|Δ weight\\|", "Strict: 2 threads", "Strict: 1 thread", "Strict: max \\|Δ weight\\|",
                  "Proxy Δ BLEU before, 2 / 1 threads", "Strict, 2 / 1 threads"), rows)


def start_probe() -> str:
    """start_probe.sh's runs (results/start-probe): seeds trained with another recipe to 2,000
    updates, beside the default's runs of the same seeds on the same CPU (stability-amd-strict)."""
    default = stability_models("stability-amd-strict")
    probe = pd.read_csv(RESULTS / "start-probe" / "models.tsv", sep="\t")
    rows = [row("the default", "–", str(seed), perplexities(default.loc[(seed, 1)]))
            for seed in sorted(default.seed.unique())]
    for _, run in probe.sort_values(["recipe", "seed"]).iterrows():
        rows.append(row(run.recipe, f"`{run.options}`", str(run.seed), perplexities(run)))
    updates = thousands(int(default.updates.max()))
    return table(("Recipe", "Options", "Seed", f"Held-out perplexity at {updates} (honest)"), rows)


# The default recipe's runs to their own stop that the 3e-3 runs stand beside: (seed, CPU and MKL
# mode, its training log, the proxy bench that scored its per-word column with 2 replicates).
DEFAULT_TO_ITS_STOP = (
    (1, "AMD EPYC, before the strict mode", "models/fwd.train.log", ("near", "+fwdpw")),
    (1, "Xeon with AMX, strict", "paired-proxy/fwd.train.log", None),
    (3, "AMD EPYC, strict", "stability-amd-strict/seed3-to-its-stop.train.log", None))


def to_its_stop() -> str:
    """to_its_stop.sh's runs (results/to-its-stop): seeds trained at another rate until early
    stopping ended them, beside the default's runs to their stop (DEFAULT_TO_ITS_STOP)."""
    rows = []
    for seed, where, log, proxy in DEFAULT_TO_ITS_STOP:
        trained = training_summary(RESULTS / log)
        delta = signed(results(proxy[0]).loc[proxy[1], "delta_test_bleu"]) if proxy else "–"
        rows.append(row("the default (6e-3)", str(seed), where, thousands(trained["updates"]),
                        thousands(trained["best"]), f"{trained['ppl']} ({trained['honest']})", delta))
    models = pd.read_csv(RESULTS / "to-its-stop" / "models.tsv", sep="\t")
    measured = (RESULTS / "to-its-stop" / "results.tsv").exists()  # PROXY=no: trained, not yet scored
    frame = results("to-its-stop") if measured else None
    for _, run in models.sort_values(["recipe", "seed"]).iterrows():
        delta = signed(frame.loc[f"+{run.recipe}-s{run.seed}", "delta_test_bleu"]) if measured else "not yet run"
        rows.append(row(f"`{run.options}`", str(run.seed), "AMD EPYC, strict", thousands(int(run.updates)),
                        thousands(int(run["at update"])), perplexities(run), delta))
    return table(("Recipe", "Seed", "CPU, MKL", "Updates (early stop)", "Best at update",
                  "Held-out perplexity (honest)", "Proxy Δ BLEU (per-word column, 2 replicates)"), rows)


def _default_row(label: str, folder: str) -> list:
    trained, line = default_training(), results(folder).loc[DEFAULT_SYSTEM]
    updates = thousands(trained["updates"]) + (" (stopped early)" if trained["early"] else "")
    return [label, updates, f"{trained['ppl']} ({trained['honest']})", signed(line.delta_test_bleu), "–",
            spread(line.test_chrf_mean, line.test_chrf_sd)]


def trained_rows(folder: str, first: str, default_label: str, labels: dict,
                 updates: str = "Updates in 25 min") -> str:
    """A study of models trained for the default's time (or as said), each one's per-word column
    in place of the default's in DEFAULT_SYSTEM (recipes.sh): models.tsv beside results.tsv."""
    models = pd.read_csv(RESULTS / folder / "models.tsv", sep="\t")
    frame = results(folder)
    rows = [row(*_default_row(default_label, folder))]
    for _, model in models.iterrows():
        system = DEFAULT_SYSTEM.replace("fwd", model.recipe)
        line = frame.loc[system]
        rows.append(row(labels[model.recipe], thousands(int(model.updates)),
                        f"{model['best held-out perplexity']:.2f} ({model['honest perplexity']:.2f})",
                        signed(line.delta_test_bleu), against(folder, system, DEFAULT_SYSTEM),
                        spread(line.test_chrf_mean, line.test_chrf_sd)))
    return table((first, updates, "Held-out perplexity (honest)", "Proxy Δ BLEU",
                  "Δ against the default (per replicate)", "Test chrF"), rows)


def recipes() -> str:
    return trained_rows("recipes", "Recipe", f"default (`{DEFAULT_SYSTEM}`)",
                        {"dropout": "`--dropout 0.3`", "smoothing": "`--label-smoothing 0.1`"})


def recipes_further() -> str:
    return trained_rows("dropout-further", "Recipe", f"default (`{DEFAULT_SYSTEM}`)",
                        {"dropout": "`--dropout 0.3`, to its own stop (32 min)"}, updates="Updates")


def smoothing_further() -> str:
    return trained_rows("smoothing-further", "Recipe", f"default (`{DEFAULT_SYSTEM}`)",
                        {"smoothing": "`--label-smoothing 0.1`, to its own stop (117 min)"}, updates="Updates")


def architectures() -> str:
    return trained_rows("architectures", "Phrase scorer", f"cho2014, the default (`{DEFAULT_SYSTEM}`)",
                        {"rnnsearch": "`--arch rnnsearch`", "transformer": "`--arch transformer`"})


def architectures_further() -> str:
    return trained_rows("architectures-further", "Phrase scorer", f"cho2014, the default (`{DEFAULT_SYSTEM}`)",
                        {"rnnsearch": "`--arch rnnsearch`, to its own stop (69 min)"}, updates="Updates")


def subwords() -> str:
    return trained_rows("subwords", "Phrase model", f"words through 15,000-word shortlists, the default (`{DEFAULT_SYSTEM}`)",
                        {"subwords": "`--subwords bpe`, 8,000 pieces a side (perplexity per piece)"})


def pair_weights() -> str:
    return trained_rows("pair-weights", "Pair weights", f"unique, the paper's and the default (`{DEFAULT_SYSTEM}`)",
                        {"logcount": "`log-count`", "count": "`count`"})


# The default's main job has no result file of this study: its figures are the Benchmark page's.
DEFAULT_MAIN_JOB = ("default `small`, to early stopping ([Benchmark](benchmark.md#the-main-job-rescore-table-end-to-end))",
                    "31 min (–, 18, 12)", "–")
SPEED_ROWS = {"tiny": "`--preset tiny --max-time 420` (2,000-word shortlists)",
              "tiny15k": "`--preset tiny --shortlist-size 15000 --max-time 420`"}


def main_job_cells(job: dict) -> tuple:
    """A main-job.json's time (total, then read, train, score), peak memory and perplexities."""
    seconds = job["seconds"]
    parts = ", ".join(f"{seconds[part] / 60:.1f}" for part in ("read and cache", "train", "score"))
    return (f"**{seconds['total'] / 60:.1f} min** ({parts})", f"{job['peak_rss_mb']:.0f} MB",
            f"{job['heldout_ppl']:.2f} ({job['honest_ppl']:.2f}; {job['unigram_ppl']:.2f})")


def speed() -> str:
    trained = default_training()
    default = results("speed/tiny").loc[DEFAULT_SYSTEM]
    rows = [row(*DEFAULT_MAIN_JOB, f"{trained['ppl']} ({trained['honest']}; {trained['unigram']})",
                signed(default.delta_test_bleu), "–", spread(default.test_chrf_mean, default.test_chrf_sd))]
    for name, label in SPEED_ROWS.items():
        job = json.loads((RESULTS / "speed" / name / "main-job.json").read_text())
        total, memory, perplexity = main_job_cells(job)
        system = DEFAULT_SYSTEM.replace("fwd", name)
        line = results(f"speed/{name}").loc[system]
        rows.append(row(label, total, memory, perplexity, signed(line.delta_test_bleu), against(f"speed/{name}", system, DEFAULT_SYSTEM),
                        spread(line.test_chrf_mean, line.test_chrf_sd)))
    return table(("Main job", "Total (read, train, score)", "Peak memory", "Held-out perplexity (honest; unigram)",
                  "Proxy Δ BLEU", "Δ against the default (per replicate)", "Test chrF"), rows)


MAIN_JOB_ROWS = {"default": "the default (`small`, Adam 3e-3)",
                 "tiny15k": "`--preset tiny --shortlist-size 15000 --max-time 420` (Adam 3e-3)",
                 "tiny15k-lr6e-3": "the same with `--learning-rate 6e-3`"}


def main_job() -> str:
    """main_job_columns.sh's runs (results/main-job): each main job's phases, memory and model,
    and its per-word column alone on the proxy bench (one run, so one Baseline for all)."""
    folder = RESULTS / "main-job"
    frame = results("main-job") if (folder / "results.tsv").exists() else None  # PROXY=no: timed, not yet scored
    rows = []
    for name, label in MAIN_JOB_ROWS.items():
        job = json.loads((folder / name / "main-job.json").read_text())
        total, memory, perplexity = main_job_cells(job)
        stopped = "early stop" if "did not improve" in job["stopped_because"] else job["stopped_because"]
        line = frame.loc[f"+{name}pw"] if frame is not None else None
        rows.append(row(label, total, memory, f"{thousands(job['updates'])} ({stopped})", perplexity, job["precision"], "not yet run" if line is None else
                        f"{signed(line.delta_test_bleu)} (Holm p {line.p_bleu_holm:.4f})",
                        "–" if line is None else spread(line.test_chrf_mean, line.test_chrf_sd)))
    return table(("Main job", "Total (read, train, score)", "Peak memory", "Updates", "Held-out perplexity "
                  "(honest; unigram)", "Precision (auto)", "Proxy Δ BLEU, the column alone", "Test chrF"), rows)



REAL_AMD_ROWS = {"+defaultpw": ("the default's log p per word", "main-job"),
                 "+default": ("the default's log p (the paper's +RNN)", "main-job-wp"),
                 "+default+WP": ("the default's log p and its word penalty (the paper's +RNN+WP)", "main-job-wp"),
                 "+tiny15k-lr6e-3pw": ("the 15-minute job's log p per word (`tiny`, 15k, 420 s, 6e-3)", "main-job"),
                 "Baseline-LM0": ("Baseline without its language model", "near")}


@lru_cache(maxsize=None)
def real_results(folder: str) -> pd.DataFrame:
    """A real run's results.tsv (real_wide_table.py's), read once."""
    return pd.read_csv(RESULTS / folder / "results.tsv", sep="\t", na_values="-").set_index("system")


def tuned_weights(path: Path) -> dict:
    """A tuned run's weights (RUN.weights.txt: mert-moses.pl's [weight] section, normalized so
    that every tuned |w| sums to 1), each value named FEATURE_INDEX as the reranker names them."""
    weights = {}
    for line in path.read_text().splitlines():
        if "= " in line:
            name, values = line.split("= ", 1)
            weights.update({f"{name}_{index}": float(value) for index, value in enumerate(values.split())})
    return weights


def retuned_cells(folder: str, system: str, base: list) -> list:
    """A real row's cells against Baseline retuned (real_results(folder)): Δ BLEU with each
    replicate's, p, Holm p, and Δ chrF with its Holm p."""
    line = real_results(folder).loc[system]
    each = ", ".join(signed(a - b) for a, b in zip(replicate_bleu(folder, system), base))
    return [signed(line.delta_bleu_vs_retuned) + f" ({each})", f"{line.p_bleu_vs_retuned:.4f}",
            f"{line.p_bleu_holm_vs_retuned:.4f}",
            f"{signed(line.delta_chrf_vs_retuned)} (Holm p {line.p_chrf_holm_vs_retuned:.4f})"]


def real_amd() -> str:
    """main_job_real_rows.sh's and real_wide_rows.sh's rows on the AMD EPYC (results/real-amd),
    each retuned by real MERT beside Baseline retuned (decoded again from its committed weights),
    with its proxy Δ beside it; first the Baseline's decodings against its tuned runs'."""
    real = real_results("real-amd")
    base = replicate_bleu("real-amd", "Baseline (retuned)")
    tuned = replicate_bleu("real-wide-replicates", "Baseline (retuned)")
    rows = [row("Baseline retuned, decoded from its committed weights", "test BLEU " + ", ".join(f"{b:.4f}" for b in base)
                + " (its tuned runs: " + ", ".join(f"{b:.4f}" for b in tuned) + ")", *["–"] * 5)]
    for system, (label, proxy_run) in REAL_AMD_ROWS.items():
        if system not in real.index:
            continue
        proxy = results(proxy_run).loc[system]
        rows.append(row(f"{system}: {label}", *retuned_cells("real-amd", system, base),
                        signed(proxy.delta_test_bleu), f"{proxy.p_bleu_holm:.4f}"))
    return table(("System", "Real Δ BLEU vs retuned (per replicate)", "p", "Holm p", "Real Δ chrF",
                  "Proxy Δ BLEU", "Proxy Holm p"), rows)


def real_amd_inverse() -> str:
    """main_job_real_rows.sh's default+inv+wp, one MERT replicate (results/real-amd-inverse: its
    own run, so its p is not folded into real-amd's Holm), against Baseline retuned's seed 1."""
    base = replicate_bleu("real-amd-inverse", "Baseline (retuned)")
    system, proxy = "+default+inv+WP", results("main-job-inv").loc["+default+inv+WP"]
    rows = [row(f"{system}: the default's log p, the inverse model's log p(f\\|e) and the word penalty",
                *retuned_cells("real-amd-inverse", system, base),
                signed(proxy.delta_test_bleu), f"{proxy.p_bleu_holm:.4f}")]
    return table(("System", "Real Δ BLEU vs retuned (replicate 1)", "p", "Holm p", "Real Δ chrF",
                  "Proxy Δ BLEU", "Proxy Holm p"), rows)


def real_rerank() -> str:
    """real_rerank_rows.sh's row (results/real-rerank): each of Baseline retuned's three replicates
    decodes its own 100-best lists, which `moses rerank` reranks with the forward sentence model
    (real MERT on the dev lists, replicate r's seed r), against Baseline retuned; beside it the
    proxy's row with the same model (results/real-rerank-proxy) and with results/sentence's."""
    base = replicate_bleu("real-rerank", "Baseline (retuned)")
    models = pd.read_csv(RESULTS / "real-rerank" / "models.tsv", sep="\t").iloc[0]
    proxy, earlier = results("real-rerank-proxy").loc["+sfwd"], results("sentence").loc["+sfwd"]
    label = (f"+sfwd: the forward sentence model ({thousands(int(models.updates))} updates, dev perplexity "
             f"{models['best dev perplexity']:.2f}), log p(e\\|f) and its per-word form")
    rows = [row(label, *retuned_cells("real-rerank", "+sfwd", base), signed(proxy.delta_test_bleu),
                f"{proxy.p_bleu_holm:.4f}", signed(earlier.delta_test_bleu))]
    return table(("System", "Real Δ BLEU vs retuned (per replicate)", "p", "Holm p", "Real Δ chrF",
                  "Proxy Δ BLEU", "Proxy Holm p", "Proxy Δ, results/sentence's model"), rows)


def real_rerank_cslm() -> str:
    """real_rerank_rows.sh's CSLM row (results/real-rerank-cslm, run beside the forward sentence
    model's row, Holm over both): Baseline retuned's three replicates' own lists reranked with the
    CSLM alone, Cho et al.'s +CSLM; beside it the proxy's row with the same CSLM
    (results/real-rerank-cslm-proxy) and with results/cslm's."""
    folder = "real-rerank-cslm"
    base = replicate_bleu(folder, "Baseline (retuned)")
    updates, ppl = re.search(r": (\d+) updates, .*valid perplexity ([\d.]+)",
                             summary_line(RESULTS / folder / "cslm.train.log")).groups()
    proxy, earlier = results("real-rerank-cslm-proxy").loc["+cslm"], results("cslm").loc["+cslm"]
    label = (f"+cslm: the CSLM ({thousands(int(updates))} updates, held-out perplexity {ppl}), log p(e) "
             f"and its per-word form")
    rows = [row(label, *retuned_cells(folder, "+cslm", base), signed(proxy.delta_test_bleu),
                f"{proxy.p_bleu_holm:.4f}", signed(earlier.delta_test_bleu))]
    return table(("System", "Real Δ BLEU vs retuned (per replicate)", "p", "Holm p", "Real Δ chrF",
                  "Proxy Δ BLEU", "Proxy Holm p", "Proxy Δ, results/cslm's CSLM"), rows)


SENTENCE_ROWS = {"+fwdpw+inv": "the best phrase columns, for reference (fwd per word, inv)",
                 "+sfwd": "the forward sentence model: log p(e\\|f) and its per-word form",
                 "+sbwd": "the backward sentence model: log p(f\\|e) and its per-word form",
                 "+sfwd+sbwd": "both sentence models (noisy-channel reranking)",
                 "+fwdpw+inv+sfwd": "the phrase columns and the forward sentence model",
                 "+fwdpw+inv+sfwd+sbwd": "the phrase columns and both sentence models"}


def sentence_models(folder: str = "sentence") -> str:
    models = pd.read_csv(RESULTS / folder / "models.tsv", sep="\t")
    return table(("Sentence model", "Updates", "Minutes", "Best dev perplexity (update)"),
                 [row(model.model, thousands(int(model.updates)), f"{model.seconds / 60:.0f}",
                      f"{model['best dev perplexity']:.2f} ({thousands(int(model['at update']))})")
                  for _, model in models.iterrows()])


def reranked_rows(folder: str, labels: dict, chrf_p: bool = False) -> str:
    """Systems of a reranking study (sentence_rows.sh, cslm_rows.sh), each against Baseline."""
    frame = results(folder)
    rows = []
    for system, label in labels.items():
        line = frame.loc[system]
        cells = [f"`{system}`", label, spread(line.test_bleu_mean, line.test_bleu_sd),
                 against(folder, system, "Baseline"), f"{line.p_bleu_holm:.4f}",
                 spread(line.test_chrf_mean, line.test_chrf_sd)]
        rows.append(row(*cells, *([f"{line.p_chrf_holm:.4f}"] if chrf_p else [])))
    return table(("System", "What it adds to Baseline's features", "Test BLEU", "Proxy Δ BLEU (per replicate)",
                  "p (BLEU, Holm)", "Test chrF", *(["p (chrF, Holm)"] if chrf_p else [])), rows)


def sentence_rows() -> str:
    return reranked_rows("sentence", SENTENCE_ROWS)


CSLM_ROWS = {"+cslm": "the CSLM: log p(e) and its per-word form (Cho et al.'s +CSLM)",
             "+fwdpw+inv+cslm": "the phrase columns and the CSLM (their +CSLM+RNN)",
             "+sfwd": "the forward sentence model, for reference",
             "+sfwd+cslm": "the forward sentence model and the CSLM",
             "+fwdpw+inv+sfwd+sbwd+cslm": "the phrase columns, both sentence models and the CSLM"}


def cslm_rows() -> str:
    """The CSLM's rows (cslm_rows.sh): its training figures from its log's summary, then the bench's."""
    updates, ppl, unigram = re.search(r": (\d+) updates, .*valid perplexity ([\d.]+) .*unigram ([\d.]+)",
                                      summary_line(RESULTS / "cslm" / "cslm.train.log")).groups()
    caption = (f"The CSLM: {thousands(int(updates))} updates, held-out perplexity {ppl} (its unigram model's "
               f"{unigram}).\n\n")
    return caption + reranked_rows("cslm", CSLM_ROWS, chrf_p=True)


ENSEMBLE_ROWS = {"+sfwd": "the forward sentence model (seed 1), for reference",
                 "+sfwd2": "the second forward model (seed 2) instead",
                 "+sfwd+sfwd2": "both seeds as two features each (the log-linear ensemble of two `--rerank-model`)",
                 "+smix": "both seeds' mixture log((p1 + p2) / 2) and its per-word form",
                 "+sfwd+sfwd2+sfwd3": "three seeds as two features each",
                 "+smix3": "the three seeds' mixture and its per-word form",
                 "+smix+sbwd": "the mixture and the backward sentence model",
                 "+fwdpw+inv+sfwd+sfwd2+sbwd+cslm": "everything: the phrase columns, three sentence models, the CSLM"}


def ensemble_models() -> str:
    return sentence_models("ensemble")


def ensemble_rows() -> str:
    return reranked_rows("ensemble", ENSEMBLE_ROWS, chrf_p=True)


SENTENCE_PHRASE_ROWS = {
    "+sentfwd": "the forward sentence model's log p(e\\|f) of each phrase pair, summed over the hypothesis",
    "+sentfwdpw": "the same per target word",
    "+sentinv": "the inverse sentence model's log p(f\\|e) of each phrase pair",
    "+sentinvpw": "the same per source word",
    "+sentfwdpw+sentinv": "forward per word and inverse: the best phrase system's shape",
    "+sentfwd+sentinv+pw": "all four",
    "+fwdpw": "the default phrase model per word (seed 1 at 2,000 updates, the stability run's), for reference",
    "+fwdpw+sentinv": "that phrase model's column and the inverse sentence model's"}


def sentence_phrase_models() -> str:
    return sentence_models("sentence-phrase")


def sentence_phrase_rows() -> str:
    """The sentence Transformer as the phrase scorer (sentence_phrase_rows.sh), each system against Baseline."""
    return reranked_rows("sentence-phrase", SENTENCE_PHRASE_ROWS, chrf_p=True)


PRO_ROWS = {"Baseline": "the lists' own features", "+sfwd": "the forward sentence model",
            "+sfwd+sfwd2": "two seeds of it", "+fwdpw+inv+sfwd+sfwd2+sbwd+cslm": "all ten features"}


def pro_rows() -> str:
    """The same systems tuned by MERT (ensemble_rows.sh's run) and by PRO (pro_rows.sh's): test
    BLEU, Δ against the same optimizer's Baseline, and the decoder's own 1-best beside them."""
    mert, pro = results("ensemble"), results("pro")
    first_best = float(re.search(r"\| decoder 1-best [^|]*\| – \| – \| ([\d.]+) \|",
                                 (RESULTS / "pro" / "results.md").read_text())[1])
    rows = []
    for system, label in PRO_ROWS.items():
        cells = []
        for frame in (mert, pro):
            line = frame.loc[system]
            delta = "–" if system == "Baseline" else signed(line.test_bleu_mean - frame.loc["Baseline", "test_bleu_mean"])
            cells += [spread(line.test_bleu_mean, line.test_bleu_sd), delta, signed(line.test_bleu_mean - first_best)]
        line = pro.loc[system]
        rows.append(row(f"`{system}`", label, *cells, spread(line.test_chrf_mean, line.test_chrf_sd)))
    return table(("System", "Features", "MERT: test BLEU", "Δ", "Δ 1-best", "PRO: test BLEU", "Δ", "Δ 1-best",
                  "PRO: test chrF"), rows)


# The default's models trained twice: on the AMD EPYC for the study (results/models) and on the
# Intel Xeon with AMX for the paired real rows (results/paired-proxy), the same command each.
PAIRED_MODELS = {"fwd": "`fwd.pt`: log p(e\\|f)", "inv": "`inv.pt`, `--direction inverse`: log p(f\\|e)"}
PAIRED_SYSTEMS = {"+RNN": "the paper's column (fwd)", "+RNN+WP": "the paper's column and its word penalty",
                  "+fwdpw": "the per-word forward column", "+fwdpw+inv": "the per-word forward column and the inverse one"}


def paired_models() -> str:
    rows = []
    for name, label in PAIRED_MODELS.items():
        for cpu, folder in (("AMD EPYC", "models"), ("Intel Xeon with AMX", "paired-proxy")):
            trained = training_summary(RESULTS / folder / f"{name}.train.log")
            rows.append(row(label, cpu, thousands(trained["updates"]), thousands(trained["best"]),
                            f"{trained['ppl']} ({trained['honest']}; {trained['unigram']})",
                            f"{trained['seconds'] / 60:.1f}"))
    return table(("Model", "CPU", "Updates", "Best at", "Held-out perplexity (honest; unigram)", "Minutes"), rows)


def paired_proxy() -> str:
    return verbatim(RESULTS / "paired-proxy" / "results.md")


def paired_real() -> str:
    """Each phrase system's real Δ (3 MERT replicates, against Baseline retuned) beside its proxy
    Δ, both from this session's models, and the pages' real Δ of the earlier models."""
    real = real_results("real-wide-replicates")
    proxy = results("paired-proxy")
    pages = pd.read_csv(HERE / "real_moses.tsv", sep="\t")
    base = replicate_bleu("real-wide-replicates", "Baseline (retuned)")
    rows = []
    for system, label in PAIRED_SYSTEMS.items():
        if system not in real.index:
            continue
        earlier = "; ".join(f"{signed(r.real_delta_bleu)} (p {r.real_p_bleu:.4f})"
                            for r in pages[pages.system == system].itertuples()) or "–"
        rows.append(row(f"{system}: {label}", *retuned_cells("real-wide-replicates", system, base),
                        signed(proxy.loc[system, "delta_test_bleu"]), f"{proxy.loc[system, 'p_bleu_holm']:.4f}",
                        earlier))
    return table(("System", "Real Δ BLEU vs retuned (per replicate)", "p", "Holm p", "Real Δ chrF",
                  "Proxy Δ BLEU", "Proxy Holm p", "Earlier real Δ, the pages' models"), rows)


TABLES: dict[str, Callable[[], str]] = {
    "study": study, "proxy-vs-real": proxy_vs_real, "wide-real": wide_real, "wide-proxy": wide_proxy,
    "wide-real-replicates": wide_real_replicates, "speed-proxy-alone": speed_proxy_alone,
    "precision-columns": precision_columns,
    "precision-bleu": precision_bleu, "stability": stability, "stability-across-cpus": stability_across_cpus,
    "stability-strict": stability_strict, "stability-strict-seeds": stability_strict_seeds,
    "stability-amd-strict": stability_amd_strict, "start-probe": start_probe, "to-its-stop": to_its_stop,
    "recipes": recipes, "architectures": architectures,
    "recipes-further": recipes_further, "smoothing-further": smoothing_further,
    "architectures-further": architectures_further, "subwords": subwords, "pair-weights": pair_weights, "speed": speed,
    "main-job": main_job, "real-amd": real_amd, "real-amd-inverse": real_amd_inverse,
    "sentence-models": sentence_models, "sentence-rows": sentence_rows, "real-rerank": real_rerank,
    "real-rerank-cslm": real_rerank_cslm, "cslm-rows": cslm_rows,
    "ensemble-models": ensemble_models, "ensemble-rows": ensemble_rows, "pro-rows": pro_rows,
    "sentence-phrase-models": sentence_phrase_models, "sentence-phrase-rows": sentence_phrase_rows,
    "paired-models": paired_models, "paired-proxy": paired_proxy, "paired-real": paired_real}


if __name__ == "__main__":
    sys.exit(page_tables.main(PAGE, TABLES, sys.argv[1:]))
