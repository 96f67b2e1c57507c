"""benchmarks/studies/proxy/real_wide_table.py and compare_real.py: the real-Moses wide rows are
scored against the right Baseline, and the proxy is judged against them on near and wide rows
apart."""

import gzip

import pandas as pd

from benchmarks.studies.proxy import compare_real
from benchmarks.studies.proxy.real_wide_table import column_system, main as real_wide_table, replicates
from moses_integration.evaluation.scores import read_references, score
from moses_integration.line_files import read_lines


def second_best(data, path):
    """Each test verse's second hypothesis of the stored lists (its first where it has one)."""
    hypotheses = {}
    with gzip.open(data / "nbest" / "test.nbest200.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            sentence, hypothesis = line.split(" ||| ")[:2]
            hypotheses.setdefault(int(sentence), []).append(hypothesis.strip())
    path.write_text("".join((h[1] if len(h) > 1 else h[0]) + "\n" for _, h in sorted(hypotheses.items())))


def test_a_row_is_scored_against_the_fixture_and_the_retuned_baseline(shared_data, tmp_path):
    decoding = tmp_path / "decoding"
    decoding.mkdir()
    with gzip.open(shared_data / "nbest" / "test.1best.gz", "rt", encoding="utf-8") as first_best:
        (decoding / "baseline-retuned.hyp").write_text(first_best.read())  # MERT kept the fixture's output
    second_best(shared_data, decoding / "baseline-lm0.hyp")
    table = real_wide_table(decoding, shared_data, tmp_path)
    written = pd.read_csv(tmp_path / "results.tsv", sep="\t", na_values="-").set_index("system")
    assert list(written.index) == ["Baseline", "Baseline-LM0", "Baseline (retuned)"]
    assert written.loc["Baseline", "test_bleu"] == 46.686  # the lists' 1-best (nbest/README.md)
    assert written.loc["Baseline (retuned)", "delta_bleu"] == 0.0
    assert written.loc["Baseline (retuned)", "p_bleu"] == 1.0  # the same output is no evidence
    lm0 = written.loc["Baseline-LM0"]
    assert lm0.delta_bleu < 0 and lm0.delta_bleu == lm0.delta_bleu_vs_retuned  # both Baselines are one output
    assert lm0.p_bleu_holm == 2 * lm0.p_bleu or lm0.p_bleu_holm == 1.0  # two rows against the fixture's
    assert lm0.p_bleu_holm_vs_retuned == lm0.p_bleu_vs_retuned  # one row against the retuned one
    assert "| Baseline-LM0 | " in (tmp_path / "results.md").read_text()
    assert table.shape[0] == 3


def test_a_rows_replicates_are_tested_as_one_concatenated_output(shared_data, tmp_path):
    decoding = tmp_path / "decoding"
    decoding.mkdir()
    first = shared_data / "nbest" / "test.1best.gz"
    for run in ("baseline-retuned", "baseline-retuned.seed2", "baseline-dist.seed2"):
        (decoding / f"{run}.hyp").write_text("".join(line + "\n" for line in read_lines(first)))
    second_best(shared_data, decoding / "baseline-dist.hyp")
    (decoding / "baseline-dist.seed10.hyp").write_text((decoding / "baseline-dist.hyp").read_text())
    (decoding / "baseline+tinypw.hyp").write_text((decoding / "baseline-dist.hyp").read_text())  # a column's row
    assert [path.name for path in replicates(decoding, "baseline-dist")] == [
        "baseline-dist.hyp", "baseline-dist.seed2.hyp", "baseline-dist.seed10.hyp"]  # seed order, not the names'
    real_wide_table(decoding, shared_data, tmp_path)
    written = pd.read_csv(tmp_path / "results.tsv", sep="\t", na_values="-").set_index("system")
    refs = read_references([shared_data / "corpus" / "test.fr.gz", shared_data / "corpus" / "test.ref-darby.fr.gz"])
    one, two = read_lines(first), read_lines(decoding / "baseline-dist.hyp")
    alone = [score(hyps, refs, "run").bleu for hyps in (two, one, two)]
    dist = written.loc["Baseline-Distortion0"]
    assert dist.replicates == 3 and written.loc["Baseline (retuned)", "replicates"] == 2
    assert round(dist.test_bleu, 4) == round(sum(alone) / 3, 4)
    assert dist.test_bleu_sd > 0
    concatenated = score(two + one + two, [list(ref) * 3 for ref in refs], "all").bleu
    # the retuned Baseline's last replicate stands beside the row's third; all three are the 1-best
    baseline = score(one * 3, [list(ref) * 3 for ref in refs], "b").bleu
    assert round(dist.delta_bleu_vs_retuned, 4) == round(concatenated - baseline, 4)
    assert dist.delta_bleu == dist.delta_bleu_vs_retuned and dist.delta_bleu != round(sum(alone) / 3 - alone[1], 4)
    assert "| Baseline-Distortion0 | 3 | " in (tmp_path / "results.md").read_text()
    assert written.loc["+tinypw", "replicates"] == 1
    each = pd.read_csv(tmp_path / "replicates.tsv", sep="\t")
    assert each[each.system == "Baseline-Distortion0"].test_bleu.round(4).tolist() == [round(b, 4) for b in alone]
    assert written.loc["+tinypw", "test_bleu"] == round(alone[0], 4)


def test_near_and_wide_rows_are_judged_apart():
    rows = pd.DataFrame({"real_delta_bleu": [0.1, -0.2, -8.0, -0.6],
                         "proxy_delta_bleu": [-0.1, -0.1, -1.3, -0.4]})
    assert compare_real.agreement(rows) == "3 of 4"
    assert compare_real.rank_correlation(rows) == "0.95 over 4 pairs"  # ranks 4 3 1 2 against 3.5 3.5 1 2
    near = rows[rows.real_delta_bleu.abs() < compare_real.WIDE]
    assert compare_real.agreement(near) == "1 of 2"


def test_a_system_takes_its_proxy_row_from_the_first_run_that_has_it(tmp_path):
    for name, delta in (("first", 0.1), ("second", 0.9)):
        (tmp_path / name).mkdir()
        pd.DataFrame({"system": ["+a", f"+{name}"], "delta_test_bleu": [delta, delta]}).to_csv(
            tmp_path / name / "results.tsv", sep="\t", index=False)
    rows = compare_real.proxy_rows([tmp_path / "first", tmp_path / "second"])
    assert rows.delta_test_bleu.to_dict() == {"+a": 0.1, "+first": 0.1, "+second": 0.9}


def test_a_wide_row_is_taken_from_the_run_with_the_most_replicates(tmp_path, monkeypatch):
    runs = {"real-wide-replicates": [("Baseline (retuned)", 3, 0.0), ("Baseline-Distortion0", 3, 0.2)],
            "real-wide": [("Baseline-LM0", None, -7.9), ("Baseline-Distortion0", None, 0.51)]}
    for folder, rows in runs.items():
        (tmp_path / folder).mkdir()
        frame = pd.DataFrame({"system": [name for name, _, _ in rows],
                              "delta_bleu_vs_retuned": [delta for _, _, delta in rows],
                              "p_bleu_vs_retuned": [0.5] * len(rows)})
        if rows[0][1] is not None:  # the older run's file had no replicates column
            frame["replicates"] = [count for _, count, _ in rows]
        frame.to_csv(tmp_path / folder / "results.tsv", sep="\t", index=False)
    monkeypatch.setattr(compare_real, "WIDE_RUNS", [tmp_path / "real-wide-replicates", tmp_path / "real-wide"])
    pages = pd.read_csv(compare_real.HERE / "real_moses.tsv", sep="\t")
    both = compare_real.real_deltas()
    assert both.iloc[:len(pages)].system.tolist() == pages.system.tolist()  # both pages' +RNN rows stay
    real = both.iloc[len(pages):].set_index("system")
    assert real.loc["Baseline-Distortion0", "real_delta_bleu"] == 0.2
    assert "3 MERT replicates" in real.loc["Baseline-Distortion0", "source"]
    assert real.loc["Baseline-LM0", "source"] == "results/real-wide (1 MERT replicate, against the retuned Baseline)"
    assert "Baseline (retuned)" not in real.index


def test_a_column_row_takes_its_proxy_from_its_own_models_run(tmp_path, monkeypatch):
    """The pages' +fwdpw+inv (older models) keeps the proxy runs given; the wide run's +fwdpw+inv
    (models trained for it) takes its own models' proxy run, and a row without one the given."""
    for name, rows in {"own": [("+fwdpw+inv", 0.4)], "given": [("+fwdpw+inv", 0.1), ("+tiny", 0.2)]}.items():
        (tmp_path / name).mkdir()
        pd.DataFrame({"system": [system for system, _ in rows], "delta_test_bleu": [d for _, d in rows],
                      "p_bleu_holm": [0.5] * len(rows)}).to_csv(tmp_path / name / "results.tsv", sep="\t",
                                                                 index=False)
    wide = tmp_path / "real-wide-replicates"
    wide.mkdir()
    pd.DataFrame({"system": ["Baseline (retuned)", "+fwdpw+inv", "+tiny", "+unmeasured"],
                  "delta_bleu_vs_retuned": [0.0, 0.3, -0.1, 0.2], "p_bleu_vs_retuned": [1.0, 0.1, 0.5, 0.5],
                  "replicates": [3, 3, 3, 3]}).to_csv(wide / "results.tsv", sep="\t", index=False)
    monkeypatch.setattr(compare_real, "WIDE_RUNS", [wide])
    monkeypatch.setattr(compare_real, "COLUMN_PROXIES", {"real-wide-replicates": [tmp_path / "own"]})
    lines = compare_real.main(tmp_path / "given").splitlines()
    rows = [line.split(" | ") for line in lines if line.startswith("| +fwdpw+inv |") or line.startswith("| +tiny |")]
    pages = [row for row in rows if "real-wide-replicates" not in row[-1]]
    ours = {row[0]: row for row in rows if "real-wide-replicates" in row[-1]}
    assert pages and all(row[3] == "+0.10" for row in pages)  # the pages' rows: the runs given
    assert ours["| +fwdpw+inv"][1:4] == ["+0.30", "0.1000", "+0.40"]  # its own models' run
    assert ours["| +tiny"][3] == "+0.20"  # no run of its own: the runs given
    assert not any("+unmeasured" in line for line in lines)  # no proxy row anywhere: left out


def test_a_column_rows_word_penalty_is_named_as_the_proxy_names_it():
    assert column_system("baseline+RNN+wp") == "+RNN+WP"
    assert column_system("baseline+fwdpw+inv") == "+fwdpw+inv"
    assert column_system("baseline+tiny15kpw") == "+tiny15kpw"
