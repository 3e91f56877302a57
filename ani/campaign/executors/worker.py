"""A worker process that runs whole runs, one at a time: ``python -m
ani.campaign.executors.worker --target MODULE:FUNCTION --workdir DIR --parent PID
[--remove-workdir]``.

It reads plans (one :class:`RunPlan` JSON line each, or ``{"plan": ..., "workdir": DIR}`` to
run it in DIR) on stdin and answers, one JSON line per
message, on the file descriptor that was its stdout (its own stdout then goes to stderr, so
nothing a run prints can break the stream)::

    {"kind": "ready", "pid": 123}                               the run function is imported
    {"kind": "event", "run_id": ..., "event": {...}}            a trajectory event of the run
    {"kind": "record", "run_id": ..., "record": {...}}          the run's RunRecord (JSON data)

A run that raises is recorded by :func:`ani.campaign.executors.base.call_target` (an
``infra_error``). EOF on stdin ends the worker (exit 0).

Stopping: the first SIGINT, SIGTERM or SIGHUP raises KeyboardInterrupt (the run function takes
its lab down and re-raises); later ones, and any once the worker is done, are ignored, so a Ctrl-C that reaches the worker both
from the terminal and forwarded by the coordinator stops it once. An interrupted worker sends
nothing for its run and exits 130. ``PR_SET_PDEATHSIG`` (SIGTERM) stops it in the same way when
the thread that started it dies (the coordinator killed with SIGKILL).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import IO, Any

#: exit code of a worker stopped by a signal (128 + SIGINT, as a shell reports Ctrl-C)
EXIT_INTERRUPTED = 130
#: exit code of a worker whose run function cannot be imported
EXIT_TARGET = 2
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_stopping = False


def _on_stop(signum: int, frame: Any) -> None:
    """The first stop signal raises KeyboardInterrupt; later ones are ignored."""
    global _stopping
    if _stopping:
        return
    _stopping = True
    raise KeyboardInterrupt


def install_stop_handlers() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt once (:func:`_on_stop`). The labs'
    own handlers (:func:`ani.lab.cleanup.install_signal_handlers`, installed by a lab's first
    ``up``) go in first, so this one sits above them, as the campaign loop's does: a SIGTERM
    takes the run through its KeyboardInterrupt handling rather than removing its lab from
    inside a signal handler."""
    from ani.lab.cleanup import install_signal_handlers

    install_signal_handlers()
    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_stop)


def die_with_parent(parent: int) -> None:
    """Ask the kernel for SIGTERM when the thread that started this process dies, and stop now
    if the parent is already gone (``parent``: its PID). Linux only; elsewhere nothing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if parent and os.getppid() != parent:
        raise KeyboardInterrupt


class Channel:
    """The message stream to the parent: one JSON line per message, whole lines only (a lock:
    events may come from the run's other threads)."""

    def __init__(self, fh: IO[str]) -> None:
        self._fh = fh
        self._lock = threading.Lock()

    def send(self, kind: str, **fields: Any) -> None:
        """Write one message; nothing if the parent is gone (its end of the pipe closed: the
        kernel's SIGTERM, PR_SET_PDEATHSIG, stops this process)."""
        line = json.dumps({"kind": kind, **fields}, default=str, ensure_ascii=False)
        with self._lock:
            try:
                self._fh.write(line + "\n")
                self._fh.flush()
            except OSError:  # BrokenPipeError
                pass


def take_stdout() -> IO[str]:
    """The stdout file descriptor as the message stream; fd 1 and ``sys.stdout`` become stderr."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


#: the working folder of the run in flight when it is one of its own (``--remove-workdir``)
_current: dict[str, Path] = {}


def _own_folder(path: Path | None) -> bool:
    """``path`` is a run's temporary folder (``ani-run-*``, made by ``remote.run_plan``), the
    only kind a worker removes: never the temporary root or a results folder."""
    return path is not None and Path(path).name.startswith("ani-run-") and Path(path).parent != Path(path)


def serve(target_path: str, workdir: Path, channel: Channel, stdin: IO[str]) -> None:
    """Import the run function, say ready, then run each plan read from ``stdin`` until EOF.

    A line is a :class:`RunPlan` (run in ``workdir``), or ``{"plan": {...}, "workdir": DIR}``
    (run in DIR: a Dask task's temporary folder)."""
    from ani.campaign.executors.base import call_target, load_target

    target = load_target(target_path)
    channel.send("ready", pid=os.getpid())
    while True:
        line = stdin.readline()
        if not line:
            return
        if not line.strip():
            continue
        plan, where = read_order(line, workdir)
        if where != workdir:  # a Dask task's own temporary folder, never the folder it was started in
            _current["workdir"] = where
        else:
            _current.pop("workdir", None)

        def on_event(event: dict[str, Any], rid: str = plan.run_id) -> None:
            channel.send("event", run_id=rid, event=event)

        record = call_target(target, plan, where, on_event=on_event)
        channel.send("record", run_id=plan.run_id, record=json.loads(record.model_dump_json()))


def read_order(line: str, workdir: Path) -> tuple[Any, Path]:
    """``(plan, working folder)`` of one stdin line (see :func:`serve`). Raises ValueError."""
    from ani.campaign.plan import RunPlan

    data = json.loads(line)
    if isinstance(data, dict) and set(data) == {"plan", "workdir"}:
        return RunPlan.model_validate(data["plan"]), Path(str(data["workdir"]))
    return RunPlan.model_validate(data), workdir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ani.campaign.executors.worker")
    parser.add_argument("--target", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--remove-workdir", action="store_true",
                        help="remove the working folder of the last run on the way out (a Dask task's)")
    args = parser.parse_args(argv)
    global _stopping
    install_stop_handlers()
    channel = Channel(take_stdout())
    try:
        die_with_parent(args.parent)
        serve(args.target, Path(args.workdir), channel, sys.stdin)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the parent reads the exit code; say why here
        from ani.campaign.executors.base import error_text

        print(f"ani worker: {error_text(exc)}", file=sys.stderr)
        return EXIT_TARGET
    finally:
        # done (EOF, or stopped): a stop signal from here on has nothing to stop. The
        # coordinator closes an idle worker's stdin and sends SIGINT at once (stop_all), which
        # could land after serve() returned and raise in the interpreter's shutdown
        # ("Exception ignored in: <module 'threading'> ... KeyboardInterrupt" on the terminal)
        _stopping = True
        if args.remove_workdir and _own_folder(_current.get("workdir")):  # also when the Dask worker died
            shutil.rmtree(_current["workdir"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
