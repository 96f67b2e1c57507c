"""The proxy bench's Δ BLEU beside real Moses' for the same systems (issue 44, part 4): sign
agreement and Spearman's rank correlation over the pairs.

    python benchmarks/studies/proxy/compare_real.py benchmarks/studies/proxy/results/NAME [MORE ...]

Reads NAME/results.tsv (proxy_bench.py run; and MORE's, for the systems NAME lacks), real_moses.tsv beside this script (each real Δ
with the page it comes from) and the wide rows real_wide_rows.sh measured (each system's row from
results/real-wide-replicates/results.tsv, where it has one, else results/real-amd's (the
AMD EPYC's rows: the main jobs' columns, LM0), else results/real-amd-inverse's (the default
with its inverse model, one replicate), else results/real-wide's, and results/real-rerank's and real-rerank-cslm's
(real_rerank_rows.sh: a sentence model and the CSLM reranking real Moses' lists); a column row
of models trained for that run takes its proxy Δ from those models' proxy run, COLUMN_PROXIES);
writes NAME/proxy_vs_real.md and prints it."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import Optional

import pandas as pd

from rescorer.io.text_tables import markdown_cell

HERE = Path(__file__).resolve().parent
WIDE_RUNS = [HERE / "results" / "real-wide-replicates", HERE / "results" / "real-amd",
             HERE / "results" / "real-amd-inverse", HERE / "results" / "real-wide",  # the most replicates first
             HERE / "results" / "real-rerank",  # real_rerank_rows.sh: a sentence model reranking real lists,
             HERE / "results" / "real-rerank-cslm"]  # and the CSLM (its +sfwd row is real-rerank's, again)
# The proxy runs of the models behind a wide run's column rows (baseline+NAME: models trained for
# that run, not the pages' own): a column row takes its proxy Δ from the first of these that has it.
COLUMN_PROXIES = {"real-wide-replicates": [HERE / "results" / "paired-proxy", HERE / "results" / "speed-real"],
                  "real-amd": [HERE / "results" / "main-job", HERE / "results" / "main-job-wp"],
                  "real-amd-inverse": [HERE / "results" / "main-job-inv"],
                  "real-rerank": [HERE / "results" / "real-rerank-proxy"],
                  "real-rerank-cslm": [HERE / "results" / "real-rerank-cslm-proxy"]}
WIDE = 0.5  # a real Δ BLEU at least this large is a wide row: no replicate noise hides its sign


def real_deltas() -> pd.DataFrame:
    """Every real-Moses Δ: the pages' rows, then the wide rows measured beside this script, each
    with the proxy runs of its own models (`proxy_runs`; none: the proxy runs given)."""
    real = pd.read_csv(HERE / "real_moses.tsv", sep="\t")  # a system may have two pages' rows
    real["proxy_runs"] = [()] * len(real)
    wide = [wide_rows(run) for run in WIDE_RUNS if (run / "results.tsv").exists()]
    wide = pd.concat(wide, ignore_index=True).drop_duplicates("system") if wide else None  # one row each
    return pd.concat([real, wide], ignore_index=True)


def wide_rows(run: Path) -> pd.DataFrame:
    """One real_wide_rows.sh run's rows, against real Moses' retuned Baseline where it was
    measured, as the proxy's Δ is against its own."""
    wide = pd.read_csv(run / "results.tsv", sep="\t", na_values="-")
    wide = wide[~wide.system.isin(["Baseline", "Baseline (retuned)"])]  # the rows, not the Baselines
    retuned = "delta_bleu_vs_retuned" in wide
    suffix, base = ("_vs_retuned", "the retuned Baseline") if retuned else ("", "the fixture's Baseline")
    counts = wide.replicates if "replicates" in wide else pd.Series(1, index=wide.index)  # older runs had one
    proxies = tuple(COLUMN_PROXIES.get(run.name, ()))
    return pd.DataFrame({
        "system": wide.system, "real_delta_bleu": wide[f"delta_bleu{suffix}"], "real_p_bleu": wide[f"p_bleu{suffix}"],
        "source": [f"results/{run.name} ({n} MERT replicate{'s' if n > 1 else ''}, against {base})"
                   for n in counts.astype(int)],
        "proxy_runs": [proxies if system.startswith("+") else () for system in wide.system]})


def sign(value: float, dead_band: float = 0.005) -> int:
    return 0 if abs(value) < dead_band else (1 if value > 0 else -1)


def agreement(rows: pd.DataFrame) -> str:
    agree = sum(sign(a) == sign(b) for a, b in zip(rows.real_delta_bleu, rows.proxy_delta_bleu))
    return f"{agree} of {len(rows)}"


def rank_correlation(rows: pd.DataFrame) -> str:
    rho = rows.real_delta_bleu.rank().corr(rows.proxy_delta_bleu.rank())
    return f"{rho:.2f} over {len(rows)} pairs"


def proxy_rows(results_dirs: list[Path]) -> pd.DataFrame:
    """The proxy's row of each system, from the first run that has it."""
    runs = [pd.read_csv(directory / "results.tsv", sep="\t") for directory in results_dirs]
    return pd.concat(runs, ignore_index=True).drop_duplicates("system").set_index("system")


@lru_cache(maxsize=None)
def own_proxy_rows(run: Path) -> Optional[pd.DataFrame]:
    """A column row's own proxy run, read once (None: not run)."""
    return proxy_rows([run]) if (run / "results.tsv").exists() else None


def proxy_row(system: str, own_runs: tuple, given: pd.DataFrame) -> Optional[pd.Series]:
    """The proxy's row of a real system: from its own models' runs where it has them, else from
    the runs given (None: no proxy run has it)."""
    for rows in map(own_proxy_rows, own_runs):
        if rows is not None and system in rows.index:
            return rows.loc[system]
    return given.loc[system] if system in given.index else None


def main(results_dir: Path, *more: Path) -> str:
    given = proxy_rows([results_dir, *more])
    real = real_deltas()
    proxies = [proxy_row(row.system, row.proxy_runs, given) for row in real.itertuples()]
    real = real[[row is not None for row in proxies]].copy()
    proxies = [row for row in proxies if row is not None]
    real["proxy_delta_bleu"] = [row["delta_test_bleu"] for row in proxies]
    real["proxy_p_bleu_holm"] = [row["p_bleu_holm"] for row in proxies]
    lines = ["| System | Real Moses Δ BLEU | Real p | Proxy Δ BLEU | Proxy Holm p | Real source |",
             "|---|---|---|---|---|---|"]
    for row in real.itertuples():
        lines.append(f"| {markdown_cell(row.system)} | {row.real_delta_bleu:+.2f} | {row.real_p_bleu:.4f} | "
                     f"{row.proxy_delta_bleu:+.2f} | {row.proxy_p_bleu_holm:.4f} | {row.source} |")
    near = real[real.real_delta_bleu.abs() < WIDE]
    summary = (f"Sign agreement: {agreement(real)} (a Δ within ±0.005 counts as 0). "
               f"Spearman's rank correlation: {rank_correlation(real)}.")
    if len(near) < len(real):
        summary += (f" Rows whose real Δ is within ±{WIDE}: sign agreement {agreement(near)}, "
                    f"rank correlation {rank_correlation(near)}.")
    lines += ["", summary, ""]
    text = "\n".join(lines)
    (results_dir / "proxy_vs_real.md").write_text(text)
    return text


if __name__ == "__main__":
    print(main(*(Path(arg) for arg in sys.argv[1:])))
