"""The benchmark's printed table and the issue's targets, from the results dictionary of run.py."""

from __future__ import annotations

from typing import List, Optional

from benchmarks.drivers.accuracy import format_accuracy
from benchmarks.drivers.profiles import format_profiles
from benchmarks.drivers.tried import format_tried

__all__ = ["check_targets", "format_report", "format_archs"]


def _get(results: dict, *keys):
    for key in keys:
        if not isinstance(results, dict) or key not in results:
            return None
        results = results[key]
    return results


def check_targets(results: dict) -> List[dict]:
    """Each target of issues 11 and 4: the measured value, the bound, and whether it is met
    (None: not measured)."""
    paper = _get(results, "model_only", "paper") or {}
    rows = [
        ("fp32 model-only >= 75% of the fp32 matmul rate at the same thread count, paper",
         _get(paper, "fp32", "of_peak"), 0.75),
        ("fp32 model-only >= 75% of the fp32 matmul rate, paper, 1 thread", _get(paper, "fp32_1_thread", "of_peak"), 0.75),
        ("bf16 model-only >= 60% of the bf16 matmul rate, paper", _get(paper, "bf16", "of_peak"), 0.60),
        ("int8 (torchao) faster than fp32, paper (adopted as an option only if so)", paper.get("int8_over_fp32"), 1.0),
        ("end-to-end >= 90% of model-only, small", _get(results, "end_to_end", "small", "e2e_over_model_only"), 0.90),
        ("end-to-end >= 90% of model-only, paper", _get(results, "end_to_end", "paper", "e2e_over_model_only"), 0.90),
        ("(issue 4) fp32 pairs/s >= 3x OpenNMT-py gold scoring (onmt_translate), paper",
         paper.get("ours_over_onmt_translate"), 3.0),
        ("(issue 4) >= 5x the naive baseline, paper", paper.get("ours_over_naive"), 5.0),
    ]
    targets = [{"target": name, "value": value, "bound": bound,
                "met": None if value is None else value >= bound} for name, value, bound in rows]
    memory_rows = _get(results, "memory", "rows") or {}
    if len(memory_rows) >= 2:
        rss = [row["peak_rss_mib"] for row in memory_rows.values()]
        spread = max(abs(r / rss[0] - 1) for r in rss)
        targets.append({"target": f"(issue 4) peak memory within +-10% from {list(memory_rows)[0]} to "
                                  f"{list(memory_rows)[-1]} lines",
                        "value": spread, "bound": 0.10, "met": spread <= 0.10})
    return targets


def _fmt(value: Optional[float], spec: str = ".0f") -> str:
    return "-" if value is None else format(value, spec)


def format_archs(results: dict, fp32_peak: Optional[float] = None) -> list:
    lines = ["\nArchitectures, paper presets (model-only, random init, the table's 15k shortlists; "
             "same pairs; medians of interleaved rounds; bf16 and int8: pairs/s and speed over the arch's fp32)",
             f"  {'arch':10s} {'params':>8s} {'pairs/s':>9s} {'MFLOP/pair':>11s} {'GFLOP/s':>8s} {'of peak':>8s} "
             f"{'vs first':>9s} {'bf16':>16s} {'int8':>16s}"]
    for arch, row in results.items():
        ratio = next(value for key, value in row.items() if key.startswith("speed_over_"))
        peak = f"{100 * row['gflops'] / fp32_peak:.0f}%" if fp32_peak else "-"
        others = "".join(f" {row[p]['pairs_per_s']:8.1f} {row[p]['speed_over_fp32']:5.2f}x " if p in row else f" {'-':>16s}"
                         for p in ("bf16", "int8"))
        lines.append(f"  {arch:10s} {row['parameters'] / 1e6:7.1f}M {row['pairs_per_s']:9.1f} "
                     f"{row['flops_per_pair'] / 1e6:11.1f} {row['gflops']:8.1f} {peak:>8s} {ratio:8.2f}x{others}")
    return lines


