"""The run worker (:mod:`ani.campaign.executors.worker`) and a stop signal that comes after it
is done: the coordinator closes an idle worker's stdin and sends SIGINT at once, so the signal
can land while the interpreter shuts down (seen in `make demo`: "Exception ignored in: <module
'threading'> ... raise KeyboardInterrupt")."""

from __future__ import annotations

import io
import signal

import pytest

import ani.campaign.executors.worker as worker


def test_a_stop_signal_after_the_worker_is_done_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setattr(worker, "_stopping", False)
    monkeypatch.setattr(worker, "install_stop_handlers", lambda: None)  # this process's handlers stay
    monkeypatch.setattr(worker, "take_stdout", lambda: io.StringIO())
    monkeypatch.setattr(worker, "die_with_parent", lambda parent: None)
    monkeypatch.setattr(worker, "serve", lambda *a: None)  # EOF at once: nothing to run

    assert worker.main(["--target", "x:y", "--workdir", str(tmp_path)]) == 0
    try:
        worker._on_stop(signal.SIGINT, None)
    except KeyboardInterrupt:  # before: raised in the interpreter's shutdown
        pytest.fail("a stop signal after the worker was done raised KeyboardInterrupt")


def test_the_first_stop_signal_while_serving_still_stops(monkeypatch):
    monkeypatch.setattr(worker, "_stopping", False)
    try:
        worker._on_stop(signal.SIGTERM, None)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the first stop signal must raise KeyboardInterrupt")
    worker._on_stop(signal.SIGINT, None)  # a second one: ignored
