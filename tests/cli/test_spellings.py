"""One vocabulary: across every command, one idea has one spelling and one spelling one idea,
every option says what it does, and the old spellings still work for a version, each with a
one-line notice. The ideas are the names the records and option declarations give the values
(a repeatable option's is the plural of its idea's)."""

from collections import defaultdict

import click
import pytest

from rescorer.cli.main import main
from rescorer.cli.old_spellings import OLD_SPELLINGS, rewritten
from tests.helpers import rescore


def commands(group=main, path=()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def options(command):
    return [param for param in command.params if isinstance(param, click.Option)]


def idea(option: click.Option) -> str:
    return option.name[:-1] if option.multiple and option.name.endswith("s") else option.name


def spelling(option: click.Option) -> str:
    return max(option.opts, key=len)


def clashes(named_commands) -> tuple[dict, dict]:
    """(ideas spelled two ways, spellings meaning two ideas), each with where."""
    spellings, ideas = defaultdict(set), defaultdict(set)
    for path, command in named_commands:
        for option in options(command):
            spellings[idea(option)].add((spelling(option), path))
            ideas[spelling(option)].add((idea(option), path))
    two_spellings = {name: sorted(found) for name, found in spellings.items()
                     if len({spelled for spelled, _ in found}) > 1}
    two_ideas = {name: sorted(found) for name, found in ideas.items() if len({meant for meant, _ in found}) > 1}
    return two_spellings, two_ideas


def test_one_spelling_per_idea_and_one_idea_per_spelling():
    assert clashes(commands()) == ({}, {})


def test_the_check_sees_two_spellings_of_one_idea_and_two_ideas_of_one_spelling():
    tune = click.Command("tune", params=[click.Option(["--nbest", "nbest_size"]),
                                         click.Option(["-o", "--output", "output"])])
    rerank = click.Command("rerank", params=[click.Option(["--nbest-size", "nbest_size"]),
                                             click.Option(["-o", "--output", "out_path"]),
                                             click.Option(["--model", "models"], multiple=True)])
    score = click.Command("score", params=[click.Option(["--model", "model"])])
    two_spellings, two_ideas = clashes([("tune", tune), ("rerank", rerank), ("score", score)])
    assert two_spellings == {"nbest_size": [("--nbest", "tune"), ("--nbest-size", "rerank")]}
    assert two_ideas == {"--output": [("out_path", "rerank"), ("output", "tune")]}  # models: model's plural


def test_every_option_says_what_it_does():
    silent = [(path, spelling(option)) for path, command in commands() for option in options(command)
              if not (option.help or "").strip()]
    assert silent == []


@pytest.mark.parametrize("old", OLD_SPELLINGS, ids=lambda old: " ".join(old.words))
def test_old_spellings_mean_todays_words_and_are_in_no_help(old):
    for path in old.commands:
        command = dict(commands())[path]
        spelled = {opt for option in options(command) for opt in (*option.opts, *option.secondary_opts)}
        assert old.now[0] in spelled and old.words[0] not in spelled - {old.now[0]}, path
        notices = []
        assert rewritten(path, ["X", *old.words, "Y"], notices.append) == ["X", *old.now, "Y"]
        assert notices == [old.notice(path)]


def test_old_spelling_rewrites_joined_values_and_stops_at_double_dash():
    assert rewritten("translate", ["--nbest=5"], lambda _: None) == ["--nbest-size=5"]
    assert rewritten("moses rerank", ["--optimizer=kbmira"], lambda _: None) == ["--optimizer=batch-mira"]
    assert rewritten("moses rerank", ["--", "--optimizer", "kbmira"], lambda _: None) == \
        ["--", "--optimizer", "kbmira"]
    assert rewritten("score", ["--nbest", "5"], lambda _: None) == ["--nbest", "5"]  # not score's


def test_an_old_spelling_still_runs_with_a_notice(tiny_model_path, tmp_path):
    source = tmp_path / "in.en"
    source.write_text("the lord\n")
    result = rescore("translate", tiny_model_path, "--input", source, "-o", tmp_path / "out.fr",
                     "--beam", "2", "--nbest", "2", "--nbest-out", tmp_path / "out.nbest")
    assert result.returncode == 0, result.stderr
    assert ("rescore translate: --nbest is an old spelling, accepted until the next version: "
            "write --nbest-size") in result.stderr.splitlines()
    assert len((tmp_path / "out.nbest").read_text().splitlines()) == 2


def test_the_moses_group_on_its_own_takes_old_spellings(tmp_path):
    from click.testing import CliRunner

    from rescorer.cli.moses_commands import moses

    nbest = tmp_path / "n.txt"
    nbest.write_text("0 ||| a ||| F= 1 ||| 0.5\n")
    result = CliRunner().invoke(moses, ["rescore-nbest", str(nbest), "--source", str(tmp_path / "none.en"),
                                        "--model", str(nbest), "-o", str(tmp_path / "o.txt")])
    assert result.exit_code == 2 and "No such option" not in result.output
    assert "'--input': File" in result.output and "none.en' does not exist" in result.output
