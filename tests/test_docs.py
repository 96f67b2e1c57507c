"""The README and the docs pages hold up: every relative link points at a file (and heading)
that exists, every `rescore ...` command they show names a real command and only options
that command takes, every guide's `sh` blocks run on the bundled examples, every study page's
tables are the ones its committed result files give, and no BLEU table is typed by hand."""

import os
import re
import shlex
import subprocess
import sys

from pathlib import Path

import click
import pytest

from rescorer.cli.main import main
from tests.helpers import REPO

GUIDES = sorted((REPO / "docs" / "guides").glob("*.md"))
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *GUIDES]


def anchors(page) -> set[str]:
    """GitHub's anchors of a page's headings."""
    return {re.sub(r"[^\w\- ]", "", heading.lower()).strip().replace(" ", "-")
            for heading in re.findall(r"^#+ (.*)$", page.read_text(), re.M)}


def shown_commands(page) -> list[str]:
    """The `rescore ...` commands of a page: in fenced and indented code, and inline."""
    text = page.read_text()
    unfenced = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    pieces = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    pieces += re.findall(r"^ {4,}((?:[^\n]*\\\n {4,})*[^\n]*)", unfenced, re.M)
    pieces += [span.replace("\\|", " ") for span in re.findall(r"`([^`]+)`", unfenced.replace("\n", " "))
               if "rescore " in span]  # `\|` is a table's escaped bar: [--model M \| --column C]
    commands = []
    for piece in pieces:
        for line in piece.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|\||;|\|", line):
                found = re.search(r"(?:^|\s)(rescore\s.*)$", part.split(" #")[0].strip())
                if found:
                    commands.append(found.group(1))
    return commands


def command_of(words: list[str]) -> tuple[click.Command, list[str]]:
    """The click command `rescore WORDS` runs, and the words left for it (a group itself when
    the page names it with `...`)."""
    command, words = main, [w for w in words if w not in ("-q", "--quiet")]
    while isinstance(command, click.Group):
        if words[:1] == ["..."]:
            return command, []
        if words and words[0] in command.commands:
            command, words = command.commands[words[0]], words[1:]
        elif command is main:
            command = main.commands["run"]
        else:
            raise AssertionError(f"no such command: {words[:1]}")
    return command, words


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path) if path else page
        assert linked.exists(), f"{page.name}: {target} does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{page.name}: no heading #{anchor} in {linked.name}"


