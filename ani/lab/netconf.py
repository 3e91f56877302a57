"""The lab's NETCONF server process (``python -m ani.netconf.serve --lab ID``): credentials,
start, readiness, endpoints, and stopping it by verified PID.

Files in the lab dir:

* ``netconf.json`` (mode 0600): ``{"username": "ani", "password": ..., "host": "127.0.0.1",
  "host_key": <path>}`` written by the lab before the server starts; the server rewrites it
  (atomically) adding ``"ports": {router: port}`` and ``"pid"`` once every port listens.
* ``netconf_host_key``: the server's SSH host key (ed25519, 0600), made by the server.
* ``netconf.log``: the server's log (and its stdout / stderr).
* ``host-faults.jsonl``: host faults the server met (a program missing when a commit needed
  it; :func:`ani.host.programs.note_fault`), one JSON line each; read by ``Lab.harness_faults``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ani.errors import LabError, LabGone
from ani.host.programs import FAULT_LOG_ENV
from ani.lab.proc import runs_for_lab

INFO_FILE = "netconf.json"
HOST_KEY_FILE = "netconf_host_key"
FAULTS_FILE = "host-faults.jsonl"
LOG_FILE = "netconf.log"
USERNAME = "ani"
HOST = "127.0.0.1"
#: bound on the server becoming ready once convergence is done (seconds); it starts long before
READY_TIMEOUT_S = 30.0
MODULE = "ani.netconf.serve"


@dataclass(frozen=True)
class NetconfEndpoint:
    """Where and how to reach one router's NETCONF server (SSH, subsystem ``netconf``).

    ``host_key``: path of the server's host key (its public half identifies the server)."""

    host: str
    port: int
    username: str
    password: str = field(repr=False)
    host_key: Path | None = None


def info_path(lab_dir: Path) -> Path:
    return lab_dir / INFO_FILE


def write_json_private(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file + rename), mode 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def read_info(lab_dir: Path) -> dict[str, Any] | None:
    """The contents of ``netconf.json``, or None if missing / unreadable."""
    try:
        return json.loads(info_path(lab_dir).read_text())
    except (OSError, ValueError):
        return None


def write_credentials(lab_dir: Path) -> dict[str, Any]:
    """Make the lab's NETCONF credentials (user ``ani``, 24 random URL-safe characters) and
    write ``netconf.json`` (0600). Returns its contents."""
    info = {"username": USERNAME, "password": secrets.token_urlsafe(18), "host": HOST,
            "host_key": str(lab_dir / HOST_KEY_FILE)}
    write_json_private(info_path(lab_dir), info)
    return info


def ensure_host_key(path: Path) -> Any:
    """The asyncssh host key at ``path``, made (ed25519, 0600) if missing."""
    import asyncssh

    if path.exists():
        return asyncssh.read_private_key(str(path))
    key = asyncssh.generate_private_key("ssh-ed25519")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.export_private_key())
    return key


def start_server(lab_id: str, lab_dir: Path) -> subprocess.Popen[bytes]:
    """Start the server process for lab ``lab_id`` (its own session, so it outlives a detached
    lab's creator; output appended to ``netconf.log``; host faults it meets to
    ``host-faults.jsonl``). Returns at once."""
    env = {**os.environ, FAULT_LOG_ENV: str(lab_dir / FAULTS_FILE)}
    with open(lab_dir / LOG_FILE, "ab") as logf:
        return subprocess.Popen(
            [sys.executable, "-m", MODULE, "--lab", lab_id, "--dir", str(lab_dir)],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True,
            close_fds=True, env=env,
        )


def log_tail(lab_dir: Path, lines: int = 20) -> str:
    try:
        text = (lab_dir / LOG_FILE).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1.0):
            return True
    except OSError:
        return False


def wait_ready(lab_id: str, lab_dir: Path, proc: subprocess.Popen[bytes],
               timeout_s: float = READY_TIMEOUT_S) -> dict[str, int]:
    """Wait until the server has written its ports and each port accepts a TCP connection.

    Returns ``{router: port}``. Raises LabError (with the tail of ``netconf.log``) if the
    process exits or is not ready within ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        info = read_info(lab_dir) or {}
        ports = info.get("ports")
        if ports and all(_accepts(p) for p in ports.values()):
            return {str(k): int(v) for k, v in ports.items()}
        rc = proc.poll()
        if rc is not None:
            raise LabError(f"lab {lab_id}: the NETCONF server exited ({rc}) before it was ready;"
                           f" {lab_dir / LOG_FILE} ends with:\n{log_tail(lab_dir)}")
        if time.monotonic() >= deadline:
            raise LabError(f"lab {lab_id}: the NETCONF server was not ready after {timeout_s:g} s;"
                           f" {lab_dir / LOG_FILE} ends with:\n{log_tail(lab_dir)}")
        time.sleep(0.03)


def is_server_of(pid: int | None, lab_id: str, started: int | None = None) -> bool:
    """True if ``pid`` is the NETCONF server of lab ``lab_id``: its argv runs
    ``ani.netconf.serve`` with ``--lab <lab_id>`` (and, if ``started`` is given, its start time
    matches: no PID reuse)."""
    return runs_for_lab(pid, MODULE, lab_id, started)


def server_pids(lab_id: str, lab_dir: Path, pid: int | None, started: int | None) -> list[int]:
    """The verified PIDs of lab ``lab_id``'s server: the one recorded in the state file and the
    one the server wrote into ``netconf.json`` (the same process, unless the creator died
    between starting it and recording it)."""
    out = set()
    if is_server_of(pid, lab_id, started):
        out.add(int(pid))  # type: ignore[arg-type]
    own = (read_info(lab_dir) or {}).get("pid")
    if isinstance(own, int) and is_server_of(own, lab_id):
        out.add(own)
    return sorted(out)


def endpoint(lab_id: str, lab_dir: Path, router: str) -> NetconfEndpoint:
    """The endpoint of ``router``. Raises LabGone (a LabError) if the lab is gone (``lab <id> is not
    running``, e.g. downed under an attached adapter) or has no ready NETCONF server."""
    if not Path(lab_dir).is_dir():
        raise LabGone(lab_id, f"no {lab_dir}")
    info = read_info(lab_dir) or {}
    ports = info.get("ports") or {}
    if router not in ports:
        raise LabError(f"lab {lab_id} has no NETCONF server for {router!r}"
                       + ("" if info else " (started with netconf=False?)"))
    hk = info.get("host_key")
    return NetconfEndpoint(info.get("host", HOST), int(ports[router]), info["username"],
                           info["password"], Path(hk) if hk else None)


__all__ = ["NetconfEndpoint", "endpoint", "start_server", "wait_ready", "write_credentials",
           "is_server_of", "server_pids"]
