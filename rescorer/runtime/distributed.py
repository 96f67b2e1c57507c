"""The ranks of a torchrun job: who we are, our device, and the few collectives the jobs need.

A process started by torchrun (or by any launcher that sets RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT, as `srun` with the right exports does) joins the process group:
NCCL for the model's gradients on CUDA, gloo for everything else. A process without those
variables, or a world of one, is `SINGLE` and never touches torch.distributed.

Every wait below is polled from Python, so SIGINT and SIGTERM (torchrun sends SIGTERM to the
other ranks when one dies) still end a waiting rank at once, and bounded by `--rank-timeout`,
so that a rank that stops answering without dying fails the job instead of hanging it.
Failures are agreed on: every exchange between ranks carries a failure slot, a rank that fails
fills it (`fail`), rank 0 reports the failure in one line and the others end quietly with the
same exit status.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import pickle
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, TypeVar

from rescorer.errors import RescorerError
from rescorer.runtime.failure_reports import ending, one_line

__all__ = ["Ranks", "SINGLE", "launcher_world", "join", "leave", "DEFAULT_TIMEOUT_S"]

DEFAULT_TIMEOUT_S = 3600.0
FAIL_WAIT_S = 120.0  # how long a failed rank waits for the others to hear of it
_POLL_S = 0.005
T = TypeVar("T")


def launcher_world() -> Optional[tuple[int, int, int]]:
    """(rank, world size, local rank) from the launcher's variables, or None without them."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_RANK", rank))
    except ValueError:
        raise RescorerError(f"RANK={os.environ['RANK']!r}, WORLD_SIZE={os.environ['WORLD_SIZE']!r}: "
                            f"expected integers (set by torchrun)") from None
    if not 0 <= rank < world:
        raise RescorerError(f"RANK={rank} is outside WORLD_SIZE={world}")
    return rank, world, local


class OtherRankFailed(SystemExit):
    """Ends a rank other than 0 quietly after a failure that rank 0 reports."""


