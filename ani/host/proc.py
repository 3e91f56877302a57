"""Running host-side commands with a timeout, and identifying processes safely.

``run(argv, timeout, input)`` starts ``argv`` in its own session (process group); on timeout the
whole group is killed, so nothing the command started survives it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ani.host.programs import require


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command.

    Attributes:
        rc: exit status (negative: killed by that signal; -9 after a timeout).
        stdout, stderr: decoded as UTF-8 with ``errors="replace"``.
        timed_out: True if the command was killed because it exceeded its timeout.
        elapsed_s: wall time, seconds.
    """

    rc: int
    stdout: str
    stderr: str
    timed_out: bool
    elapsed_s: float

    @property
    def ok(self) -> bool:
        """True if rc == 0 and the command did not time out."""
        return self.rc == 0 and not self.timed_out


def run(argv: list[str], timeout: float = 10.0, input: str | bytes | None = None) -> ExecResult:
    """Run ``argv`` (no shell) with a bound of ``timeout`` seconds.

    On timeout the process group is killed (SIGKILL) and ``timed_out`` is True. Raises
    ProgramMissing if ``argv[0]`` is a registered program (``ani/host/packages.txt``) that is
    not installed, FileNotFoundError if another ``argv[0]`` does not exist.
    """
    require(argv)
    data = input.encode() if isinstance(input, str) else input
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _killpg(proc.pid)
        try:
            out, err = proc.communicate(timeout=2.0)
        except subprocess.TimeoutExpired:  # a pipe held open by an escaped grandchild
            proc.kill()
            out, err = b"", b""
            proc.wait()
    finally:
        if proc.poll() is None:
            _killpg(proc.pid)
            proc.wait()
    return ExecResult(
        rc=proc.returncode,
        stdout=(out or b"").decode("utf-8", errors="replace"),
        stderr=(err or b"").decode("utf-8", errors="replace"),
        timed_out=timed_out,
        elapsed_s=time.monotonic() - t0,
    )


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def check(argv: list[str], timeout: float = 10.0, input: str | bytes | None = None) -> ExecResult:
    """Like :func:`run` but raise LabError (with the command and its stderr) unless it succeeded."""
    from ani.errors import LabError

    res = run(argv, timeout=timeout, input=input)
    if not res.ok:
        why = "timed out" if res.timed_out else f"exit {res.rc}"
        text = (res.stderr.strip() or res.stdout.strip())[-2000:]
        raise LabError(f"command failed ({why}): {' '.join(argv)}: {text}")
    return res


def start_time(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after the last ')'
    rest = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def is_alive(pid: int | None, started: int | None = None) -> bool:
    """True if ``pid`` runs (and, if ``started`` is given, is the same process: no PID reuse)."""
    if not pid or pid <= 0:
        return False
    st = start_time(pid)
    if st is None:
        return False
    if _is_zombie(pid):
        return False
    return started is None or st == started


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def cmdline(pid: int) -> list[str]:
    """The argv of ``pid`` ([] if gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def runs_for_lab(pid: int | None, module: str, lab_id: str, started: int | None = None) -> bool:
    """True if ``pid`` is a helper process of lab ``lab_id``: it runs (with ``started``: the same
    process, no PID reuse) and its argv runs ``module`` with ``--lab <lab_id>`` (the NETCONF
    server, the reaper). How a lab's own host-side processes are told apart: never by name."""
    if not pid or not is_alive(pid, started):
        return False
    argv = cmdline(pid)
    return module in argv and any(a == "--lab" and b == lab_id for a, b in zip(argv, argv[1:], strict=False))


def kill_and_wait(pids: list[int], timeout: float = 1.5) -> list[int]:
    """SIGTERM (then SIGCONT, so a stopped process acts on it) ``pids``, wait up to ``timeout`` s,
    then SIGKILL survivors. Returns the PIDs signalled.

    Callers must have checked that every PID is theirs (see :func:`cmdline`).
    """
    sent = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            # a stopped process (a frozen router's daemon, SIGSTOP) keeps SIGTERM pending until
            # it runs again: resume it so that it can act on it (issue 14, faults-kinds)
            os.kill(pid, signal.SIGCONT)
            sent.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(is_alive(p) for p in sent):
            return sent
        time.sleep(0.02)
    for pid in sent:
        if is_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and any(is_alive(p) for p in sent):
        time.sleep(0.02)
    return sent
