"""Training on two ranks (torchrun, gloo, CPU) with DistributedDataParallel: the global batch
and the pairs of each update are those of one rank, so the weights match one rank's up to the
order of float sums; --resume continues with another number of ranks; rank 0 alone writes."""

import gzip
import re
import signal
import subprocess
import sys
import time

import pytest
import torch

from tests.distributed_runs import assert_no_rescore_traceback, one_thread_env, our_lines, rescore, torchrun

TRAINING = ["--preset", "tiny", "--batch-size", "16", "--valid-every", "3", "--valid-pairs", "60",
            "--checkpoint-every", "3", "--seed", "7"]
# TRAINING with the default --checkpoint-every (1000): only the interrupt writes a checkpoint
UNTIL_INTERRUPTED = [*TRAINING[:8], "--seed", "7"]


@pytest.fixture(scope="module")
def table(tmp_path_factory, example_table):
    directory = tmp_path_factory.mktemp("table")
    lines = gzip.decompress(example_table.read_bytes()).split(b"\n")[:1200]
    (directory / "t.gz").write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return directory / "t.gz"


def weights(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def assert_same_training(a, b, atol=2e-6):
    """Checkpoints of the same updates: equal states, weights equal up to float sum order."""
    a, b = weights(a), weights(b)
    state_a, state_b = a["training"]["state"], b["training"]["state"]
    for key in ("updates", "best_update", "bad_validations", "train_tokens"):
        assert state_a[key] == state_b[key], key
    assert state_a["best_valid_ppl"] == pytest.approx(state_b["best_valid_ppl"], rel=1e-5)
    # the honest held-out pairs: the same ones, measured from the gathered per-pair log p
    assert a["honest_heldout"] == b["honest_heldout"] and len(a["honest_heldout"]) > 0
    assert state_a["honest_ppl_at_best"] == pytest.approx(state_b["honest_ppl_at_best"], rel=1e-5)
    assert sorted(a["weights"]) == sorted(b["weights"])
    for name in a["weights"]:
        torch.testing.assert_close(a["weights"][name], b["weights"][name], atol=atol, rtol=1e-4)


def test_two_ranks_train_what_one_rank_trains(tmp_path, table):
    one = rescore("-q", "train", table, "-o", tmp_path / "one.pt", "--max-updates", "8", *TRAINING,
                  cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    two = torchrun("train", table, "-o", tmp_path / "two.pt", "--max-updates", "8", *TRAINING, cwd=tmp_path)
    assert two.returncode == 0, two.stderr
    assert "|ranks:2|" in two.stderr and two.stderr.count("trained on ") == 1  # rank 0 reports
    assert_same_training(tmp_path / "one.pt.checkpoint", tmp_path / "two.pt.checkpoint")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "one.pt", "one.pt.cache", "one.pt.checkpoint", "two.pt", "two.pt.cache", "two.pt.checkpoint"]


def test_resume_with_another_number_of_ranks(tmp_path, table):
    straight = rescore("-q", "train", table, "-o", tmp_path / "straight.pt", "--max-updates", "9", *TRAINING,
                       cwd=tmp_path)
    assert straight.returncode == 0, straight.stderr
    first = torchrun("train", table, "-o", tmp_path / "resumed.pt", "--max-updates", "6", *TRAINING,
                     cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    after_6 = weights(tmp_path / "resumed.pt.checkpoint")["weights"]
    resumed = rescore("-q", "train", table, "-o", tmp_path / "resumed.pt", "--resume", "--max-updates", "9",
                      cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert_same_training(tmp_path / "straight.pt.checkpoint", tmp_path / "resumed.pt.checkpoint")
    after_9 = weights(tmp_path / "resumed.pt.checkpoint")["weights"]
    # three updates move the weights far more than the tolerance: the comparison can fail
    assert max(float((after_9[name] - after_6[name]).abs().max()) for name in after_9) > 1e-3


def test_sigterm_to_torchrun_checkpoints_the_update_every_rank_finished(tmp_path, table):
    """torchrun passes SIGTERM on to both ranks, which may receive it in different updates: they
    agree (in the loss's all-reduce) on the update to stop after, rank 0 writes its checkpoint and
    says so in one line, and a one-rank resume goes on as an uninterrupted run."""
    err = tmp_path / "err.txt"
    with open(err, "w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                    "--nproc-per-node=2", "-m", "rescorer", "train", table, "-o", "m.pt",
                                    "--max-updates", "100000", "--max-epochs", "100000",
                                    *UNTIL_INTERRUPTED], cwd=tmp_path, env=one_thread_env(), stderr=stderr)
        deadline = time.time() + 240
        while "training speed" not in err.read_text() and process.poll() is None and time.time() < deadline:
            time.sleep(0.1)  # the estimate comes 20 updates in
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
    said = err.read_text()
    assert_no_rescore_traceback(said)
    interrupted = [line for line in our_lines(said) if line.startswith("rescore: interrupted")]
    assert len(interrupted) == 1, said
    found = re.fullmatch(r"rescore: interrupted \(SIGTERM\); stopped at update (\d+); m\.pt\.checkpoint holds it "
                         r"and the pair cache m\.pt\.cache is kept: `rescore train \S+ -o m\.pt --resume` "
                         r"continues from there", interrupted[0])
    assert found, interrupted[0]
    total = str(int(found.group(1)) + 3)
    assert weights(tmp_path / "m.pt.checkpoint")["training"]["state"]["updates"] == int(found.group(1))
    resumed = rescore("-q", "train", table, "-o", tmp_path / "m.pt", "--resume", "--max-updates", total,
                      cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    straight = rescore("-q", "train", table, "-o", tmp_path / "straight.pt", "--max-updates", total,
                       "--max-epochs", "100000", *UNTIL_INTERRUPTED, cwd=tmp_path)
    assert straight.returncode == 0, straight.stderr
    assert_same_training(tmp_path / "straight.pt.checkpoint", tmp_path / "m.pt.checkpoint")


def test_a_batch_smaller_than_the_ranks_is_refused_in_one_line(tmp_path, table):
    result = torchrun("train", table, "-o", tmp_path / "m.pt", "--batch-size", "1", "--preset", "tiny",
                      cwd=tmp_path)
    assert result.returncode != 0
    assert_no_rescore_traceback(result.stderr)
    assert our_lines(result.stderr) == [
        "Error: --batch-size 1 is smaller than the 2 ranks: each rank needs at least one pair per update"]
    assert not (tmp_path / "m.pt").exists() and not (tmp_path / "m.pt.cache").exists()