@dataclass
class Ranks:
    """This process's place in the job; a world of one does no communication at all."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S
    _group: Any = field(default=None, repr=False)  # the gloo group for control messages

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def describe(self) -> str:
        return f"rank {self.rank} of {self.world_size}"

    # ---- collectives (no-ops in a world of one) ------------------------------------------
    # Every exchange carries a failure slot, so a rank that fails (`fail`) stops the others at
    # whatever exchange they are in. Exchanges use their own gloo group, apart from the
    # gradients' all-reduces, so that they pair up with each other only.
    def _wait(self, work, what: str, limit_s: float) -> bool:
        """Poll an asynchronous collective so that signals are handled while we wait; False
        when it did not complete within `limit_s`."""
        deadline = time.monotonic() + limit_s
        while not work.is_completed():
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL_S)
        try:
            work.wait()
        except RuntimeError as error:  # a peer closed its connection: it died
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            reason = re.sub(r"^\[[^\]]*\]\s*", "", first).split(". ")[0]  # gloo's, without its source line
            lost = RescorerError(f"{self.describe()}: another rank died while {what} ({reason})")
            lost.agreed = True  # nobody is left to tell
            ending()  # torchrun's SIGTERM, on its way, must not cut this short
            raise lost from None
        return True

    def _exchange(self, failure: Optional[str], value: Any, what: str, limit_s: float) -> Optional[list]:
        """All ranks' (failure, value), in rank order; None if the others did not come in time."""
        import torch
        import torch.distributed as dist

        data = pickle.dumps((failure, value))
        sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(self.world_size)]
        work = dist.all_gather(sizes, torch.tensor([len(data)], dtype=torch.int64), group=self._group,
                               async_op=True)
        if not self._wait(work, what, limit_s):
            return None
        longest = int(max(size.item() for size in sizes))
        mine = torch.zeros(longest, dtype=torch.uint8)
        mine[:len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        buffers = [torch.zeros(longest, dtype=torch.uint8) for _ in range(self.world_size)]
        if not self._wait(dist.all_gather(buffers, mine, group=self._group, async_op=True), what,
                          limit_s):
            return None
        return [pickle.loads(buffer[:int(size.item())].numpy().tobytes())
                for buffer, size in zip(buffers, sizes)]

    def _timed_out(self, what: str) -> RescorerError:
        error = RescorerError(f"{self.describe()}: no answer from the other ranks for "
                              f"{self.timeout_s:g} s while {what} (a rank died or hangs; raise "
                              f"--rank-timeout if one is only slow)")
        error.agreed = True  # the others may be gone
        return error

    def all_gather_objects(self, value: Any, what: str = "exchanging results") -> list:
        """Every rank's `value` (picklable), in rank order; a failure elsewhere is raised here."""
        if not self.is_distributed:
            return [value]
        gathered = self._exchange(None, value, what, self.timeout_s)
        if gathered is None:
            raise self._timed_out(what)
        failed = [message for message, _ in gathered if message is not None]
        if failed:
            self._raise_agreed(None, failed[0])
        return [value for _, value in gathered]

    def fail(self, failure: BaseException, what: str = "working") -> None:
        """Tell the other ranks that this one failed, then raise: rank 0 reports the failure,
        the others end quietly. If they do not come to an exchange within FAIL_WAIT_S (busy
        in a long step), this rank reports its own failure, naming itself, and ends."""
        ending()
        if getattr(failure, "agreed", False) or not self.is_distributed:
            failure.agreed = True
            raise failure
        message = one_line(failure) if isinstance(failure, Exception) else type(failure).__name__
        if not isinstance(failure, RescorerError):  # may concern this rank alone (its GPU's memory)
            message = f"{self.describe()}: {message}"
        if self._exchange(message, None, what, min(self.timeout_s, FAIL_WAIT_S)) is None:
            failure.agreed = True
            if not self.is_main and isinstance(failure, RescorerError):
                raise RescorerError(f"{self.describe()}: {message}") from None
            raise failure
        self._raise_agreed(failure, message)

    def _raise_agreed(self, failure: Optional[BaseException], message: str) -> None:
        if not self.is_main:
            raise OtherRankFailed(1)
        error = failure if failure is not None else RescorerError(message)
        error.agreed = True
        raise error

    def broadcast_object(self, value: Any, what: str = "waiting for rank 0") -> Any:
        """Rank 0's `value` on every rank."""
        return self.all_gather_objects(value if self.is_main else None, what)[0]

    def barrier(self, what: str = "waiting for the other ranks") -> None:
        self.all_gather_objects(None, what)

    def check_in(self, done: bool, lines: int = 0, what: str = "working") -> tuple[bool, int]:
        """One round of a job's progress: (every rank done, lines done by all ranks since their
        last check-in)."""
        states = self.all_gather_objects((done, lines), what)
        return all(state[0] for state in states), sum(state[1] for state in states)

    def on_main(self, work: Callable[[], T], what: str) -> T:
        """Run `work` on rank 0 while the others wait; its result (or failure) reaches all."""
        if not self.is_distributed:
            return work()
        result = None
        if self.is_main:
            try:
                result = work()
            except Exception as error:
                self.fail(error, what)
        return self.broadcast_object(result, what)

    @contextlib.contextmanager
    def together(self, what: str = "working") -> Iterator[None]:
        """Any failure inside, on any rank, becomes a failure of every rank (see `fail`)."""
        try:
            yield
        except Exception as error:
            self.fail(error, what)

    @contextlib.contextmanager
    def main_only(self, context, what: str) -> Iterator[None]:
        """Enter `context` (the run's paths and locks) on rank 0 only; the others wait until it
        is entered (or refused) there."""
        if not self.is_main:
            self.barrier(what)
            yield
            return
        try:
            context.__enter__()
        except Exception as error:
            self.fail(error, what)
        self.barrier(what)
        try:
            yield
        except BaseException:
            context.__exit__(*sys.exc_info())
            raise
        context.__exit__(None, None, None)


SINGLE = Ranks()


def join(device_type: str, timeout_s: float = DEFAULT_TIMEOUT_S, gradients: bool = True) -> Ranks:
    """This process's Ranks: SINGLE without a launcher, else a member of the started group.

    Training (`gradients`) on CUDA all-reduces through NCCL, which takes one rank per GPU.
    Scoring exchanges only small messages (gloo), so several ranks may share a GPU: each brings
    its own CPU-side pipeline (parse, encode, format, compress), which a GPU otherwise waits on.
    """
    world = launcher_world()
    if world is None or world[1] == 1:
        return SINGLE
    rank, world_size, local_rank = world
    import torch
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=timeout_s)
    backend = "nccl" if device_type == "cuda" and gradients else "gloo"
    if device_type == "cuda":
        devices = torch.cuda.device_count()
        if gradients and local_rank >= devices:
            raise RescorerError(f"LOCAL_RANK={local_rank} but this node has {devices} CUDA devices: "
                                f"training takes one rank per GPU (--nproc-per-node {devices})")
        torch.cuda.set_device(local_rank % devices)
    try:
        if not dist.is_initialized():
            dist.init_process_group(backend, timeout=timeout)
        group = dist.new_group(backend="gloo", timeout=timeout)  # for the exchanges above
    except (RuntimeError, ValueError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise RescorerError(f"rank {rank} of {world_size}: cannot join the process group "
                            f"({first})") from None
    return Ranks(rank, world_size, local_rank, timeout_s, group)


def leave(ranks: Ranks) -> None:
    """Leave the process group (after the last collective)."""
    if ranks.is_distributed:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()


def rank_device(ranks: Ranks, device):
    """The device of this rank: on CUDA, the GPU of its LOCAL_RANK (modulo the node's GPUs when
    several scoring ranks share one), else `device`."""
    import torch

    if ranks.is_distributed and device.type == "cuda":
        return torch.device("cuda", ranks.local_rank % torch.cuda.device_count())
    return device
