"""Read-only queries straight to an FRR daemon's vty socket (no vtysh process).

``/var/run/frr/<pathspace>/<daemon>.vty`` speaks the vtysh protocol: a command terminated by
NUL; the answer is the output followed by three NULs and a status byte (0 = success). The socket
starts in view mode, so only ``show`` commands work: this is for the lab's own polling
(convergence), not for agents. Typical cost: under 1 ms per query, against ~50 ms for a vtysh
process.
"""

from __future__ import annotations

import socket
from pathlib import Path

from ani.errors import LabError


def query(sock_path: str | Path, commands: list[str], timeout: float = 3.0) -> list[tuple[int, str]]:
    """Run ``commands`` on one connection. Returns ``[(status, output), ...]`` in order.

    ``timeout`` (seconds) bounds the connect and each socket read, not the whole call.

    Raises LabError if the socket is missing, refuses, times out or closes early.
    """
    out: list[tuple[int, str]] = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(sock_path))
            for cmd in commands:
                s.sendall(cmd.encode() + b"\0")
                buf = bytearray()
                while len(buf) < 4 or buf[-4:-1] != b"\0\0\0":
                    chunk = s.recv(65536)
                    if not chunk:
                        raise LabError(f"{sock_path}: connection closed during {cmd!r}")
                    buf += chunk
                out.append((buf[-1], buf[:-4].decode("utf-8", errors="replace")))
    except OSError as exc:
        raise LabError(f"{sock_path}: {exc}") from None
    return out
