"""The analysis commands end to end on the bundled example and tiny models: Tables 2 and 3 as
Markdown and CSV, Figures 4 and 5, attention maps and Fig. 3 as PNGs of the expected size
that are not blank, and their refusals."""

import csv
import functools
import gzip
import io
import math
import os

import pytest
import torch

from rescorer.analysis.settings import GenerateSettings
from rescorer.analysis.top_targets import SourceChoice, read_source_groups
from rescorer.cli.main import main
from rescorer.models import ModelSettings, build_model
from rescorer.models.model_files import ModelBundle, load_model, save_model
from rescorer.models.search import greedy_decode
from rescorer.scoring.batch_scoring import score_encoded
from tests.helpers import invoke, rescore

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")


run = functools.partial(invoke, main)


def png(path):
    """The image as (height, width, channels) floats in [0, 1]."""
    from matplotlib.image import imread

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return imread(path)


def assert_drawn(path, width, height):
    image = png(path)
    assert image.shape[:2] == (height, width)
    assert image[..., :3].std() > 0.05  # not blank: a uniform image has no variance


@pytest.fixture(scope="module")
def attention_models(tiny_model_path, tmp_path_factory):
    """Random-initialised rnnsearch and luong models on the tiny model's shortlists."""
    tiny = load_model(tiny_model_path)
    paths = {"cho2014": tiny_model_path}
    folder = tmp_path_factory.mktemp("attention")
    for arch, settings in (("rnnsearch", {}), ("luong", {"attention": "local-p"})):
        torch.manual_seed(1)
        config = ModelSettings.make(arch, "tiny", **settings).config(len(tiny.src_vocab), len(tiny.tgt_vocab))
        paths[arch] = folder / f"{arch}.pt"
        save_model(ModelBundle(build_model(config), tiny.src_vocab, tiny.tgt_vocab), paths[arch])
    return paths


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


# ---- Table 3: generate -------------------------------------------------------------------
def test_generate_markdown_has_a_row_per_source(tiny_model_path):
    result = run("generate", tiny_model_path, "--source", "the", "--source", "and he said", "--beam", "3",
                 "--samples", "10")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "| source | beam search (K=3) | samples: top 5 of 10 |"
    assert [line.split(" | ")[0] for line in lines[2:4]] == ["| the", "| and he said"]
    assert all(len(line.split(" | ")[1].split("; ")) == 3 for line in lines[2:4])
    assert "job:generate" in result.stderr and "seed:1" in result.stderr


def test_generate_beam_targets_are_distinct_descending_and_truly_scored(tiny_model_path):
    result = run("generate", tiny_model_path, "--source", "the house of god", "--beam", "4", "--samples", "0",
                 "--csv")
    rows = csv_rows(result.stdout)
    assert [row["method"] for row in rows] == ["beam"] * 4
    scores = [float(row["rnn_log_p"]) for row in rows]
    assert scores == sorted(scores, reverse=True) and len({row["target"] for row in rows}) == 4
    bundle = load_model(tiny_model_path)
    src = bundle.src_vocab.encode("the house of god".split())
    truth = score_encoded(bundle.model, [src] * 4, [bundle.tgt_vocab.encode(r["target"].split()) for r in rows])
    assert scores == pytest.approx(list(truth), abs=1e-5)
    greedy = greedy_decode(bundle.model, src, 20)
    one = csv_rows(run("generate", tiny_model_path, "--source", "the house of god", "--beam", "1",
                       "--samples", "0", "--csv").stdout)
    assert one[0]["target"] == " ".join(bundle.tgt_vocab.tokens[t] for t in greedy.tokens)


def test_generate_with_a_subword_model_reads_pieces_and_writes_words(subword_bundle):
    from rescorer.analysis.generation import generate
    from rescorer.models.search import beam_search

    source = "the house of zqxw"
    [item] = generate(subword_bundle, [source], GenerateSettings(beam=3, samples=0, max_length=8))
    pieces = subword_bundle.src_encoding.encode(source)
    found = beam_search(subword_bundle.model, pieces, 3, 8)
    assert [proposal.target for proposal in item.beam] == [subword_bundle.subwords.target.join(
        [subword_bundle.tgt_vocab.tokens[t] for t in h.tokens]) for h in found]
    assert item.unknown_words == [] and all("\u2581" not in p.target and "[UNK]" not in p.target for p in item.beam)


