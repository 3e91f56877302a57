"""A lab's reaper: a small process that removes the lab when its owner dies, however it dies.

An owner that is killed with SIGKILL (or crashes past every handler) cannot remove its lab
itself. So ``Lab.up()`` starts, right after writing the lab's state and before creating anything
else, one reaper per lab::

    python -m ani.lab.reaper --lab <id> --owner <pid> --owner-start <start time>

in its own session (a kill of the owner's process group or session does not take it). It waits
on the owner (a pidfd: ``poll`` wakes when the owner exits) and looks at the lab every
:data:`POLL_S` seconds:

- the lab dir is gone (removed normally: ``Lab.down``, ``ani lab down``): exit;
- the lab was handed over (detached and up: ``ani lab up``): exit, the lab stays;
- the owner died: unless the lab was handed over meanwhile or its state names another owner,
  remove it (:func:`ani.lab.cleanup.destroy`), then exit.

``cleanup.destroy`` stops a lab's reaper as provably owned (:func:`pids`: the pid in the lab's
state, or in ``<lab dir>/reaper.pid``, written by :func:`start`, whose command line carries ``ani.lab.reaper --lab <id>``);
nothing is ever killed by name. What the reaper did is logged to ``<lab dir>/reaper.log`` (gone
with the lab dir).

Light: until the owner dies it imports nothing beyond the standard library.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MODULE = "ani.lab.reaper"
#: how often the reaper looks at the lab (dir gone, handed over), seconds
POLL_S = 0.5
PID_FILE = "reaper.pid"
LOG_FILE = "reaper.log"


def start(lab_id: str, lab_dir: Path, owner: int | None = None) -> subprocess.Popen[bytes]:
    """Start the reaper of lab ``lab_id`` for ``owner`` (default: this process). Returns at once."""
    from ani.host.proc import start_time

    owner = os.getpid() if owner is None else owner
    with open(Path(lab_dir) / LOG_FILE, "ab") as log:
        p = subprocess.Popen(
            [sys.executable, "-m", MODULE, "--lab", lab_id, "--dir", str(lab_dir), "--owner", str(owner),
             "--owner-start", str(start_time(owner) or 0)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )
    # written here, by the creator, before anything can remove the lab dir: a reaper writing it
    # itself could recreate an entry in a dir that Lab.down is removing at that moment
    (Path(lab_dir) / PID_FILE).write_text(f"{p.pid}\n")
    return p


def is_reaper_of(pid: int | None, lab_id: str, started: int | None = None) -> bool:
    """True if ``pid`` is the reaper of lab ``lab_id`` (its argv runs ``ani.lab.reaper`` with
    ``--lab <lab_id>``; with ``started``, its start time matches: no PID reuse)."""
    from ani.host.proc import runs_for_lab

    return runs_for_lab(pid, MODULE, lab_id, started)


def pids(lab_id: str, state: Any = None) -> list[int]:
    """The verified PIDs of lab ``lab_id``'s reaper: from its state (``reaper_pid`` /
    ``reaper_start``) and from ``<lab dir>/reaper.pid``."""
    from ani.lab.state import lab_dir

    out = set()
    pid, started = getattr(state, "reaper_pid", None), getattr(state, "reaper_start", None)
    if is_reaper_of(pid, lab_id, started):
        out.add(int(pid))  # type: ignore[arg-type]
    try:
        own = int((lab_dir(lab_id) / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        own = 0
    if own and is_reaper_of(own, lab_id):
        out.add(own)
    return sorted(out)


# -- the process ----------------------------------------------------------------------------------


def _state(lab_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((lab_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _handed_over(st: dict[str, Any] | None) -> bool:
    return bool(st and st.get("detached") and st.get("status") == "up")


def _log(msg: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} reaper {os.getpid()}: {msg}", file=sys.stderr, flush=True)


def _owner_fd(owner: int, owner_start: int) -> int | None:
    """A pidfd of the owner, or None if it is gone already (or its PID is another process now)."""
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        return None
    try:
        stat = Path(f"/proc/{owner}/stat").read_text()
        started = int(stat[stat.rfind(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        started = None
    if owner_start and started != owner_start:
        os.close(fd)
        return None
    return fd


def watch(lab_id: str, lab_dir: Path, owner: int, owner_start: int) -> str:
    """Wait as the module doc says; returns what happened (``removed``, ``handed over``,
    ``destroyed``, ``not the owner's``)."""
    if not lab_dir.is_dir():
        return "removed"  # the lab dir is gone already
    fd = _owner_fd(owner, owner_start)
    if fd is not None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            if not lab_dir.is_dir():
                return "removed"
            if _handed_over(_state(lab_dir)):
                return "handed over"
            if poller.poll(int(POLL_S * 1000)):
                break  # the owner exited
    if not lab_dir.is_dir():
        return "removed"
    st = _state(lab_dir)
    if _handed_over(st):
        return "handed over"
    if st is not None and (st.get("owner_pid") != owner or (owner_start and st.get("owner_start") != owner_start)):
        return "not the owner's"
    from ani.lab import cleanup

    _log(f"owner {owner} of lab {lab_id} is gone: removing the lab")
    cleanup.destroy(lab_id)
    return "destroyed"


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog=f"python -m {MODULE}", description="remove a lab when its owner dies")
    ap.add_argument("--lab", required=True)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--owner", required=True, type=int)
    ap.add_argument("--owner-start", type=int, default=0)
    a = ap.parse_args(argv)
    try:
        what = watch(a.lab, a.dir, a.owner, a.owner_start)
    except Exception as exc:  # noqa: BLE001 - logged; the lab stays for ani lab down --stale
        _log(f"lab {a.lab}: {type(exc).__name__}: {exc}")
        return 1
    if what == "destroyed":
        _log(f"lab {a.lab} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
