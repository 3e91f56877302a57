"""``--jobs N``: N runs at once on this machine, each in its own worker process
(:mod:`ani.campaign.executors.worker`), each on its own lab.

Processes, not threads: a run installs signal handlers and keeps per-process state. Each
worker is long-lived and runs one plan at a time; the coordinator hands a plan only to an idle
worker that has imported the run function, so a worker that dies can have lost exactly the one
run it held: that run is reported as ``infra_error`` (``worker died: killed by SIGKILL``,
``--resume`` runs it again) and a new worker takes the next plans.

Stopping: Ctrl-C in a terminal reaches the whole process group; SIGTERM and SIGHUP to the
coordinator are forwarded to the workers as SIGINT (while :meth:`LocalExecutor.run` runs, in
the main thread). Every worker takes its lab down, the coordinator waits for them (at most
:data:`STOP_GRACE_S`, then SIGKILL, as at a second Ctrl-C: each lab's reaper removes it) and
raises KeyboardInterrupt. A kill -9 of the coordinator reaches the workers as SIGTERM
(``PR_SET_PDEATHSIG``). No worker outlives :meth:`LocalExecutor.run`.
"""

from __future__ import annotations

import selectors
import signal
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ani.campaign.executors.base import DEFAULT_TARGET, RunSink, exit_text, load_target, lost_record
from ani.campaign.executors.process import WorkerProcess, stop_all
from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord
from ani.errors import ConfigError, HostFault

#: seconds the runs in flight get to take their labs down after a stop, before SIGKILL
STOP_GRACE_S = 60.0
#: workers in a row that die before they are ready: the machine cannot start them
MAX_START_FAILURES = 3
#: the signals forwarded to the workers as SIGINT (as ani.campaign.loop stops on them)
FORWARDED = (signal.SIGTERM, signal.SIGHUP)


class LocalExecutor:
    """``jobs`` runs at once, in worker processes on this machine.

    Args:
        jobs: runs at once (>= 1; the default comes from :mod:`ani.host.capacity`).
        target: the run function, ``module:function`` (tests pass a fake).

    Raises:
        ConfigError: ``jobs`` < 1, or ``target`` cannot be loaded.
    """

    name = "local"

    def __init__(self, jobs: int = 1, *, target: str = DEFAULT_TARGET) -> None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ConfigError(f"--jobs: expected a whole number >= 1, got {jobs!r}")
        load_target(target)  # a bad target fails here, not in every worker
        self.slots = jobs
        self.target = target
        self._workers: list[WorkerProcess] = []

    def run(self, plans: Sequence[RunPlan], out_dir: Path, sink: RunSink) -> None:
        """Run ``plans`` (see :class:`ani.campaign.executors.base.Executor`).

        Raises:
            KeyboardInterrupt: stopped (Ctrl-C, SIGTERM, SIGHUP); the runs in flight are not reported.
            HostFault: :data:`MAX_START_FAILURES` workers in a row died before they were ready.
        """
        todo = deque(plans)
        if not todo:
            return
        run = _Run(self, Path(out_dir), sink, todo)
        try:
            with _forward_stop_signals():
                run.loop()
        except BaseException:
            stop_all(self._workers, STOP_GRACE_S, run.on_stop_message)
            self._workers.clear()
            raise
        stop_all(self._workers, STOP_GRACE_S)  # all idle now: they exit
        self._workers.clear()

    def close(self) -> None:
        """Kill any worker left (none after :meth:`run` returned or raised)."""
        for w in self._workers:
            w.kill()
        self._workers.clear()


