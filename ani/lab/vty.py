"""Read-only queries straight to an FRR daemon's vty socket (no vtysh process).

``/var/run/frr/<pathspace>/<daemon>.vty`` speaks the vtysh protocol: a command terminated by
NUL; the answer is the output followed by three NULs and a status byte (0 = success). The socket
starts in view mode, so only ``show`` commands work: this is for the lab's own reads (convergence
polling, :func:`show`, the fast path of ``Lab.vtysh`` for the ``show`` commands of one daemon, and
:mod:`ani.lab.runconf`), not for agents. Typical cost: ~0.3 ms of CPU per query, against ~37 ms for a vtysh process.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import time
from pathlib import Path

from ani.errors import LabError
from ani.host.proc import ExecResult

#: set to ``0`` to send every ``Lab.vtysh`` call through a vtysh process (no :func:`show`, no :mod:`ani.lab.runconf`)
FAST_ENV = "ANI_VTY_FAST"

#: ``show`` commands answered by exactly one daemon (JSON or text), by their first words (the
#: words of the command separated by single spaces); vtysh sends each of these to that daemon
#: alone and prints its answer as it came
DAEMON_OF: tuple[tuple[str, str], ...] = (
    ("show bgp", "bgpd"),
    ("show ip bgp", "bgpd"),
    ("show ip ospf", "ospfd"),
    ("show ip route", "zebra"),
    ("show interface", "zebra"),
)

#: what a command may contain to take the fast path (no ``|`` filter, no control characters)
_PLAIN = re.compile(r"[A-Za-z0-9 ./:_-]+")


def query(sock_path: str | Path, commands: list[str], timeout: float = 3.0,
          deadline: float | None = None) -> list[tuple[int, str]]:
    """Run ``commands`` on one connection. Returns ``[(status, output), ...]`` in order.

    ``timeout`` (seconds) bounds the connect and each socket read, not the whole call;
    ``deadline`` (a ``time.monotonic()`` value), if given, also bounds the whole call.

    Raises LabError if the socket is missing, refuses, times out or closes early.
    """
    out: list[tuple[int, str]] = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            _bound(s, timeout, deadline)
            s.connect(str(sock_path))
            for cmd in commands:
                s.sendall(cmd.encode() + b"\0")
                buf = bytearray()
                while len(buf) < 4 or buf[-4:-1] != b"\0\0\0":
                    _bound(s, timeout, deadline)
                    chunk = s.recv(65536)
                    if not chunk:
                        raise LabError(f"{sock_path}: connection closed during {cmd!r}")
                    buf += chunk
                out.append((buf[-1], buf[:-4].decode("utf-8", errors="replace")))
    except OSError as exc:
        raise LabError(f"{sock_path}: {exc}") from None
    return out


def _bound(s: socket.socket, timeout: float, deadline: float | None) -> None:
    """Set ``s``'s timeout to ``timeout`` seconds, or to what is left before ``deadline``."""
    if deadline is not None:
        timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise TimeoutError("deadline passed")
    s.settimeout(timeout)


def daemon_of(command: str) -> str | None:
    """The daemon that alone answers ``command`` (a read-only ``show`` of :data:`DAEMON_OF`, JSON
    or text), or None (another command, a ``|`` filter, extra blanks, ...)."""
    if not _PLAIN.fullmatch(command) or " ".join(command.split()) != command:
        return None
    for prefix, daemon in DAEMON_OF:
        if command.startswith(prefix + " "):
            return daemon
    return None


def show(run_dir: Path, daemons: list[str], commands: list[str], timeout: float) -> ExecResult | None:
    """What ``vtysh -c c1 -c c2 ...`` prints for ``commands``, read on the daemons' vty sockets
    in ``run_dir`` (``/var/run/frr/<pathspace>``) instead of starting vtysh, or None: the caller
    runs vtysh.

    Taken only when every command has a :func:`daemon_of` among ``daemons`` (the router's) and
    every daemon answers with status 0; then ``ExecResult(rc=0, stdout=the outputs concatenated
    (as vtysh prints them), stderr="", timed_out=False, elapsed_s)``. The whole call is bounded
    by ``timeout`` seconds: a daemon that does not answer in time (frozen) gives
    ``ExecResult(rc=-9, stdout="", stderr="", timed_out=True, ...)`` like a vtysh killed at its
    timeout. None for anything else (a socket missing or refusing, a non-zero status, another
    command, the fast path disabled by ``ANI_VTY_FAST=0``), so that vtysh gives its own text
    and exit status. Raises nothing.
    """
    targets = [daemon_of(c) for c in commands]
    if not commands or os.environ.get(FAST_ENV) == "0" or any(d is None or d not in daemons for d in targets):
        return None
    t0 = time.monotonic()
    deadline = t0 + timeout
    parts: list[str] = []
    for daemon, group in itertools.groupby(zip(targets, commands, strict=True), key=lambda p: p[0]):
        try:
            answers = query(run_dir / f"{daemon}.vty", [c for _d, c in group], timeout, deadline)
        except LabError:
            if time.monotonic() < deadline:
                return None
            return ExecResult(rc=-9, stdout="", stderr="", timed_out=True, elapsed_s=time.monotonic() - t0)
        if any(status != 0 for status, _text in answers):
            return None
        parts += [text for _status, text in answers]
    return ExecResult(rc=0, stdout="".join(parts), stderr="", timed_out=False, elapsed_s=time.monotonic() - t0)
