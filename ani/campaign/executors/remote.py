"""The Dask task of one run (:func:`run_remote`), and what a Dask worker process needs of ani
(imported there, never by the coordinator's other code).

A Dask worker runs tasks in a thread, and a run wants a process of its own (signal handlers,
per-process state), so the task hands the run to a run process
(:mod:`ani.campaign.executors.worker`, started by the worker's first task and kept for the
next ones, one run at a time) to run in a temporary working folder holding the files the plan
needs, relays its
trajectory events to the coordinator (``Worker.log_event`` on the campaign's topic), and
returns the record with the trajectory's text. The coordinator stops every run of a campaign
with :func:`stop_campaign` (``Client.run``): each run's process gets SIGINT and takes its lab
down. Also a Dask preload: ``--preload ani.campaign.executors.remote`` makes a worker process
ignore SIGINT (a Ctrl-C in the coordinator's terminal stops the runs, not the workers).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from ani.campaign.executors.base import exit_text
from ani.campaign.executors.process import WorkerProcess
from ani.campaign.plan import RunPlan

#: the environment variable naming the Dask worker process that started a run's process
DASK_WORKER_ENV = "ANI_DASK_WORKER_PID"

_lock = threading.Lock()
_running: dict[str, set[WorkerProcess]] = {}  # campaign token -> its runs' processes here
_stopped: set[str] = set()  # campaign tokens stopped (a task starting after the stop does not run)
#: run processes between tasks: each runs one run at a time and is reused by the next task
#: (sparing a run the start of a Python process and its imports)
_idle: list[WorkerProcess] = []


def run_remote(plan_line: str, files: dict[str, bytes], target: str, token: str, topic: str) -> dict[str, Any]:
    """Run one plan on this Dask worker.

    Args:
        plan_line: the :class:`RunPlan` as JSON.
        files: ``{relative path: content}`` written into the temporary working folder (the
            plan's scenario file).
        target: the run function, ``module:function``.
        token: the campaign execution's token (:func:`stop_campaign`).
        topic: the event topic: ``{"kind": "started" | "event", "run_id", "event"}`` messages.

    Returns:
        ``{"record": <RunRecord JSON data>, "trajectory": <text or None>}``, or ``{"lost":
        <reason>}`` (its process died: ``worker died: exit code 3``), or ``{"interrupted":
        True}`` (stopped; nothing to report).
    """
    from distributed import get_worker

    worker = get_worker()
    plan = RunPlan.from_line(plan_line)
    with _lock:
        if token in _stopped:
            return {"interrupted": True}
    if not first_attempt(token, plan.run_id):
        return {"lost": "worker died: the Dask worker running it was lost (a run is not retried "
                        "elsewhere; --resume runs it)"}
    worker.log_event(topic, {"kind": "started", "run_id": plan.run_id})
    workdir = Path(tempfile.mkdtemp(prefix="ani-run-"))
    host = None
    try:
        write_files(workdir, files)
        host = _take_host(target, token)
        host.send(plan, workdir)
        record = _relay(host, plan, worker, topic)
        if record is not None:
            traj = workdir / "trajectories" / f"{plan.run_id}.jsonl"
            text = traj.read_text(encoding="utf-8") if traj.is_file() else None
            _give_back(host, token)
            host = None
            return {"record": record, "trajectory": text}
        code = host.wait(30.0)
        with _lock:
            if token in _stopped:
                return {"interrupted": True}
        return {"lost": f"worker died: {exit_text(code)}"}
    finally:
        if host is not None:  # died, stopped or failed: not used again
            with _lock:
                _running.get(token, set()).discard(host)
            host.finish()
            host.wait(30.0)
            host.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def _take_host(target: str, token: str) -> WorkerProcess:
    """An idle run process of this Dask worker for ``target``, or a new one; registered as
    running a run of ``token`` (and stopped at once if that campaign was stopped meanwhile)."""
    with _lock:
        found = None
        while _idle and found is None:
            h = _idle.pop()
            if h.target == target and h.alive() and not h.eof:
                found = h
            else:
                h.kill()
    if found is None:
        env = {**os.environ, DASK_WORKER_ENV: str(os.getpid())}
        found = WorkerProcess.start(target, tempfile.gettempdir(), env=env, remove_workdir=True)
    with _lock:
        _running.setdefault(token, set()).add(found)
        if token in _stopped:
            found.signal(signal.SIGINT)
    return found


def _give_back(host: WorkerProcess, token: str) -> None:
    """``host`` ran its run to the end: keep it for the next task of this worker."""
    host.plan = None
    with _lock:
        _running.get(token, set()).discard(host)
        _idle.append(host)


def first_attempt(token: str, run_id: str) -> bool:
    """True the first time the run ``run_id`` of the campaign ``token`` starts anywhere on the
    cluster (a named ``distributed.Event``). The scheduler reschedules every task a dead worker
    held (``distributed.scheduler.allowed-failures`` times): those it only queued run
    elsewhere as if nothing happened, the one it was running must not (it is an infrastructure
    error, which ``--resume`` runs again). A scheduler that does not answer (a comm timeout
    under load) counts as a first attempt: the run goes on rather than being lost."""
    from distributed import Event

    try:
        tried = Event(f"ani-tried-{token}-{run_id}")
        if tried.is_set():
            return False
        tried.set()
    except Exception:  # noqa: BLE001 - a slow scheduler must not cost the run (a retry is rare)
        logging.getLogger("ani.campaign.executors").warning(
            "run %s: the scheduler did not answer whether it ran before; running it", run_id, exc_info=True)
    return True


def _relay(host: WorkerProcess, plan: RunPlan, worker: Any, topic: str) -> dict[str, Any] | None:
    """Pass the run's events on until its record (returned) or the end of its stream (None)."""
    while not host.eof:
        for msg in host.read():
            kind = msg.get("kind")
            if kind == "event" and isinstance(msg.get("event"), dict):
                worker.log_event(topic, {"kind": "event", "run_id": plan.run_id, "event": msg["event"]})
            elif kind == "record" and msg.get("run_id") == plan.run_id:
                return msg["record"]
    return None


def write_files(workdir: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` under ``workdir``. Raises ValueError for a path that is absolute or
    leaves it (``..``): paths are data."""
    for rel, content in files.items():
        p = PurePosixPath(rel)
        if p.is_absolute() or ".." in p.parts or not p.parts:
            raise ValueError(f"not a relative path inside the working folder: {rel!r}")
        dest = workdir.joinpath(*p.parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(content)


def stop_campaign(token: str) -> int:
    """Stop every run of the campaign ``token`` on this worker (SIGINT to their processes;
    tasks that start later return at once). Called through ``Client.run``; returns how many
    runs it stopped."""
    with _lock:
        _stopped.add(token)
        hosts = list(_running.get(token, ()))
    for h in hosts:
        h.signal(signal.SIGINT)
    return len(hosts)


def dask_setup(worker: Any) -> None:
    """Dask preload hook: this worker process ignores SIGINT (its runs' processes handle their
    own). Only from the main thread; elsewhere nothing."""
    del worker
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
