"""One long-lived vtysh per router for the harness's ``show running-config`` reads.

A vtysh run builds its command graph at every start (~27 ms of CPU, ~37 ms with the node's
``enter`` script); the harness reads a router's running config about a thousand times per
campaign file. :class:`Sessions` (one per :class:`ani.lab.Lab` object) keeps one vtysh per
router, started through the router's ``enter`` script (so in its netns, UTS namespace and memory
cgroup, as the one-shot run), fed one command line at a time on stdin; a read then costs a few
ms. Each read writes ``show running-config`` and an unknown command ``@@ANI-END-<nonce>@@``
whose ``% Unknown command: ...`` line ends the answer.

Never stale, never partial: vtysh connects to the daemons only when it starts, so a session
records the router's daemon pids (their PID files, :func:`ani.lab.frr.read_pids`) and the
``vtysh.conf`` it read; when either differs at a read (a daemon restarted or died), or differs
after it, or the output is not exactly the expected frame (no marker, a warning line, anything on
stderr), the session is discarded and :meth:`Sessions.read` returns None: the caller takes the
one-shot path. A read past its ``timeout`` kills the session's process group (its own, started
with ``start_new_session``) and returns ``timed_out=True`` as the one-shot path does. A busy
session (another thread reads that router) also gives None. A session whose owner dies gets EOF
on stdin and exits.
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

from ani.errors import LabError
from ani.host.proc import ExecResult
from ani.lab import frr

#: the only command served by a session (exactly this single command)
COMMAND = "show running-config"
#: seconds a closing session may take to exit after EOF before its process group is killed
CLOSE_S = 1.0


class _Unexpected(LabError):
    """The session's output is not the expected frame: discard it (never leaves this module:
    the read falls back to a one-shot vtysh)."""


class _Session:
    """One vtysh process; not thread-safe (:class:`Sessions` serialises it)."""

    def __init__(self, argv: list[str], fingerprint: object):
        self.fingerprint = fingerprint
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True, bufsize=0)
        self.carry = b""  # the next prompt, when vtysh printed it already
        self.prompt = b""

    def start(self, timeout: float) -> bool:
        """Read the banner and learn the prompt; True if it timed out. Raises _Unexpected."""
        marker = self._marker()
        head, timed_out = self._exchange(marker + b"\n", marker, time.monotonic() + timeout)
        if timed_out:
            return True
        line = head[:len(head) - len(_tail(marker)) + len(marker)].rsplit(b"\n", 1)[-1]  # <prompt><marker>
        if not line.endswith(marker) or not line[:-len(marker)].endswith(b"# "):
            raise _Unexpected(f"no prompt: {head[-200:]!r}")
        self.prompt = line[:-len(marker)]
        return False

    @staticmethod
    def _marker() -> bytes:
        return f"@@ANI-END-{secrets.token_hex(8)}@@".encode()

    def _exchange(self, data: bytes, marker: bytes, deadline: float) -> tuple[bytes, bool]:
        """Write ``data``, read stdout up to the marker's line; (text before the next prompt,
        timed out). Raises _Unexpected (EOF, stderr output, a broken pipe)."""
        try:
            self.proc.stdin.write(data)  # type: ignore[union-attr]
        except OSError as exc:
            raise _Unexpected(str(exc)) from None
        out, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()  # type: ignore[union-attr]
        buf, tail = self.carry, _tail(marker)
        while tail not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return buf, True
            ready, _, _ = select.select([out, err], [], [], left)
            if err in ready:
                raise _Unexpected(f"stderr: {os.read(err, 4096)!r}")
            if out in ready:
                chunk = os.read(out, 1 << 16)
                if not chunk:
                    raise _Unexpected("EOF")
                buf += chunk
        if select.select([err], [], [], 0)[0]:
            raise _Unexpected(f"stderr: {os.read(err, 4096)!r}")
        end = buf.index(tail) + len(tail)
        self.carry = buf[end:]
        if self.prompt and not self.prompt.startswith(self.carry):
            raise _Unexpected(f"after the marker: {self.carry!r}")
        return buf[:end], False

    def ask(self, timeout: float) -> tuple[str, bool]:
        """``(show running-config text, timed out)``. Raises _Unexpected."""
        marker = self._marker()
        cmd = COMMAND.encode() + b"\n"
        text, timed_out = self._exchange(cmd + marker + b"\n", marker, time.monotonic() + timeout)
        if timed_out:
            return "", True
        head, foot = self.prompt + cmd, self.prompt + _tail(marker)
        if not text.startswith(head) or not text.endswith(b"\n" + foot) or len(text) < len(head) + len(foot):
            raise _Unexpected(f"frame: {text[:80]!r} ... {text[-120:]!r}")
        return text[len(head):len(text) - len(foot)].decode("utf-8", errors="replace"), False

    def close(self, kill: bool = False) -> None:
        """EOF on stdin (``kill``: at once SIGKILL to its process group, which is its own)."""
        p = self.proc
        try:
            p.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            if kill:
                raise subprocess.TimeoutExpired(p.args, 0)
            p.wait(timeout=CLOSE_S)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()
        for f in (p.stdout, p.stderr):
            f.close()  # type: ignore[union-attr]


def _tail(marker: bytes) -> bytes:
    """What ends a marker's answer: ``<marker>\\n% Unknown command: <marker>\\n``."""
    return marker + b"\n% Unknown command: " + marker + b"\n"


