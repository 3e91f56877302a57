"""The lab's NETCONF server process (``python -m ani.lab.netconf_server --lab ID``): credentials,
start, readiness, endpoints, restart, the locks it publishes, and stopping it by verified PID.

Files in the lab dir:

* ``netconf.json`` (mode 0600): ``{"username": "ani", "password": ..., "host": "127.0.0.1",
  "host_key": <path>}`` written by the lab before the server starts; the server rewrites it
  (atomically) adding ``"ports": {router: port}`` and ``"pid"`` once every port listens, and
  ``"devices": "ok"`` once its datastores are ready.
* ``netconf_host_key``: the server's SSH host key (ed25519, 0600), made by the server.
* ``netconf.log``: the server's log (and its stdout / stderr).
* ``netconf/``: the server's journal (:mod:`ani.netconf.journal`): per router the pending
  confirmed commit (``<router>.commit.json``, kept across server restarts) and the locks held
  (``<router>.locks.json``, read by :func:`lock_holder`).
* ``host-faults.jsonl``: host faults the server met (a program missing when a commit needed
  it; :func:`ani.host.programs.note_fault`), one JSON line each; read by ``Lab.harness_faults``.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ani.errors import LabError, LabGone
from ani.host.programs import FAULT_LOG_ENV
from ani.lab import servers
from ani.lab.servers import write_json_private
from ani.netconf.journal import write_json_atomic

INFO_FILE = "netconf.json"
HOST_KEY_FILE = "netconf_host_key"
FAULTS_FILE = "host-faults.jsonl"
LOG_FILE = "netconf.log"
USERNAME = "ani"
HOST = "127.0.0.1"
#: bound on the server becoming ready once convergence is done (seconds); it starts long before
READY_TIMEOUT_S = 30.0
#: bound on a stopping server's exit after SIGTERM before it is killed (seconds): it may be
#: rolling back pending confirmed commits (one frr-reload each, the routers in parallel)
STOP_TIMEOUT_S = 60.0
#: the journal directory inside the lab dir (see ani.lab.netconf_server)
JOURNAL_DIR = "netconf"
MODULE = "ani.lab.netconf_server"
#: the process, its files (:mod:`ani.lab.servers`)
KIND = servers.ServerKind(MODULE, INFO_FILE, LOG_FILE, "NETCONF server")


@dataclass(frozen=True)
class NetconfEndpoint:
    """Where and how to reach one router's NETCONF server (SSH, subsystem ``netconf``).

    ``password``: None when ``private_key`` (a key file to log in with) is given; never shown by
    ``repr``. The server is identified by ``host_key`` (path of its host key: the lab's own
    server) or by ``known_hosts`` (a known_hosts file holding its public key: a real device,
    :mod:`ani.inventory`); with neither its key is not checked."""

    host: str
    port: int
    username: str
    password: str | None = field(default=None, repr=False)
    host_key: Path | None = None
    private_key: Path | None = None
    known_hosts: Path | None = None
    #: where the password or key comes from, for messages (never the secret; see SshEndpoint)
    credential: str = ""


def info_path(lab_dir: Path) -> Path:
    return lab_dir / INFO_FILE


def read_info(lab_dir: Path) -> dict[str, Any] | None:
    """The contents of ``netconf.json``, or None if missing / unreadable."""
    return servers.read_info(KIND, lab_dir)


def write_credentials(lab_dir: Path) -> dict[str, Any]:
    """Make the lab's NETCONF credentials (user ``ani``, 24 random URL-safe characters) and
    write ``netconf.json`` (0600). Returns its contents."""
    info = {"username": USERNAME, "password": secrets.token_urlsafe(18), "host": HOST,
            "host_key": str(lab_dir / HOST_KEY_FILE)}
    write_json_private(info_path(lab_dir), info)
    return info


def ensure_host_key(path: Path) -> Any:
    """The asyncssh host key at ``path``, made (ed25519, 0600) if missing."""
    return servers.ensure_private_key(path)


def start_server(lab_id: str, lab_dir: Path) -> subprocess.Popen[bytes]:
    """Start the server process for lab ``lab_id`` (its own session, so it outlives a detached
    lab's creator; output appended to ``netconf.log``; host faults it meets to
    ``host-faults.jsonl``). Returns at once."""
    return servers.start(KIND, lab_id, lab_dir, env={FAULT_LOG_ENV: str(lab_dir / FAULTS_FILE)})


def log_tail(lab_dir: Path, lines: int = 20) -> str:
    return servers.log_tail(KIND, lab_dir, lines)


def wait_ready(lab_id: str, lab_dir: Path, proc: subprocess.Popen[bytes],
               timeout_s: float = READY_TIMEOUT_S) -> dict[str, int]:
    """Wait until the server has written its ports and each port accepts a TCP connection.

    Returns ``{router: port}``. Raises LabError (with the tail of ``netconf.log``) if the
    process exits or is not ready within ``timeout_s`` seconds."""
    return servers.wait_listening(KIND, lab_id, lab_dir, proc, timeout_s)


def wait_devices(lab_id: str, lab_dir: Path, proc: subprocess.Popen[bytes] | None,
                 timeout_s: float = READY_TIMEOUT_S) -> None:
    """Wait until the server (``proc``, or the one ``netconf.json`` names) has its datastores
    ready (``"devices": "ok"``: what an earlier server left pending has been recovered).
    Raises LabError (with the tail of ``netconf.log``) if it exits or takes longer than
    ``timeout_s`` seconds."""
    def ready(info: dict[str, Any]) -> bool | None:
        ok = info.get("devices") == "ok" and (proc is None or info.get("pid") == proc.pid)
        return True if ok else None

    servers.wait_info(KIND, lab_id, lab_dir, proc, timeout_s, ready, "its datastores were ready",
                      "the NETCONF server's datastores were not ready")


def is_server_of(pid: int | None, lab_id: str, started: int | None = None) -> bool:
    """True if ``pid`` is the NETCONF server of lab ``lab_id``: its argv runs
    ``ani.lab.netconf_server`` with ``--lab <lab_id>`` (and, if ``started`` is given, its start time
    matches: no PID reuse)."""
    return servers.is_server_of(KIND, pid, lab_id, started)


def server_pids(lab_id: str, lab_dir: Path, pid: int | None, started: int | None) -> list[int]:
    """The verified PIDs of lab ``lab_id``'s server: the one recorded in the state file and the
    one the server wrote into ``netconf.json`` (the same process, unless the creator died
    between starting it and recording it)."""
    return servers.server_pids(KIND, lab_id, lab_dir, pid, started)


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


def stop_server(lab_id: str, lab_dir: Path, pid: int | None, started: int | None,
                sig: int = signal.SIGTERM, timeout_s: float = STOP_TIMEOUT_S) -> list[int]:
    """Stop lab ``lab_id``'s NETCONF server: send ``sig`` to its verified PIDs
    (:func:`server_pids`), wait up to ``timeout_s`` seconds for them to exit, then SIGKILL what
    is left. With SIGTERM the server first rolls back the pending confirmed commits that were
    not given ``persist`` (their sessions end with it) and keeps the persistent ones in its
    journal; SIGKILL is a crash (nothing is rolled back until the next server starts).
    Returns the PIDs signalled (empty: none was running)."""
    return servers.stop(KIND, lab_id, lab_dir, pid, started, sig=sig, timeout_s=timeout_s)


@dataclass(frozen=True)
class NetconfLock:
    """A lock held by a NETCONF session on one router's datastore (RFC 6241 §7.5), as the
    lab's server publishes it. ``since``: Unix seconds; ``server_pid``: the server process."""

    router: str
    target: str
    session_id: int
    since: float
    server_pid: int

    def describe(self) -> str:
        """E.g. ``NETCONF session 3 holds the lock on r1's running datastore (since 12:00:01;
        server pid 4400)``."""
        when = time.strftime("%H:%M:%S", time.localtime(self.since)) if self.since else "?"
        return (f"NETCONF session {self.session_id} holds the lock on {self.router}'s "
                f"{self.target} datastore (since {when}; server pid {self.server_pid})")


