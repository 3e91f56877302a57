"""The coordinator's side of a worker process (:mod:`ani.campaign.executors.worker`): start it,
hand it one plan at a time, read its messages, stop it.

    host = WorkerProcess.start("ani.campaign.execute:execute", workdir)
    host.send(plan)                       # only once host.ready, one plan at a time
    for msg in host.read():               # after the selector says host.fileno() is readable
        ...                               # {"kind": "ready" | "event" | "record", ...}
    host.eof                              # the worker closed its stream: it exited (host.wait())
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ani.campaign.plan import RunPlan

READ_CHUNK = 1 << 16


class WorkerProcess:
    """One worker process. Attributes: ``proc`` (the Popen), ``target`` (its run function),
    ``ready`` (that is imported), ``plan`` (the plan it runs, None when idle), ``eof`` (its
    stream ended)."""

    def __init__(self, proc: subprocess.Popen[bytes], target: str = "") -> None:
        self.proc = proc
        self.target = target
        self.ready = False
        self.plan: RunPlan | None = None
        self.eof = False
        self._buf = b""

    @classmethod
    def start(cls, target: str, workdir: str | Path, *, env: dict[str, str] | None = None,
              remove_workdir: bool = False, own_group: bool = False) -> WorkerProcess:
        """Start ``python -m ani.campaign.executors.worker`` (this interpreter), its stderr
        the coordinator's, dying with the calling thread (``PR_SET_PDEATHSIG``);
        ``remove_workdir``: it removes ``workdir`` when it exits; ``own_group``: in a process
        group of its own, out of reach of a SIGINT sent to the caller's group (a terminal's
        Ctrl-C), so only the coordinator's :meth:`signal` stops it."""
        argv = [sys.executable, "-m", "ani.campaign.executors.worker", "--target", target,
                "--workdir", str(workdir), "--parent", str(os.getpid())]
        argv += ["--remove-workdir"] if remove_workdir else []
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                close_fds=True, process_group=0 if own_group else None)
        return cls(proc, target)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def fileno(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def send(self, plan: RunPlan, workdir: str | Path | None = None) -> None:
        """Hand ``plan`` to the worker (it must be idle), to run in ``workdir`` (None: the
        one it was started with). A worker that died meanwhile is noticed by its end of
        stream, not here."""
        self.plan = plan
        line = plan.to_line() if workdir is None else json.dumps(
            {"plan": json.loads(plan.to_line()), "workdir": str(workdir)})
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def read(self) -> list[dict[str, Any]]:
        """The whole messages readable now (one read; call when readable). A line cut short
        by the worker's death is dropped at end of stream."""
        try:
            chunk = os.read(self.fileno(), READ_CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            self._buf = b""
            return []
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        out = []
        for line in lines:
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # not ours (nothing else writes there); never fatal
            if isinstance(msg, dict):
                if msg.get("kind") == "ready":
                    self.ready = True
                out.append(msg)
        return out

    def finish(self) -> None:
        """Close its stdin: an idle worker exits."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass

    def signal(self, sig: int) -> None:
        """Send ``sig`` if it still runs (never to a reaped PID)."""
        if self.proc.returncode is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> int | None:
        """Its exit code (negative: the signal) after at most ``timeout`` s (None: still running)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL if it still runs (its lab, if any, is removed by the lab's reaper), reap it
        and close its pipes."""
        self.signal(signal.SIGKILL)
        self.proc.wait()
        for fh in (self.proc.stdin, self.proc.stdout):
            try:
                if fh is not None:
                    fh.close()
            except OSError:
                pass


def stop_all(workers: list[WorkerProcess], grace_s: float, on_message: Any = None) -> None:
    """Stop ``workers`` and reap them: SIGINT to each that runs (it takes its lab down), then
    wait, reading their streams (``on_message(worker, msg)`` for each message, so a worker
    writing its last record never blocks on a full pipe). A KeyboardInterrupt while waiting (a
    second Ctrl-C) and the end of ``grace_s`` kill what still runs (SIGKILL: each lab's reaper
    removes it within a second). Returns when none is left."""
    for w in workers:
        w.finish()
        w.signal(signal.SIGINT)
    deadline = time.monotonic() + grace_s
    try:
        _drain([w for w in workers if not w.eof], deadline, on_message)
    except KeyboardInterrupt:  # a second Ctrl-C: kill what still runs
        deadline = time.monotonic()
    for w in workers:
        try:
            w.wait(max(0.0, deadline - time.monotonic()))
        except KeyboardInterrupt:  # another Ctrl-C: no more waiting
            deadline = time.monotonic()
        w.kill()  # still running after the grace: SIGKILL; else only reaped and closed


def _drain(pending: list[WorkerProcess], deadline: float, on_message: Any) -> None:
    sel = selectors.DefaultSelector()
    for w in pending:
        sel.register(w.fileno(), selectors.EVENT_READ, w)
    try:
        open_ = set(pending)
        while open_ and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=min(0.5, max(0.0, deadline - time.monotonic()))):
                w = key.data
                for msg in w.read():
                    if on_message is not None:
                        on_message(w, msg)
                if w.eof:
                    sel.unregister(w.fileno())
                    open_.discard(w)
    finally:
        sel.close()
