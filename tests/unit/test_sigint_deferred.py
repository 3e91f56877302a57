"""``ani.campaign.run_support.sigint_deferred``: Ctrl-C during a lab's teardown is held until the
teardown ends, then raised; a process that ignores SIGINT (``cmd &`` in a script, ``nohup``)
keeps ignoring it, also during teardown (real signals sent to this process)."""

from __future__ import annotations

import os
import signal

import pytest

from ani.campaign.run_support import sigint_deferred


@pytest.fixture
def sigint_restored():
    previous = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_in_the_block_is_held_then_raised(sigint_restored):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with sigint_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            finished.append(True)  # the block was not interrupted
    assert finished == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_sigint_stays_ignored_in_the_block(sigint_restored):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    finished = []
    with sigint_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        finished.append(True)
    assert finished == [True]  # and no KeyboardInterrupt
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
