"""The lab's server processes (the NETCONF server, the SSH server of the routers' CLIs): what
they have in common as processes of one lab.

Each is ``python -m <module> --lab ID --dir DIR``, started by the lab in its own session (so it
outlives a detached lab's creator), its output appended to ``<lab dir>/<log file>``; it
announces itself in ``<lab dir>/<info file>`` (JSON, mode 0600: credentials live there), adding
``"ports": {router: port}`` and ``"pid"`` once every port listens. A process is the lab's only
when its command line carries ``<module> --lab <id>`` (and its start time matches, so a reused
PID is never taken for it): nothing is ever stopped by name.

    NETCONF = ServerKind("ani.lab.netconf_server", "netconf.json", "netconf.log", "NETCONF server")
    p = start(NETCONF, lab_id, lab_dir)             # returns at once
    ports = wait_listening(NETCONF, lab_id, lab_dir, p)   # {router: port}; LabError with the log
    stop(NETCONF, lab_id, lab_dir, pid, started)    # SIGTERM, then SIGKILL after the bound
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ani.errors import LabError
from ani.host.proc import is_alive, runs_for_lab
from ani.netconf.journal import write_json_atomic

HOST = "127.0.0.1"
#: bound on a server's ports listening, from its start (seconds)
READY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ServerKind:
    """One kind of lab server: its module (``python -m``), the info and log files in the lab
    dir, and what messages call it (``"NETCONF server"``)."""

    module: str
    info_file: str
    log_file: str
    what: str


def write_json_private(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file + fsync + rename), mode 0600."""
    write_json_atomic(path, data, 0o600)


def read_info(kind: ServerKind, lab_dir: Path) -> dict[str, Any] | None:
    """The contents of the server's info file, or None if missing / unreadable."""
    try:
        return json.loads((Path(lab_dir) / kind.info_file).read_text())
    except (OSError, ValueError):
        return None


def ensure_private_key(path: Path) -> Any:
    """The asyncssh private key at ``path``, made (ed25519, mode 0600) if missing."""
    import asyncssh

    if path.exists():
        return asyncssh.read_private_key(str(path))
    key = asyncssh.generate_private_key("ssh-ed25519")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.export_private_key())
    return key