def lock_holder(lab_id: str, lab_dir: Path, router: str, target: str = "running") -> NetconfLock | None:
    """The NETCONF lock on ``router``'s ``target`` datastore now, or None: nothing locked, no
    server, or an entry left by a server that is no longer running (its PID is not lab
    ``lab_id``'s server any more, or was reused: a dead server's lock is no lock)."""
    from ani.netconf.journal import read_locks

    doc = read_locks(Path(lab_dir) / JOURNAL_DIR, router)
    if doc is None:
        return None
    entry = doc["locks"].get(target)
    owner = doc["owner"]
    if not isinstance(entry, dict):
        return None
    pid, started = owner.get("pid"), owner.get("start")
    if not isinstance(pid, int) or not is_server_of(pid, lab_id, started if isinstance(started, int) else None):
        return None
    try:
        return NetconfLock(router, target, int(entry["session-id"]), float(entry.get("since") or 0), pid)
    except (KeyError, TypeError, ValueError):
        return None


# -- a frozen router's management plane (issue 14, faults-kinds) -------------------------------

#: in the journal dir: the routers the harness wants frozen (``{"routers": [...]}``) and what the
#: server froze (``{"version": 1, "owner": {pid, start}, "frozen": {router: since}}``); the
#: leading ``_`` keeps them apart from the per-router files
FREEZE_REQUEST_FILE = "_freeze.request.json"
FROZEN_FILE = "_frozen.json"
#: bound on the server acknowledging a freeze / thaw request (seconds): an RPC in progress on the
#: router's datastore finishes first
FREEZE_ACK_TIMEOUT_S = 40.0


