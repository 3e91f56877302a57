"""The controlling terminal: no ani command can be killed by a terminal it opened.

A session leader without a controlling terminal (a process started by ``setsid``, by a CI runner,
by an MCP client that spawns its servers in a new session) acquires the first terminal it opens
(POSIX, unless opened with ``O_NOCTTY``). A1's vtysh sessions (scrapli) run on pseudo-terminals:
the first A1 call made such a process the pty's controlling process, and when the session closed
the kernel hung up the terminal and SIGHUP killed the process mid-run (exit 129), lab left behind.

:func:`leave_session_leadership` is called once by the ``ani`` command before anything else
(:func:`ani.cli.main`, before any thread or session exists). When the process leads its session
it forks: the parent only waits for the child, forwards SIGTERM, SIGINT and SIGHUP to it and
exits with its status (128 + N when the child died of signal N); the child, not a session
leader, runs the command and never acquires a terminal. The child dies with the parent
(``PR_SET_PDEATHSIG``: SIGTERM), so killing the parent, even with SIGKILL, still stops the
command, whose SIGTERM handler removes the labs it owns (:mod:`ani.lab.cleanup`).

A program that uses the SDK as a library (``Lab(...).up()``, an adapter) never passes through the
``ani`` command: a Python script run by ``setsid``, as a systemd service or as a container's
PID 1 leads its session, and the first pseudo-terminal opened below it (a vtysh session of A1,
of the lab's own checks) would become its controlling terminal and kill it with SIGHUP when that
session closed (measured: exit 129 during ``Lab.up()``; with SIGHUP ignored the next vtysh
session reads EOF). :func:`hold_controlling_terminal`, called by :meth:`ani.lab.lab.Lab.up`
and by every CLI session's open (:mod:`ani.adapters.cli_session`), gives such a process a
controlling terminal of its own first: a pseudo-terminal whose both ends it keeps open for its
whole life, so no later terminal is acquired and none can hang up on it. A process that does not
lead its session, or already has a terminal, is left alone.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import termios
import threading

__all__ = ["hold_controlling_terminal", "leave_session_leadership"]

#: prctl(2) option: the signal the calling process gets when its parent dies
PR_SET_PDEATHSIG = 1
#: what the child gets when the parent dies
PARENT_DEATH_SIGNAL = signal.SIGTERM
#: what the parent forwards to the child
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _die_with_parent(parent: int) -> None:
    """In the child: get PARENT_DEATH_SIGNAL when ``parent`` dies (and now if it already did)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(PARENT_DEATH_SIGNAL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), PARENT_DEATH_SIGNAL)


def leave_session_leadership() -> None:
    """If this process leads its session, fork (see the module doc); returns in the child, and
    in a process that does not lead its session; the parent never returns. Call it before any
    thread or session exists."""
    if os.getsid(0) != os.getpid():
        return
    parent = os.getpid()
    child = os.fork()
    if child == 0:
        _die_with_parent(parent)
        return
    for sig in FORWARDED:
        signal.signal(sig, lambda signum, _frame: os.kill(child, signum))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:  # pragma: no cover
            os._exit(1)
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for clarity
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


_held: tuple[int, int] | None = None
_held_lock = threading.Lock()


def _has_terminal() -> bool:
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:  # ENXIO: no controlling terminal
        return False
    os.close(fd)
    return True


def hold_controlling_terminal() -> bool:
    """If this process leads its session and has no controlling terminal, make a pseudo-terminal
    it keeps open (both ends, never inherited by children) its controlling terminal (see the
    module doc). Idempotent and thread-safe. Returns True if it did so now; False when nothing
    was needed (not a session leader, a terminal already, or done before) or the host refused
    (then nothing changed: the caller goes on as before)."""
    global _held
    if os.getsid(0) != os.getpid():
        return False
    with _held_lock:
        if _held is not None or _has_terminal():
            return False
        try:
            master, slave = os.openpty()  # O_NOCTTY: nothing acquired yet; both non-inheritable
        except OSError:  # pragma: no cover - no ptys on this host: nothing opens one then
            return False
        try:
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        except OSError:  # pragma: no cover - the kernel refused: leave things as they were
            os.close(master)
            os.close(slave)
            return False
        _held = (master, slave)
        return True