def format_report(results: dict) -> str:
    out: List[str] = []
    env = results["environment"]
    out.append(f"rescorer benchmark{' (--quick)' if results.get('quick') else ''}: torch {env['torch']}, "
               f"{env['threads']} threads {env.get('omp') or ''}, {env['cores']} cores, load average at start "
               f"{env['load_avg_at_start'][0]:.2f}, at end {env.get('load_avg_at_end', (0,))[0]:.2f}; "
               f"{results.get('total_seconds', 0):.0f} s in all")
    out.append(f"CPU: {env.get('cpu', 'not recorded')}; every figure below is this CPU's")
    roof = results.get("roofline")
    if roof:
        out.append("\nRoofline (measured matmul, best of model-shaped products, GFLOP/s)")
        for key, res in roof.items():
            out.append(f"  {res['dtype']:9s} {res['threads']} thread(s): {res['peak_gflops']:7.1f}")

    out.append("\nModel-only scoring (score_encoded; same pairs within a preset; medians of interleaved rounds;")
    out.append("  GFLOP/s from each model's own FLOPs per pair; 'of peak': of the matmul rate measured above")
    out.append("  for the same dtype and thread count; 'ours is': our fp32 speed over that row's, per round)")
    out.append(f"  {'preset / system':34s} {'pairs/s':>9s} {'tgt tok/s':>10s} {'GFLOP/s':>8s} {'of peak':>8s} {'ours is':>8s}")
    for preset, res in results.get("model_only", {}).items():
        flops = res["flops_per_pair"]
        out.append(f"  {preset}: {res['fp32']['pairs']} pairs, {flops / 1e6:.1f} MFLOP/pair (rescorer.models.flops)")
        for key, label, ratio_key in (
                ("fp32", "rescorer fp32", None), ("fp32_1_thread", "rescorer fp32, 1 thread", None),
                ("bf16", "rescorer bf16 autocast", None), ("int8", "rescorer int8 (torchao; fp32 peak)", None),
                ("onmt_translate", "OpenNMT-py onmt_translate", "ours_over_onmt_translate"),
                ("onmt_direct", "OpenNMT-py scoring fns direct", "ours_over_onmt_direct"),
                ("naive", "naive loop (batches of 64)", "ours_over_naive")):
            row = res.get(key)
            if not row:
                continue
            ratio = res.get(ratio_key) if ratio_key else None
            peak = row.get("of_peak")
            peak_text = f"{100 * peak:.0f}%" if peak else "-"
            ratio_text = f"{ratio:.2f}x" if ratio else ""
            out.append(f"    {label:32s} {row['pairs_per_s']:9.1f} {row['tgt_tokens_per_s']:10.0f} "
                       f"{_fmt(row.get('gflops'), '.1f'):>8s} {peak_text:>8s} {ratio_text:>8s}")
        if "onmt_flops_per_pair" in res:
            out.append(f"    (OpenNMT-py's model costs {res['onmt_flops_per_pair'] / 1e6:.1f} MFLOP/pair: "
                       f"no deep output, a full hidden x vocabulary softmax)")

    if results.get("archs"):
        roof = results.get("roofline") or {}
        threads = env["threads"]
        peak = (roof.get(f"float32/{threads}") or roof.get("float32/2") or {}).get("peak_gflops")
        out.extend(format_archs(results["archs"], peak))
    paper = _get(results, "model_only", "paper") or {}
    if "int8_over_fp32" in paper:
        out.append(f"\n  paper, speed over fp32 (median of per-round ratios): bf16 {paper['bf16_over_fp32']:.2f}x, "
                   f"int8 {paper['int8_over_fp32']:.2f}x")
    if results.get("accuracy"):
        out.extend(format_accuracy(results["accuracy"]))

    e2e = results.get("end_to_end", {})
    if e2e:
        out.append("\nEnd to end (rescore score on a gzipped sample of the real table; CLI's own clock)")
        out.append(f"  {'preset':8s} {'lines':>8s} {'lines/s':>9s} {'wall l/s':>9s} {'model-only':>11s} {'e2e/model':>10s} {'peak RSS':>9s}")
        for preset, res in e2e.items():
            out.append(f"  {preset:8s} {res['lines']:8d} {res['lines_per_s']:9.0f} {res['wall_lines_per_s']:9.0f} "
                       f"{res['model_only_lines_per_s']:11.0f} {100 * res['e2e_over_model_only']:9.0f}% "
                       f"{res['peak_rss_mib']:7.0f}Mi")
    io = results.get("io_floor")
    if io:
        out.append(f"\nI/O floor (decompress, split fields, append a score, recompress; no model) on {io['table'].split('/')[-1]}")
        for way, res in io.items():
            if way == "table":
                continue
            if "skipped" in res:
                out.append(f"  {way:9s} skipped ({res['skipped']})")
            else:
                out.append(f"  {way:9s} {res['lines_per_s']:10.0f} lines/s ({res['lines']} lines, {res['seconds']:.1f} s)")

    mem = results.get("memory")
    if mem:
        out.append(f"\nPeak resident memory of rescore score ({mem['model']}; os.wait4 ru_maxrss)")
        first = None
        for text, row in mem["rows"].items():
            first = first or row["peak_rss_mib"]
            out.append(f"  {text:>6s} lines: {row['peak_rss_mib']:7.0f} MiB ({100 * (row['peak_rss_mib'] / first - 1):+.1f}%), "
                       f"{row['lines_per_s']:.0f} lines/s")

    train = results.get("training", {})
    if train:
        out.append("\nTraining (Trainer.step, Adadelta, batches of 64 random pairs, fp32)")
        for preset, res in train.items():
            out.append(f"  {preset:6s} {res['updates_per_s']:7.2f} updates/s {res['tgt_tokens_per_s']:9.0f} target tokens/s "
                       f"({res['updates']} updates)")

    if results.get("tried"):
        out.extend(format_tried(results["tried"]))
    out.extend(format_profiles(results))

    cuda = results.get("cuda", {})
    out.append("\nCUDA: " + (cuda.get("note", "") if not cuda.get("available") else
                             f"{cuda['device']}: paper fp32 {cuda['fp32']['pairs_per_s']:.0f} pairs/s, "
                             f"bf16 {cuda['bf16']['pairs_per_s']:.0f} pairs/s"))

    out.append("\nTargets")
    for t in results.get("targets", []):
        mark = {True: "MET ", False: "MISS", None: "n/a "}[t["met"]]
        value = "-" if t["value"] is None else f"{t['value']:.2f}"
        out.append(f"  [{mark}] {t['target']}: {value} (bound {t['bound']})")
    return "\n".join(out)
