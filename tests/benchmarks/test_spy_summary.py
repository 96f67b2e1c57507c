"""benchmarks/helpers/spy_summary.py: py-spy's raw stacks summed per process and thread, each sample
placed at the deepest frame of the project's code."""

from benchmarks.helpers.spy_summary import summarize

MAIN = 'process 7:"python -m rescorer score t.gz"'
WORKER = ('process 9:"python -B -c from multiprocessing.spawn import spawn_main; '
          'spawn_main(tracker_fd=9) --multiprocessing-fork"')
RAW = [
    f"{MAIN};thread (7): MainThread;main (rescorer/cli/main.py:10);_score_units (rescorer/scoring/units.py:120);"
    f"Tensor.cpu (torch/_tensor.py:5) 30\n",
    f"{MAIN};thread (7): MainThread;main (rescorer/cli/main.py:10);_score_units (rescorer/scoring/units.py:131);"
    f"format_lines (rescorer/io/score_format.py:40);repr (builtins.py:1) 10\n",
    f"{MAIN};thread (8): Thread-1;wait (threading.py:320) 40\n",
    f"{MAIN};{WORKER};thread (9): MainThread;prepare (rescorer/scoring/chunk_preparation.py:81) 5\n",
    "a line that is not a stack\n",
]


def test_samples_are_summed_per_thread_at_the_deepest_frame_of_our_code():
    text = summarize(RAW, top=5)
    blocks = [[line.strip() for line in block.splitlines()] for block in text.strip().split("\n\n")]
    heads = [block[0] for block in blocks]
    assert heads[0].split()[0:2] == ["40", "samples"] and heads[0].endswith("[MainThread]")
    assert "75.0%  scoring/units.py:120 _score_units > Tensor.cpu (_tensor.py)" in blocks[0]
    assert "25.0%  io/score_format.py:40 format_lines > repr (builtins.py)" in blocks[0]
    assert heads[1].endswith("[Thread-1]") and "100.0%  (outside rescorer) > wait (threading.py)" in blocks[1]
    # the worker's command line holds a ';': it stays one process, not a frame
    assert "import spawn_main; spawn_main(" in heads[2] and heads[2].split()[0] == "5"
    assert "100.0%  scoring/chunk_preparation.py:81 prepare > prepare (chunk_preparation.py)" in blocks[2]
