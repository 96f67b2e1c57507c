"""The command line as a user meets it: -q/-v wherever they are written, the group's help, shell
completion."""

import os
import subprocess

from tests.helpers import RESCORE, first_lines, gz_lines, rescore


def test_quiet_after_the_command_silences_like_before_it(tiny_model_path, example_table, tmp_path):
    table = first_lines(example_table, 50, tmp_path / "t.gz")
    loud = rescore("score", table, "--model", tiny_model_path, "-o", tmp_path / "a.gz")
    before = rescore("-q", "score", table, "--model", tiny_model_path, "-o", tmp_path / "b.gz")
    after = rescore("score", table, "--model", tiny_model_path, "-o", tmp_path / "c.gz", "-q")
    assert loud.returncode == before.returncode == after.returncode == 0, after.stderr
    assert "lines in 50, out 50" in loud.stderr
    assert before.stderr == after.stderr == ""
    assert gz_lines(tmp_path / "b.gz") == gz_lines(tmp_path / "c.gz")


def test_quiet_after_a_moses_command(tmp_path):
    nbest = tmp_path / "n.txt"
    nbest.write_text("0 ||| a b ||| F= 1 ||| 0.5\n")
    result = rescore("moses", "rescore-nbest", nbest, "--source", nbest, "--model", nbest, "-o",
                     tmp_path / "out.txt", "-q", "--no-such-option")
    assert result.returncode == 2 and "No such option '--no-such-option'" in result.stderr  # not '-q'


def test_verbose_is_accepted_after_the_command_and_turns_on_debug_messages(tmp_path):
    result = rescore("top-targets", tmp_path / "missing.gz", "-v")
    assert result.returncode == 2 and "missing.gz" in result.stderr  # parsed -v, then the path
    for words in (["-v", "--help"], ["score", "--help"], ["moses", "rerank", "--help"]):
        shown = rescore(*words)
        assert "-v, --verbose" in shown.stdout and "-q, --quiet" in shown.stdout, words


def test_group_help_shows_whole_descriptions_and_what_rescore_table_means():
    shown = " ".join(rescore("--help").stdout.split())
    assert "drawn as Bahdanau's Fig. 3: each target word's weights over the source words" in shown
    assert "..." not in shown.split("Commands:")[1]
    assert "`rescore TABLE [OPTIONS]` is short for `rescore run TABLE [OPTIONS]`" in shown
    assert "_RESCORE_COMPLETE=bash_source rescore" in shown


def test_shell_completion_completes_commands_and_options():
    def complete(*words):
        env = {**os.environ, "_RESCORE_COMPLETE": "bash_complete",
               "COMP_WORDS": " ".join(["rescore", *words]), "COMP_CWORD": str(len(words))}
        return subprocess.run([RESCORE], env=env, capture_output=True, text=True).stdout.split()

    assert "plain,score" in complete("sc")
    assert "plain,--unk-penalty" in complete("score", "--unk")
    assert "plain,rescore-nbest" in complete("moses", "resc")


def test_source_phrases_can_come_from_stdin(tiny_model_path):
    args = [RESCORE, "-q", "generate", str(tiny_model_path), "--sources", "-", "--beam", "2",
            "--samples", "0"]
    piped = subprocess.run(args, input="the lord\nand he said\n", capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    rows = [line.split(" | ")[0].strip("| ") for line in piped.stdout.splitlines()[2:4]]
    assert rows == ["the lord", "and he said"]


def test_each_figure_command_states_its_own_size():
    assert "18 x 12 inches" in rescore("plot-phrases", "--help").stdout
    attention = " ".join(rescore("plot-attention", "--help").stdout.split())
    assert "18 x 12" not in attention and "4.8 x 5.4 inches" in attention


def test_translate_reads_stdin_and_writes_stdout_as_it_does_files(tiny_model_path, tmp_path):
    source = tmp_path / "in.en"
    source.write_text("the lord\nand he said\n\n")
    assert rescore("-q", "translate", tiny_model_path, "--input", source, "-o", tmp_path / "out.fr",
                   "--beam", "2").returncode == 0
    piped = subprocess.run([RESCORE, "-q", "translate", str(tiny_model_path), "--input", "-", "-o", "-",
                            "--beam", "2", "--precision", "fp32"],
                           input=source.read_text(), capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == (tmp_path / "out.fr").read_text() and len(piped.stdout.splitlines()) == 3
    without_o = subprocess.run([RESCORE, "-q", "translate", str(tiny_model_path), "--input", "-", "--beam", "2",
                                "--precision", "fp32"], input=source.read_text(), capture_output=True, text=True)
    assert without_o.returncode == 0, without_o.stderr
    assert without_o.stdout == piped.stdout  # no -o: stdout, like marian-decoder and fairseq-interactive