def test_every_command_shown_takes_the_options_it_is_shown_with():
    shown = [(page, text) for page in PAGES for text in shown_commands(page)]
    assert len(shown) >= 30  # the walk-throughs are there
    for page, text in shown:
        words = shlex.split(text)[1:]
        command, words = command_of(words)
        takes = {"--help", "-h", *(name for param in command.params
                                   for name in (*param.opts, *param.secondary_opts))}
        given = {word.split("=")[0] for word in words  # options, not values such as -2 or "-s 400"
                 if re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", word)}
        assert given <= takes, f"{page.name}: `{text}` -- {command.name} does not take {given - takes}"


def bleu_tables(page) -> int:
    """How many of a page's tables have a BLEU column."""
    lines = page.read_text().splitlines()
    return sum(1 for number, line in enumerate(lines) if line.startswith("|---") and "BLEU" in lines[number - 1])


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_page_of_bleu_results_says_what_bleu_is_and_where_its_files_are(page):
    """A results page states its BLEU (the sacrebleu signature) and whether result files back
    its tables: a reader must know which figures can be checked against a file."""
    if bleu_tables(page):
        text = page.read_text()
        assert "nrefs:" in text, f"{page.name}: BLEU tables without the sacrebleu signature"
        assert "**Result files:**" in text, f"{page.name}: BLEU tables without a **Result files:** statement"


def test_a_bleu_table_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("| System | Test BLEU |\n|---|---|\n| Baseline | 46.65 |\n\n| a | b |\n|---|---|\n")
    assert bleu_tables(page) == 1
    with pytest.raises(AssertionError, match="signature"):
        test_every_page_of_bleu_results_says_what_bleu_is_and_where_its_files_are(page)


def _studies() -> list:
    """benchmarks/studies/study_pages.py's tables modules (imported as tests/benchmarks/ import the
    study scripts)."""
    from benchmarks.studies import study_pages

    return study_pages.studies()


@pytest.mark.parametrize("study", _studies(), ids=lambda study: study.PAGE.name)
def test_a_study_pages_tables_are_the_ones_its_result_files_give(study):
    from benchmarks.helpers import page_tables

    text = study.PAGE.read_text()
    assert set(page_tables.page_tables(text)) == set(study.TABLES)  # every table on the page is generated
    assert page_tables.differences(text, study.TABLES) == [], "run python3 benchmarks/studies/study_pages.py --write"


def hand_typed_bleu_tables(page, generated_pages) -> list:
    """The first lines of a page's BLEU tables that stand outside a generated block (every line on
    a page no study generates)."""
    from benchmarks.helpers import page_tables

    text = page.read_text()
    lines = text.splitlines()
    inside = page_tables.generated_lines(text) if page.resolve() in generated_pages else set()
    return [lines[number - 1] for number, line in enumerate(lines)
            if line.startswith("|---") and "BLEU" in lines[number - 1] and number not in inside]


def test_no_page_holds_a_bleu_table_typed_by_hand():
    """Every BLEU figure in a table comes from a result file: a BLEU table stands only inside a
    study page's generated block."""
    generated_pages = {study.PAGE.resolve() for study in _studies()}
    typed = {page.name: hand_typed_bleu_tables(page, generated_pages) for page in PAGES}
    assert {name: found for name, found in typed.items() if found} == {}


def test_a_bleu_table_outside_a_generated_block_is_found(tmp_path):
    page = tmp_path / "page.md"
    generated = "<!-- table: t -->\n| System | Test BLEU |\n|---|---|\n| Baseline | 46.65 |\n<!-- end table -->\n"
    page.write_text(generated + "\n| System | Dev BLEU |\n|---|---|\n| Baseline | 48.88 |\n")
    assert hand_typed_bleu_tables(page, {page.resolve()}) == ["| System | Dev BLEU |"]
    assert len(hand_typed_bleu_tables(page, set())) == 2  # a page no study generates: both


@pytest.mark.parametrize("study, name, figure, edited", [
    ("proxy.study_tables", "recipes", "| +0.01 |", "| +0.02 |"),  # dropout's proxy Δ, typed by hand
    ("proxy.study_tables", "speed", "**14.3 min**", "**14.0 min**"),
    ("proxy.study_tables", "precision-bleu", "(0.00, −0.34, −0.54)", "(0.00, −0.34, −0.55)"),
    ("proxy.study_tables", "study", "| -1.28 |", "| -1.27 |"),
    ("proxy.table1_tables", "table1", "| +0.66 (+1.10, +0.43, +0.44) |", "| +0.67 (+1.10, +0.43, +0.44) |"),
    ("proxy.phrase_feature_tables", "weights", "fwd +0.0137,", "fwd +0.0138,"),
    ("sentence_tables", "sentence-final", "| 32.62 / 49.95 |", "| 32.63 / 49.95 |"),
    ("analysis_tables", "table3", "(×21, -1.15)", "(×21, -1.05)"),  # a command's output, as printed
    ("analysis_tables", "analysis-model", "honest 5.86", "honest 5.68"),
    ("arch_guide_tables", "arch-guide", "| 24.7 |", "| 24.6 |"),
    ("training_tables", "time-to-quality", "| 5.9 |", "| 5.8 |"),
])
def test_a_figure_edited_on_the_page_fails_the_check(study, name, figure, edited):
    import importlib

    from benchmarks.helpers import page_tables

    tables = importlib.import_module(f"benchmarks.studies.{study}")
    text = tables.PAGE.read_text()
    body = page_tables.page_tables(text)[name]
    assert figure in body
    edited_text = text.replace(body, body.replace(figure, edited, 1))
    assert page_tables.differences(edited_text, tables.TABLES) == [name]


def guide_blocks(page) -> list[str]:
    """A guide's runnable steps: its fenced `sh` blocks, in order."""
    return re.findall(r"^```sh\n(.*?)^```", page.read_text(), re.S | re.M)


def run_block(block: str, cwd: Path) -> subprocess.CompletedProcess:
    """One block as a user's shell runs it (stopping at a failing command: -e; a pipe into
    `head` is not a failure, so no pipefail), with the installed `rescore` first on the PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(["bash", "-eu", "-c", block], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PATH": path}, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("page", GUIDES, ids=lambda page: page.name)
def test_every_guide_runs_on_the_bundled_examples(page, tmp_path):
    """Each `sh` block, in order, as a user would type it at the repository's root (here a
    copy: examples/ linked, work/ fresh)."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    blocks = guide_blocks(page)
    assert blocks, f"{page.name} has no sh block to run"
    for block in blocks:
        run = run_block(block, tmp_path)
        assert run.returncode == 0, f"{page.name}: exit {run.returncode} from\n{block}\n{run.stderr[-2000:]}"
        assert "Traceback" not in run.stderr


def test_a_failing_guide_step_is_found(tmp_path):
    """The runner's check bites: a block that exits non-zero is reported (the guides' test
    would otherwise pass on a broken step)."""
    page = tmp_path / "guide.md"
    page.write_text("# A guide\n\n```sh\ntrue\n```\n\n```sh\nrescore --no-such-option\necho reached\n```\n")
    blocks = guide_blocks(page)
    assert blocks == ["true\n", "rescore --no-such-option\necho reached\n"]
    assert run_block(blocks[0], tmp_path).returncode == 0
    failed = run_block(blocks[1], tmp_path)
    assert failed.returncode == 2 and "reached" not in failed.stdout  # usage error, and the block stopped


def test_the_models_page_gives_each_presets_parameter_count():
    """docs/models.md's presets table: each row's parameter count (at 15,000-word shortlists, as
    its header says) is the count of the model that arch and preset build."""
    from rescorer.models import ModelSettings, build_model, count_parameters

    rows = re.findall(r"^\| (\w+) \| `(\w+)` \|.*\| ([\d.]+)M \|$", (REPO / "docs" / "models.md").read_text(), re.M)
    assert len(rows) == 12  # four architectures, three presets each
    for arch, preset, shown in rows:
        model = build_model(ModelSettings.make(arch, preset).config(15000, 15000))
        assert f"{count_parameters(model) / 1e6:.1f}" == shown, f"{arch} {preset}"
