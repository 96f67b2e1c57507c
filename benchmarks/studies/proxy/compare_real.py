"""The proxy bench's Δ BLEU beside real Moses' for the same systems (issue 44, part 4): sign
agreement and Spearman's rank correlation over the pairs.

    python benchmarks/studies/proxy/compare_real.py benchmarks/studies/proxy/results/NAME

Reads NAME/results.tsv (proxy_bench.py run), real_moses.tsv beside this script (each real Δ
with the page it comes from) and the wide rows real_wide_rows.sh measured
(results/real-wide/results.tsv, where it exists); writes NAME/proxy_vs_real.md and prints it."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
WIDE_ROWS = HERE / "results" / "real-wide" / "results.tsv"


def real_deltas() -> pd.DataFrame:
    """Every real-Moses Δ: the pages' rows, then the wide rows measured beside this script."""
    real = pd.read_csv(HERE / "real_moses.tsv", sep="\t")
    if not WIDE_ROWS.exists():
        return real
    wide = pd.read_csv(WIDE_ROWS, sep="\t")
    wide = wide[wide.system != "Baseline"]
    return pd.concat([real, pd.DataFrame({
        "system": wide.system, "real_delta_bleu": wide.delta_bleu, "real_p_bleu": wide.p_bleu,
        "source": "benchmarks/studies/proxy/results/real-wide (one MERT replicate, real_wide_rows.sh)"})],
        ignore_index=True)


def sign(value: float, dead_band: float = 0.005) -> int:
    return 0 if abs(value) < dead_band else (1 if value > 0 else -1)


def main(results_dir: Path) -> str:
    proxy = pd.read_csv(results_dir / "results.tsv", sep="\t").set_index("system")
    real = real_deltas()
    real = real[real.system.isin(proxy.index)].copy()
    real["proxy_delta_bleu"] = [proxy.loc[name, "delta_test_bleu"] for name in real.system]
    real["proxy_p_bleu_holm"] = [proxy.loc[name, "p_bleu_holm"] for name in real.system]
    agree = sum(sign(a) == sign(b) for a, b in zip(real.real_delta_bleu, real.proxy_delta_bleu))
    rho = real.real_delta_bleu.rank().corr(real.proxy_delta_bleu.rank())
    lines = ["| System | Real Moses Δ BLEU | Real p | Proxy Δ BLEU | Proxy Holm p | Real source |",
             "|---|---|---|---|---|---|"]
    for row in real.itertuples():
        lines.append(f"| {row.system} | {row.real_delta_bleu:+.2f} | {row.real_p_bleu:.4f} | "
                     f"{row.proxy_delta_bleu:+.2f} | {row.proxy_p_bleu_holm:.4f} | {row.source} |")
    lines += ["", f"Sign agreement: {agree} of {len(real)} (a Δ within ±0.005 counts as 0). "
              f"Spearman's rank correlation: {rho:.2f} over {len(real)} pairs.", ""]
    text = "\n".join(lines)
    (results_dir / "proxy_vs_real.md").write_text(text)
    return text


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
