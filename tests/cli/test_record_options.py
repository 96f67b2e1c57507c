"""Options come from the records' fields: a field added to TrainSettings, and nothing else, is an
option with its help, a key of the settings signature (phrase tables and sentence models alike),
a field the checkpoint stores and a setting a resume must agree with; the same for the CSLM's
LmSettings; a field added to the ablation's record alone is an option of `moses ablation`.
Repeated, paired and parsed options come from their fields' kinds."""

import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
import torch
from click.testing import CliRunner

from rescorer.cli.record_options import record_from, record_options
from rescorer.runtime.settings import RuntimeSettings
from rescorer.training.settings import TrainSettings
from tests.helpers import EXAMPLE_TABLE

def with_a_dummy_field(module: str, record: str) -> str:
    """A `rescore` run (a script for `python -c`) where `module.record` has one more field, added
    before the command line is built from the records: it runs in a process of its own."""
    return textwrap.dedent(f"""
        import dataclasses, sys
        import {module} as settings_module
        from rescorer.records import POSITIVE_INT, setting

        settings_module.{record} = dataclasses.make_dataclass(
            "{record}", [("dummy_knob", int, setting(7, POSITIVE_INT, "A knob only this test has.",
                                                    option="--dummy-knob"))],
            bases=(settings_module.{record},), frozen=True)
        from rescorer.cli.main import main
        main(sys.argv[1:], prog_name="rescore")
    """)


WITH_A_DUMMY_FIELD = with_a_dummy_field("rescorer.training.settings", "TrainSettings")
LM_WITH_A_DUMMY_FIELD = with_a_dummy_field("rescorer.training.settings", "LmSettings")
ABLATION_WITH_A_DUMMY_FIELD = with_a_dummy_field("moses_integration.settings", "AblationSettings")


def run_script(script, *args, cwd):
    return subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env={"OMP_NUM_THREADS": "1", "PATH": ""}, timeout=300)


def with_dummy_field(*args, cwd):
    return run_script(WITH_A_DUMMY_FIELD, *args, cwd=cwd)