def start(kind: ServerKind, lab_id: str, lab_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``kind``'s process for lab ``lab_id`` (own session, output appended to its log;
    ``env``: added to this process's environment). Returns at once."""
    with open(Path(lab_dir) / kind.log_file, "ab") as logf:
        return subprocess.Popen(
            [sys.executable, "-m", kind.module, "--lab", lab_id, "--dir", str(lab_dir)],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True,
            close_fds=True, env={**os.environ, **(env or {})},
        )


def log_tail(kind: ServerKind, lab_dir: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of the server's log (``(no log)`` / ``(empty log)``)."""
    try:
        text = (Path(lab_dir) / kind.log_file).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def accepts(port: int, host: str = HOST) -> bool:
    """True if ``host:port`` accepts a TCP connection (within 1 s)."""
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def wait_info(kind: ServerKind, lab_id: str, lab_dir: Path, proc: subprocess.Popen[bytes] | None,
              timeout_s: float, done: Callable[[dict[str, Any]], Any], what: str, late: str) -> Any:
    """Poll the info file until ``done(info)`` returns a value (not None); raise LabError
    (``the <what> exited (rc) before <what>`` / ``<late> after N s``, with the tail of the log)
    if ``proc`` exits or ``timeout_s`` seconds pass."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = done(read_info(kind, lab_dir) or {})
        if got is not None:
            return got
        if proc is not None and proc.poll() is not None:
            raise LabError(f"lab {lab_id}: the {kind.what} exited ({proc.returncode}) before {what};"
                           f" {Path(lab_dir) / kind.log_file} ends with:\n{log_tail(kind, lab_dir)}")
        if time.monotonic() >= deadline:
            raise LabError(f"lab {lab_id}: {late} after {timeout_s:g} s;"
                           f" {Path(lab_dir) / kind.log_file} ends with:\n{log_tail(kind, lab_dir)}")
        time.sleep(0.03)


def wait_listening(kind: ServerKind, lab_id: str, lab_dir: Path, proc: subprocess.Popen[bytes],
                   timeout_s: float = READY_TIMEOUT_S) -> dict[str, int]:
    """Wait until the server has written its ports and each accepts a TCP connection.

    Returns ``{router: port}``. Raises LabError (with the tail of the log) if the process exits
    or is not ready within ``timeout_s`` seconds."""
    def listening(info: dict[str, Any]) -> dict[str, int] | None:
        ports = info.get("ports")
        if ports and all(accepts(p) for p in ports.values()):
            return {str(k): int(v) for k, v in ports.items()}
        return None

    return wait_info(kind, lab_id, lab_dir, proc, timeout_s, listening, "it was ready",
                     f"the {kind.what} was not ready")


def is_server_of(kind: ServerKind, pid: int | None, lab_id: str, started: int | None = None) -> bool:
    """True if ``pid`` is lab ``lab_id``'s ``kind`` server: its argv runs the module with
    ``--lab <lab_id>`` (and, if ``started`` is given, its start time matches: no PID reuse)."""
    return runs_for_lab(pid, kind.module, lab_id, started)


def server_pids(kind: ServerKind, lab_id: str, lab_dir: Path, pid: int | None, started: int | None) -> list[int]:
    """The verified PIDs of lab ``lab_id``'s ``kind`` server: the one recorded in the state file
    and the one the server wrote into its info file (the same process, unless the creator died
    between starting it and recording it)."""
    out = set()
    if is_server_of(kind, pid, lab_id, started):
        out.add(int(pid))  # type: ignore[arg-type]
    own = (read_info(kind, lab_dir) or {}).get("pid")
    if isinstance(own, int) and is_server_of(kind, own, lab_id):
        out.add(own)
    return sorted(out)


def stop(kind: ServerKind, lab_id: str, lab_dir: Path, pid: int | None, started: int | None,
         sig: int = signal.SIGTERM, timeout_s: float = 60.0) -> list[int]:
    """Send ``sig`` to the verified PIDs of lab ``lab_id``'s ``kind`` server
    (:func:`server_pids`), wait up to ``timeout_s`` seconds for them to exit, then SIGKILL what
    is left. Returns the PIDs signalled (empty: none was running)."""
    pids = server_pids(kind, lab_id, lab_dir, pid, started)
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while any(is_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = [p for p in pids if is_alive(p)]
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    end = time.monotonic() + 2.0
    while any(is_alive(p) for p in left) and time.monotonic() < end:
        time.sleep(0.02)
    return pids


def routers_and_info(kind: ServerKind, lab_id: str, lab_dir: Path, needs: str) -> tuple[list[str], dict[str, Any]]:
    """In a server process: (the router names from the lab's state file, the server's info file).
    Raises LabNotFound (no routers in the state file), LabError (the info file lacks ``needs``:
    no credentials)."""
    from ani.errors import LabNotFound

    state_file = Path(lab_dir) / "state.json"
    try:
        routers = list(json.loads(state_file.read_text())["topology"]["routers"])
    except (OSError, ValueError, KeyError) as exc:
        raise LabNotFound(f"lab {lab_id}: cannot read the routers from {state_file}: {exc}") from exc
    info = read_info(kind, lab_dir)
    if not info or needs not in info:
        raise LabError(f"lab {lab_id}: no credentials in {Path(lab_dir) / kind.info_file}")
    return routers, info


def process_start(kind: ServerKind, description: str, argv: list[str] | None = None) -> tuple[str, Path] | None:
    """The common start of a server process: parse ``--lab ID [--dir DIR]`` (``description``: the
    usage line), find the lab's dir (default: from the id), send the root logger (INFO; asyncssh's
    at WARNING) to the server's log there. Returns ``(lab id, lab dir)``, or None after saying
    ``no lab 'ID'`` on stderr (exit status 2 then)."""
    import argparse
    import logging

    ap = argparse.ArgumentParser(prog=f"python -m {kind.module}", description=description)
    ap.add_argument("--lab", required=True, help="id of the running lab to serve")
    ap.add_argument("--dir", type=Path, default=None,
                    help="the lab's directory (default: from the lab id; the lab passes it)")
    args = ap.parse_args(argv)
    lab_dir = args.dir
    if lab_dir is None:
        from ani.lab.state import LAB_ID_RE, lab_dir as dir_of

        lab_dir = dir_of(args.lab) if LAB_ID_RE.match(args.lab) else None
    if lab_dir is None or not lab_dir.is_dir():
        print(f"no lab {args.lab!r}", file=sys.stderr)
        return None
    handler = logging.FileHandler(lab_dir / kind.log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    return args.lab, lab_dir


__all__ = ["HOST", "READY_TIMEOUT_S", "ServerKind", "accepts", "ensure_private_key", "is_server_of",
           "log_tail", "process_start", "read_info", "routers_and_info", "server_pids", "start", "stop", "wait_info", "wait_listening",
           "write_json_private"]