def test_generate_samples_are_reproducible_with_the_seed(tiny_model_path):
    args = ["generate", tiny_model_path, "--source", "the", "--source", "god", "--beam", "0", "--samples", "30",
            "--csv", "-k", "30"]
    first, again, other = run(*args).stdout, run(*args).stdout, run(*args, "--seed", "2").stdout
    assert first == again and first != other
    rows = csv_rows(first)
    assert {row["method"] for row in rows} == {"sample"}
    for source in ("the", "god"):
        assert sum(int(row["count"]) for row in rows if row["source"] == source) == 30
    # a source's samples do not depend on the other sources asked for
    alone = csv_rows(run("generate", tiny_model_path, "--source", "god", "--beam", "0", "--samples", "30",
                         "--csv", "-k", "30").stdout)
    assert alone == [row for row in rows if row["source"] == "god"]


def test_generate_beside_the_table(tiny_model_path, example_table):
    result = run("generate", tiny_model_path, "--source", "the", "--source", "not a source here", "--beam", "5",
                 "--samples", "0", "--table", example_table, "--csv")
    rows = csv_rows(result.stdout)
    (group,) = read_source_groups(example_table, SourceChoice(sources=["the"]))
    best = sorted(range(len(group.targets)), key=lambda i: -group.direct[i])[:5]
    table_rows = [row for row in rows if row["method"] == "table"]
    assert [row["target"] for row in table_rows] == [group.targets[i] for i in best]
    assert [float(row["table_log_p"]) for row in table_rows] == pytest.approx([group.direct[i] for i in best])
    beam = [row for row in rows if row["method"] == "beam" and row["source"] == "the"]
    assert [row["in_table"] == "yes" for row in beam] == [row["target"] in group.targets for row in beam]
    markdown = run("generate", tiny_model_path, "--source", "not a source here", "--beam", "2", "--samples", "0",
                   "--table", example_table).stdout
    assert "(not in the table)" in markdown and "* also a target of this source in phrase-table.gz" in markdown


@pytest.mark.parametrize("arch", ["cho2014", "rnnsearch", "luong"])
def test_generate_works_for_every_architecture(attention_models, arch):
    result = run("generate", attention_models[arch], "--source", "the lord", "--beam", "2", "--samples", "3",
                 "--csv", "--max-length", "4")
    assert result.exit_code == 0, result.output
    assert [row["method"] for row in csv_rows(result.stdout)][:2] == ["beam", "beam"]


def test_generate_output_file_is_refused_when_it_exists(tiny_model_path, tmp_path):
    out = tmp_path / "table3.md"
    args = ["generate", tiny_model_path, "--sources", tmp_path / "sources.txt", "--beam", "2", "--samples", "4",
            "-o", out]
    (tmp_path / "sources.txt").write_text("the\nhouse\n")
    assert run(*args).exit_code == 0
    written = out.read_text()
    assert written.count("\n| ") == 2  # a row per source
    refused = run(*args)
    assert refused.exit_code == 1 and "table3.md: the output exists; pass --force" in refused.stderr
    assert out.read_text() == written
    assert run(*args, "--force").exit_code == 0


@pytest.mark.parametrize("args, message", [
    (["--beam", "0", "--samples", "0", "--source", "x"], "leave nothing to generate"),
    ([], "give --source PHRASE"),
    (["--source", " "], "a source phrase needs at least one word"),
], ids=["nothing", "no source", "empty source"])
def test_generate_usage_errors(tiny_model_path, args, message):
    result = run("generate", tiny_model_path, *args)
    assert result.exit_code == 2 and message in result.stderr