class _Run:
    """The state of one :meth:`LocalExecutor.run`."""

    def __init__(self, ex: LocalExecutor, out_dir: Path, sink: RunSink, todo: deque[RunPlan]) -> None:
        self.ex, self.out_dir, self.sink, self.todo = ex, out_dir, sink, todo
        self.sel = selectors.DefaultSelector()
        self.running = 0
        self.start_failures = 0

    def loop(self) -> None:
        for _ in range(min(self.ex.slots, len(self.todo))):
            self.spawn()
        try:
            while self.todo or self.running:
                for key, _ in self.sel.select(timeout=1.0):
                    self.on_readable(key.data)
                self.dispatch()
        finally:
            self.sel.close()

    def spawn(self) -> None:
        # a coordinator that ignores SIGINT (started as `cmd &` from a script, nohup) keeps
        # its runs through a Ctrl-C on its terminal: its workers do not get it either (their
        # own handler would stop them), while its own stop still reaches them (stop_all)
        ignores_sigint = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        w = WorkerProcess.start(self.ex.target, self.out_dir, own_group=ignores_sigint)
        self.ex._workers.append(w)
        self.sel.register(w.fileno(), selectors.EVENT_READ, w)

    def dispatch(self) -> None:
        """Hand the next plans to the idle, ready workers."""
        for w in self.ex._workers:
            if not self.todo:
                return
            if w.ready and w.plan is None and not w.eof:
                plan = self.todo.popleft()
                self.sink.started(plan)
                w.send(plan)
                self.running += 1

    def on_readable(self, w: WorkerProcess) -> None:
        for msg in w.read():
            self.on_message(w, msg)
        if w.eof:
            self.on_exit(w)

    def on_message(self, w: WorkerProcess, msg: dict[str, Any]) -> None:
        kind, plan = msg.get("kind"), w.plan
        if kind == "ready":
            self.start_failures = 0
        elif kind == "event" and plan is not None and isinstance(msg.get("event"), dict):
            self.sink.event(plan.run_id, msg["event"])
        elif kind == "record" and plan is not None and msg.get("run_id") == plan.run_id:
            w.plan = None
            self.running -= 1
            self.sink.finished(plan, RunRecord.model_validate(msg["record"]))

    def on_stop_message(self, w: WorkerProcess, msg: dict[str, Any]) -> None:
        """While stopping: a record that arrives is a run that finished before the stop reached
        it (kept); events are passed on."""
        if msg.get("kind") in ("event", "record"):
            self.on_message(w, msg)

    def on_exit(self, w: WorkerProcess) -> None:
        """A worker ended its stream: it died (it only exits on its own at EOF)."""
        self.sel.unregister(w.fileno())
        code = w.wait(10.0)
        w.kill()
        self.ex._workers.remove(w)
        if w.plan is not None:
            plan, w.plan = w.plan, None
            self.running -= 1
            self.sink.finished(plan, lost_record(plan, f"worker died: {exit_text(code)}",
                                                 trajectory=_partial(self.out_dir, plan)))
        elif not w.ready:
            self.start_failures += 1
            if self.start_failures >= MAX_START_FAILURES:
                raise HostFault(f"{self.start_failures} worker processes in a row exited before they were "
                                f"ready ({exit_text(code)}); their error is on stderr above")
        if self.todo and len(self.ex._workers) < self.ex.slots:
            self.spawn()


def _partial(out_dir: Path, plan: RunPlan) -> str | None:
    """The trajectory a lost run wrote before it was lost, if any."""
    path = out_dir / "trajectories" / f"{plan.run_id}.jsonl"
    return str(path) if path.is_file() else None


@contextmanager
def _forward_stop_signals() -> Iterator[None]:
    """Within the block (main thread only), SIGTERM and SIGHUP raise KeyboardInterrupt here,
    which stops the workers with SIGINT. A handler that was there before (the campaign loop's,
    which turns them into Ctrl-C and notes which signal it was) is called instead; an ignored
    signal stays ignored. The handlers are put back unless one was replaced meanwhile."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before: dict[int, Any] = {}

    def on_signal(signum: int, frame: Any) -> None:
        prev = before.get(signum)
        # the loop's handler notes the signal and raises KeyboardInterrupt; the labs' own
        # (ani.lab.cleanup: remove this process's labs, then die of it) is not called: the
        # workers own the labs, and the coordinator must live to wait for them
        if callable(prev) and getattr(prev, "__module__", "") != "ani.lab.cleanup":
            prev(signum, frame)
        raise KeyboardInterrupt

    for sig in FORWARDED:
        prev = signal.getsignal(sig)
        if prev == signal.SIG_IGN:
            continue
        before[sig] = prev
        signal.signal(sig, on_signal)
    try:
        yield
    finally:
        for sig, prev in before.items():
            if signal.getsignal(sig) is on_signal:
                signal.signal(sig, prev)


__all__ = ["LocalExecutor", "STOP_GRACE_S"]
