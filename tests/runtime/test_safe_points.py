"""HeldInterrupts (rescorer.runtime.safe_points): a signal inside the block is recorded, not raised;
one left untaken when the block ends goes to the handler of before; the handlers are put back."""

from __future__ import annotations

import os
import signal

import pytest

from rescorer.runtime.safe_points import HeldInterrupts


class Raised(Exception):
    pass


@pytest.fixture()
def raising_handlers():
    """SIGINT and SIGTERM raise Raised(signum) while the test runs."""

    def handler(signum, frame):
        raise Raised(signum)

    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield handler
    for signum, old in previous.items():
        signal.signal(signum, old)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_is_recorded_and_the_block_goes_on(raising_handlers, signum):
    with pytest.raises(Raised) as after:
        with HeldInterrupts() as held:
            os.kill(os.getpid(), signum)
            os.kill(os.getpid(), signal.SIGINT)  # a second one changes nothing
            assert held.signum == signum  # the loop's safe point reads it here
            reached_the_end = True
    assert reached_the_end
    assert after.value.args == (signum,)  # untaken at the end: the handler of before, at once
    assert signal.getsignal(signum) is raising_handlers


def test_a_block_left_by_an_exception_does_not_raise_the_signal_again(raising_handlers):
    with pytest.raises(KeyError):
        with HeldInterrupts():
            os.kill(os.getpid(), signal.SIGTERM)
            raise KeyError("the loop's own way out (its Interrupted, or a failure)")
    assert signal.getsignal(signal.SIGTERM) is raising_handlers


def test_no_signal_no_change(raising_handlers):
    with HeldInterrupts() as held:
        pass
    assert held.signum is None and signal.getsignal(signal.SIGINT) is raising_handlers