class Sessions:
    """The vtysh sessions of one Lab object: at most one per router.

    Args:
        argv: ``argv(router) -> list[str]``: the host-side argv of the router's interactive vtysh
            (its ``enter`` script running its ``bin/vtysh``).
        pathspace: ``pathspace(router) -> str`` (the FRR ``-N`` pathspace).
        daemons: ``daemons(router) -> list[str]``: the router's FRR daemons.
    """

    def __init__(self, argv, pathspace, daemons):  # noqa: ANN001
        self._argv, self._pathspace, self._daemons = argv, pathspace, daemons
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._sessions: dict[str, _Session] = {}
        self._closed_gen = 0

    def _fingerprint(self, router: str) -> object:
        ps = self._pathspace(router)
        try:
            st = (frr.etc_dir(ps) / "vtysh.conf").stat()
            conf: object = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            conf = None
        return frr.read_pids(ps, list(self._daemons(router))), conf

    def read(self, router: str, commands: list[str], timeout: float) -> ExecResult | None:
        """``show running-config`` of ``router`` through its session, as :meth:`ani.lab.Lab.vtysh`
        returns it (rc 0, stderr ""; ``timed_out`` after ``timeout`` seconds, rc -9); None when
        ``commands`` is not exactly ``[COMMAND]``, the session is busy, or it could not answer
        for sure (the caller then runs the one-shot vtysh)."""
        if commands != [COMMAND]:
            return None
        with self._lock:
            lock = self._locks.setdefault(router, threading.Lock())
            gen = self._closed_gen
        if not lock.acquire(blocking=False):
            return None
        try:
            return self._read_locked(router, timeout, gen)
        finally:
            lock.release()

    def _read_locked(self, router: str, timeout: float, gen: int) -> ExecResult | None:
        t0 = time.monotonic()
        fp = self._fingerprint(router)
        s = self._sessions.pop(router, None)
        if s is not None and s.fingerprint != fp:
            s.close()
            return None  # a daemon changed: this read goes the one-shot way, the next starts anew
        try:
            if s is None:
                argv = self._argv(router)
                if not Path(argv[0]).exists():
                    return None  # the one-shot path says LabGone
                s = _Session(argv, fp)
                timed_out = s.start(timeout)
            else:
                timed_out = False
            if not timed_out:
                text, timed_out = s.ask(max(0.0, timeout - (time.monotonic() - t0)))
        except (_Unexpected, OSError):
            if s is not None:
                s.close(kill=True)
            return None
        if timed_out:
            s.close(kill=True)
            return ExecResult(-signal.SIGKILL, "", "", True, time.monotonic() - t0)
        if self._fingerprint(router) != fp:
            s.close()
            return None
        with self._lock:
            if gen == self._closed_gen:
                self._sessions[router] = s
                s = None
        if s is not None:  # closed meanwhile (Lab.down)
            s.close(kill=True)
        return ExecResult(0, text, "", False, time.monotonic() - t0)

    def pids(self) -> dict[str, int]:
        """``{router: pid}`` of the sessions open now (idle ones; a session in use is not listed)."""
        with self._lock:
            return {r: s.proc.pid for r, s in self._sessions.items()}

    def close(self) -> None:
        """End every session (EOF, then SIGKILL to its own process group if it lingers)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
            self._closed_gen += 1
        for s in sessions:
            s.close()
