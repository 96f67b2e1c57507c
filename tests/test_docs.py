"""The README and the docs pages hold up: every relative link points at a file (and heading)
that exists, and every `rescore ...` command they show names a real command and only options
that command takes."""

import re
import shlex

import click
import pytest

from rescorer.cli.main import main
from tests.helpers import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


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


def _study_tables():
    """benchmarks/studies/proxy/study_tables.py, loaded as a module (benchmarks/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("study_tables", REPO / "benchmarks" / "studies" / "proxy" / "study_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_proxy_studys_tables_are_the_ones_its_result_files_give():
    tables = _study_tables()
    text = tables.PAGE.read_text()
    assert set(tables.page_tables(text)) == set(tables.TABLES)  # every table on the page is generated
    assert tables.differences(text) == [], "run python3 benchmarks/studies/proxy/study_tables.py --write"


@pytest.mark.parametrize("name, figure, edited", [
    ("recipes", "| +0.01 |", "| +0.02 |"),  # dropout's proxy Δ, typed by hand
    ("speed", "**14.3 min**", "**14.0 min**"),
    ("precision-bleu", "(0.00, −0.34, −0.54)", "(0.00, −0.34, −0.55)"),
    ("study", "| -1.28 |", "| -1.27 |"),
])
def test_a_figure_edited_on_the_page_fails_the_check(name, figure, edited):
    tables = _study_tables()
    text = tables.PAGE.read_text()
    body = tables.page_tables(text)[name]
    assert figure in body
    assert tables.differences(text.replace(body, body.replace(figure, edited, 1))) == [name]