def read_frozen_request(journal_dir: Path) -> set[str]:
    """The routers the harness asks to be frozen ({} when none / no file)."""
    try:
        doc = json.loads((Path(journal_dir) / FREEZE_REQUEST_FILE).read_text())
    except (OSError, ValueError):
        return set()
    routers = doc.get("routers") if isinstance(doc, dict) else None
    return {str(r) for r in routers} if isinstance(routers, list) else set()


def write_frozen(journal_dir: Path, owner: dict[str, Any], frozen: dict[str, float]) -> None:
    """The server publishes the routers it froze (``{router: since}``, Unix seconds)."""
    Path(journal_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
    write_json_atomic(Path(journal_dir) / FROZEN_FILE,
                      {"version": 1, "owner": owner, "frozen": frozen}, 0o600)


def frozen_routers(lab_id: str, lab_dir: Path) -> dict[str, float]:
    """``{router: since}`` whose management plane lab ``lab_id``'s running server has frozen
    now ({}: none, no server, or an entry of a server that is no longer running)."""
    try:
        doc = json.loads((Path(lab_dir) / JOURNAL_DIR / FROZEN_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    owner = doc.get("owner") or {}
    pid, started = owner.get("pid"), owner.get("start")
    if not isinstance(pid, int) or not is_server_of(pid, lab_id, started if isinstance(started, int) else None):
        return {}
    frozen = doc.get("frozen")
    return {str(k): float(v) for k, v in frozen.items()} if isinstance(frozen, dict) else {}


def request_frozen(lab_id: str, lab_dir: Path, pid: int | None, started: int | None,
                   router: str, frozen: bool, timeout_s: float = FREEZE_ACK_TIMEOUT_S) -> dict[str, float]:
    """Ask lab ``lab_id``'s NETCONF server to freeze (``frozen=True``) or resume ``router``'s
    management plane (:meth:`ani.netconf.server.NetconfServer.freeze`): update the request file,
    send SIGUSR1 to the verified server PIDs, wait until the server publishes the wanted state.
    Returns :func:`frozen_routers`. Raises LabError: no server runs, or it did not acknowledge
    within ``timeout_s`` seconds."""
    jdir = Path(lab_dir) / JOURNAL_DIR
    want = read_frozen_request(jdir)
    want = (want | {router}) if frozen else (want - {router})
    jdir.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_json_atomic(jdir / FREEZE_REQUEST_FILE, {"routers": sorted(want)}, 0o600)
    pids = server_pids(lab_id, lab_dir, pid, started)
    if not pids:
        raise LabError(f"lab {lab_id}: no NETCONF server runs, so {router}'s management plane "
                       "cannot be " + ("frozen" if frozen else "resumed"))
    for p in pids:
        try:
            os.kill(p, signal.SIGUSR1)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while True:
        now = frozen_routers(lab_id, lab_dir)
        if (router in now) == frozen:
            return now
        if time.monotonic() >= deadline:
            raise LabError(f"lab {lab_id}: the NETCONF server did not {'freeze' if frozen else 'resume'} "
                           f"{router} within {timeout_s:g} s; {lab_dir / LOG_FILE} ends with:\n"
                           f"{log_tail(lab_dir)}")
        time.sleep(0.02)


__all__ = ["NetconfEndpoint", "NetconfLock", "endpoint", "lock_holder", "start_server", "stop_server",
           "wait_devices", "wait_ready", "write_credentials", "is_server_of", "server_pids",
           "frozen_routers", "request_frozen"]