def test_a_new_field_is_an_option_a_signature_key_a_stored_field_and_a_resume_check(tmp_path):
    shown = with_dummy_field("train", "--help", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "--dummy-knob INTEGER RANGE" in shown.stdout and "A knob only this test has." in shown.stdout
    train = ["train", EXAMPLE_TABLE, "-o", "m.pt", "--preset", "tiny", "--valid-pairs", "20", "--checkpoint-every", "2"]
    trained = with_dummy_field(*train, "--max-updates", "2", "--dummy-knob", "9", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert "|seed:1|resume:no|cache-dir:-|max-pair-length:50|dummy-knob:9|" in trained.stderr
    stored = torch.load(tmp_path / "m.pt.checkpoint", weights_only=True)["training"]["settings"]
    assert stored["format"] == 2 and stored["fields"]["dummy_knob"] == 9
    resumed = with_dummy_field(*train, "--max-updates", "4", "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "|dummy-knob:9|" in resumed.stderr  # the checkpoint's value, not the default
    refused = with_dummy_field(*train, "--max-updates", "6", "--resume", "--dummy-knob", "8", cwd=tmp_path)
    assert refused.returncode == 1
    assert "dummy-knob 9 (checkpoint) vs 8 (now)" in refused.stderr.splitlines()[-1]
    bad = with_dummy_field(*train, "--dummy-knob", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "Invalid value for '--dummy-knob': 0 is not in the range x>=1." in bad.stderr


def test_a_new_field_is_in_a_sentence_models_signature_too(tmp_path):
    """`train --parallel` takes the same TrainSettings: the field reaches its settings line."""
    words = ["in the beginning", "god created", "the heaven and", "the earth"]
    (tmp_path / "src.txt").write_text("".join(f"{words[i % 4]} {i}\n" for i in range(40)))
    (tmp_path / "tgt.txt").write_text("".join(f"au commencement {i}\n" for i in range(40)))
    trained = with_dummy_field("train", "--parallel", "src.txt", "tgt.txt", "-o", "s.pt", "--preset", "tiny",
                               "--max-updates", "2", "--dummy-knob", "9", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert "|job:train|arch:transformer|" in trained.stderr and "|dummy-knob:9|" in trained.stderr


def test_a_new_lm_field_is_an_option_a_signature_key_a_stored_field_and_a_resume_check(tmp_path):
    """The CSLM's own settings: a field added to LmSettings, and nothing else, is an option of `train
    --lm`, a key of its settings line, a field its checkpoint stores and one a resume must agree with."""
    def lm(*args):
        return run_script(LM_WITH_A_DUMMY_FIELD, *args, cwd=tmp_path)

    shown = lm("train", "--help")
    assert shown.returncode == 0 and "--dummy-knob INTEGER RANGE" in shown.stdout, shown.stderr
    (tmp_path / "text.fr").write_text("".join(f"le {w} de la terre et {w} du ciel .\n" for w in ("fils", "roi") * 15))
    train = ["train", "--lm", "text.fr", "-o", "lm.pt", "--preset", "tiny", "--valid-every", "2", "--valid-pairs", "3",
             "--batch-size", "8", "--checkpoint-every", "2"]
    trained = lm(*train, "--max-updates", "2", "--dummy-knob", "9")
    assert trained.returncode == 0, trained.stderr
    assert "|job:train-lm|" in trained.stderr and "|log-z-penalty:0.1|dummy-knob:9|" in trained.stderr
    stored = torch.load(tmp_path / "lm.pt.checkpoint", weights_only=True)["training"]["lm_settings"]
    assert stored["fields"]["dummy_knob"] == 9
    resumed = lm(*train, "--max-updates", "4", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "|dummy-knob:9|" in resumed.stderr  # the checkpoint's value, not the default
    refused = lm(*train, "--max-updates", "6", "--resume", "--dummy-knob", "8")
    assert refused.returncode == 1 and "dummy-knob 9 (checkpoint) vs 8 (now)" in refused.stderr.splitlines()[-1]


def test_a_record_is_made_from_click_s_values_by_field_name():
    values = {"max_seconds": 60.0, "batch_size": 64, "device": "cpu", "unrelated": 1}
    settings = record_from(TrainSettings, values)
    assert (settings.max_seconds, settings.batch_size, settings.batch_tokens) == (60.0, 64, None)
    assert record_from(RuntimeSettings, values) == RuntimeSettings(device="cpu")


def test_settings_that_do_not_go_together_are_a_usage_error():
    with pytest.raises(click.UsageError, match="two ways to batch: give one"):
        record_from(TrainSettings, {"batch_size": 64, "batch_tokens": 500})


def test_repeated_paired_and_parsed_options_come_from_their_kinds():
    from tests.test_records import Shaped

    @click.command()
    @record_options(Shaped)
    def command(**options):
        click.echo(repr(record_from(Shaped, options)))

    ran = CliRunner().invoke(command, ["--pair", "s", "r", "--ref", "a", "--ref", "b", "--words", "x y"])
    assert ran.exit_code == 0, ran.output
    assert ran.output.strip() == repr(Shaped(refs=(Path("a"), Path("b")), pair=(Path("s"), Path("r")),
                                             words=("x", "y")))
    assert "words=()" in CliRunner().invoke(command, ["--pair", "s", "r"]).output  # the default, parsed
    refused = CliRunner().invoke(command, ["--pair", "s", "r", "--words", "x!"])
    assert refused.exit_code == 2 and "Invalid value for '--words': --words: no '!' in 'x!'" in refused.output
    shown = CliRunner().invoke(command, ["--help"]).output
    assert "--pair SRC REF" in shown and "--ref REF" in shown and "[required]" in shown


def test_an_option_of_two_spellings_takes_both_and_messages_name_the_long_one():
    from rescorer.analysis.settings import TopTargetsSettings
    from rescorer.records import SettingError, option_name

    @click.command()
    @record_options(TopTargetsSettings, only=("top", "column"))
    def command(**options):
        settings = record_from(TopTargetsSettings, options)
        click.echo(f"{settings.top} {settings.column}")

    assert CliRunner().invoke(command, ["-k", "7"]).output == "7 None\n"
    assert CliRunner().invoke(command, ["--top", "8", "--column", "-1"]).output == "8 -1\n"
    refused = CliRunner().invoke(command, ["--column", "0"])
    assert refused.exit_code == 2 and "Invalid value for '--column': columns count from 1" in refused.output
    assert option_name(TopTargetsSettings, "top") == "--top"
    with pytest.raises(SettingError, match="^--top 0: expected >= 1$"):
        TopTargetsSettings(top=0)


def test_a_new_ablation_field_is_an_option_with_its_help(tmp_path):
    """The ablation's settings: a field added to AblationSettings, and nothing else, is an option
    of `moses ablation` with its help, and reaches the record the command builds."""
    shown = run_script(ABLATION_WITH_A_DUMMY_FIELD, "moses", "ablation", "--help", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "--dummy-knob INTEGER RANGE" in shown.stdout and "A knob only this test has." in shown.stdout
    bad = run_script(ABLATION_WITH_A_DUMMY_FIELD, "moses", "ablation", "x.ini", "--dummy-knob", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "Invalid value for '--dummy-knob': 0 is not in the range x>=1." in bad.stderr


def test_the_ablation_s_record_is_made_from_click_s_values():
    from moses_integration.settings import AblationSettings

    values = {"ini_path": Path("m.ini"), "models": (Path("a.pt"),), "dev": ("s", "r"), "threads": 2, "other": 1}
    settings = record_from(AblationSettings, values)
    assert (settings.models, settings.threads, settings.decoder_flags, settings.optimizer) == ((Path("a.pt"),), 2, (), "mert")
    with pytest.raises(click.UsageError, match="give exactly one of --rescored-table and --model"):
        record_from(AblationSettings, {"ini_path": Path("m.ini")})


def _commands(command, path=()):
    """Every command of `rescore` (subgroups walked), with its name as typed."""
    if isinstance(command, click.Group):
        for name, subcommand in command.commands.items():
            yield from _commands(subcommand, (*path, name))
    else:
        yield " ".join(path), command


def _takes_numbers(param, ctx) -> bool:
    """Whether an option's type turns text into floats: how a float option is told, whatever its type."""
    try:
        return isinstance(param.type.convert("1.5", param, ctx), float)
    except click.BadParameter:
        return False


def test_every_number_option_of_every_command_refuses_nan_and_infinity_at_parse_time():
    """An option added later with type=float (or a FloatRange, which takes nan and inf) fails here:
    every float option refuses non-finite values while parsing, before any work."""
    from rescorer.cli.main import main

    checked = []
    for name, command in _commands(main):
        ctx = click.Context(command, info_name=name)
        for param in command.params:
            if not isinstance(param, click.Option) or not _takes_numbers(param, ctx):
                continue
            checked.append(f"{name} {param.opts[-1]}")
            for text in ("nan", "inf", "-inf", "1e999"):
                with pytest.raises(click.BadParameter):
                    param.type.convert(text, param, ctx)
                    pytest.fail(f"rescore {name} {param.opts[-1]} {text} is accepted")
    assert {"train --learning-rate", "translate --length-penalty", "generate --temperature",
            "moses ablation --initial-weight"} <= set(checked)


def test_a_float_option_with_a_bound_refuses_values_past_it():
    """`translate --max-length-ratio 1e308` overflowed into an internal error; now a usage error."""
    from rescorer.cli.main import main

    result = CliRunner().invoke(main, ["translate", str(EXAMPLE_TABLE), "--input", str(EXAMPLE_TABLE),
                                       "-o", "out.txt", "--max-length-ratio", "1e308"])
    assert result.exit_code == 2
    assert "Invalid value for '--max-length-ratio': 1e+308 is not in the range 0<x<=100.0" in result.output