# ---- Table 2: top-targets ----------------------------------------------------------------
def test_top_targets_long_rare_sources_scored_by_a_model(tiny_model_path, example_table):
    result = run("top-targets", example_table, "--model", tiny_model_path, "--num-sources", "4",
                 "--min-source-words", "4", "--pick", "rare", "-k", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "| source | c(source) | targets | top by the table's p(f\\|e) | top by the RNN |"
    rows = [line.split(" | ") for line in lines[2:6]]
    assert all(len(row[0].lstrip("| ").split()) >= 4 for row in rows)
    assert [float(row[1]) for row in rows] == sorted(float(row[1]) for row in rows)
    assert lines[6] == "" and lines[7].startswith("4 sources of phrase-table.gz")


def test_top_targets_csv_of_listed_sources(tiny_model_path, example_table, tmp_path):
    (tmp_path / "s.txt").write_text("the\nnot a source here\ntrumpets\n")
    result = run("top-targets", example_table, "--model", tiny_model_path, "--sources", tmp_path / "s.txt",
                 "--csv", "-k", "2", "-o", tmp_path / "t2.csv")
    assert result.exit_code == 0, result.output
    rows = csv_rows((tmp_path / "t2.csv").read_text())
    assert [(r["source"], r["ranked_by"], r["rank"]) for r in rows] == [
        ("the", "table", "1"), ("the", "table", "2"), ("the", "rnn", "1"), ("the", "rnn", "2"),
        ("trumpets", "table", "1"), ("trumpets", "table", "2"), ("trumpets", "rnn", "1"), ("trumpets", "rnn", "2"),
        ("not a source here", "", "")]
    rnn = [float(r["rnn_log_p"]) for r in rows if r["ranked_by"] == "rnn"]
    assert rnn[0] >= rnn[1] and rnn[2] >= rnn[3]
    assert "1 of the listed sources are not in" in result.stderr


def test_top_targets_refuses_column_with_model(tiny_model_path, example_table):
    result = run("top-targets", example_table, "--model", tiny_model_path, "--column", "4")
    assert result.exit_code == 2 and "with --model the model scores instead" in result.stderr


# ---- Figures 4 and 5 ---------------------------------------------------------------------
def test_plot_embeddings(tiny_model_path, tmp_path):
    out = tmp_path / "fig4.png"
    result = run("plot-embeddings", tiny_model_path, "-o", out, "--words", "40", "--dpi", "30", "--side", "target")
    assert result.exit_code == 0, result.output
    assert_drawn(out, 540, 360)
    assert "40 words" in result.stderr and "in the zoomed views" in result.stderr


def test_plot_embeddings_as_svg_without_zooms(tiny_model_path, tmp_path):
    out = tmp_path / "fig4.svg"
    result = run("plot-embeddings", tiny_model_path, "-o", out, "--words", "20", "--zooms", "0")
    assert result.exit_code == 0, result.output
    assert b"<svg" in out.read_bytes()[:400] and "zoomed" not in result.stderr


def test_plot_phrases_for_an_attention_model(attention_models, example_table, tmp_path):
    out = tmp_path / "fig5.png"
    result = run("plot-phrases", attention_models["rnnsearch"], example_table, "-o", out, "--phrases", "30",
                 "--min-words", "3", "--dpi", "30", "--zooms", "2")
    assert result.exit_code == 0, result.output
    assert_drawn(out, 540, 360)
    assert "30 phrases" in result.stderr


def test_plot_phrases_needs_enough_long_phrases(tiny_model_path, example_table, tmp_path):
    result = run("plot-phrases", tiny_model_path, example_table, "-o", tmp_path / "f.png", "--min-words", "40")
    assert result.exit_code == 1 and "0 source phrases of 40 or more words" in result.stderr
    assert not (tmp_path / "f.png").exists()


# ---- attention maps ----------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["rnnsearch", "luong"])
def test_plot_attention(attention_models, tmp_path, arch):
    out = tmp_path / "att.png"
    result = run("plot-attention", attention_models[arch], "--source", "the house of god", "--target",
                 "la maison de dieu", "--source", "and he said", "--target", "et il dit", "-o", out, "--dpi", "40")
    assert result.exit_code == 0, result.output
    assert_drawn(out, 384, 216)
    assert result.stderr.endswith(", 2 pairs\n")
    own = run("plot-attention", attention_models[arch], "--source", "the lord", "-o", out, "--force")
    assert own.exit_code == 0 and own.stderr.endswith(", 1 pair\n")  # issue 45: it said "1 pairs"


def test_the_first_plot_says_nothing_of_matplotlibs_font_cache(attention_models, tmp_path):
    """Issue 45: with no font cache yet (a fresh MPLCONFIGDIR, as on a new machine), matplotlib
    builds one and says so on stderr ("generated new fontManager"; "Matplotlib is building the
    font cache; this may take a moment." when that takes over 5 s). The command's own line only."""
    out = tmp_path / "att.png"
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl"), "OMP_NUM_THREADS": "1"}
    made = rescore("plot-attention", attention_models["rnnsearch"], "--source", "the lord", "-o", out, env=env)
    assert made.returncode == 0, made.stderr
    assert list((tmp_path / "mpl").glob("fontlist-*.json")), "the font cache was not built: nothing was provoked"
    assert made.stderr.splitlines() == [f"wrote {out}: 480x540 px, 1 pair"]


def test_plot_attention_refusals(attention_models, tmp_path):
    out = tmp_path / "att.png"
    result = run("plot-attention", attention_models["cho2014"], "--source", "a", "-o", out)
    assert result.exit_code == 1
    assert "a cho2014 model has no attention" in result.stderr and "rnnsearch, luong" in result.stderr
    mismatch = run("plot-attention", attention_models["rnnsearch"], "--source", "a", "--source", "b",
                   "--target", "x", "-o", out)
    assert mismatch.exit_code == 2 and "2 --source but 1 --target" in mismatch.stderr
    out.write_bytes(b"mine")
    exists = run("plot-attention", attention_models["rnnsearch"], "--source", "a", "-o", out)
    assert exists.exit_code == 1 and "att.png: the figure exists; pass --force" in exists.stderr
    assert out.read_bytes() == b"mine"
    wrong = run("plot-attention", attention_models["rnnsearch"], "--source", "a", "-o", tmp_path / "att.jpg")
    assert wrong.exit_code == 1 and "must end in .png, .pdf, .svg" in wrong.stderr


# ---- Figure 3 ----------------------------------------------------------------------------
def test_plot_scores_against_both_directions(tiny_model_path, example_table, tmp_path):
    rescored = tmp_path / "rescored.gz"
    assert run("score", example_table, "--model", tiny_model_path, "-o", rescored).exit_code == 0
    out = tmp_path / "fig3.png"
    result = run("moses", "plot-scores", rescored, "-o", out, "--sample-size", "500")
    assert result.exit_code == 0, result.output
    assert_drawn(out, 1200, 552)
    assert "500 pairs: Spearman rho of the RNN score with the table's p(f|e) " in result.stderr
    with gzip.open(rescored, "rt") as lines:
        assert len(next(lines).split(" ||| ")[2].split()) == 5


def test_top_targets_columns_count_from_1(tmp_path):
    """--column 5 is a line's fifth score, -1 its last; 0 is refused with the rule."""
    table = tmp_path / "rescored.txt"
    table.write_text("a ||| x ||| 0.1 0.2 0.3 0.4 0.5 ||| ||| 2 2 1\n"
                     "a ||| y ||| 0.1 0.2 0.6 0.4 0.25 ||| ||| 2 2 1\n")

    def rnn_log_p(column):
        result = run("top-targets", table, "--csv", "--column", column)
        assert result.exit_code == 0, result.output
        return [round(float(r["rnn_log_p"]), 4) for r in csv_rows(result.stdout) if r["ranked_by"] == "rnn"]

    assert rnn_log_p("5") == rnn_log_p("-1") == [round(math.log(0.5), 4), round(math.log(0.25), 4)]
    assert rnn_log_p("3") == [round(math.log(0.6), 4), round(math.log(0.3), 4)]
    refused = run("top-targets", table, "--column", "0")
    assert refused.exit_code == 2 and "columns count from 1" in refused.stderr
