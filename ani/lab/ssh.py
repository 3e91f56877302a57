"""The routers' CLIs over SSH: the lab's SSH server process (``python -m ani.lab.ssh_server --lab
ID``), its credentials and endpoints.

Each router's CLI (vtysh in the router's network namespace, bound to its FRR pathspace) listens
on 127.0.0.1, one port per router, as a real router's management SSH would: an interactive
session (a shell request, with or without a pty) is vtysh; an exec request ``CMD`` runs ``vtysh
-c CMD`` (vtysh as the login shell); nothing else (no subsystems, no forwarding, no files). The
path used for real devices (A1's ``transport: ssh``, an inventory, :mod:`ani.inventory`) is so
exercised for real on a lab.

Files in the lab dir (gone with it):

* ``ssh.json`` (mode 0600): ``{"username": "ani", "password": ..., "host": "127.0.0.1",
  "client_key": <path>, "host_key": <path>, "known_hosts": <path>}`` written by the lab before
  the server starts; the server rewrites it (atomically) adding ``"ports": {router: port}`` and
  ``"pid"`` once every port listens. The lab records the ports in its state file too
  (``ssh_ports``).
* ``ssh_client_key`` (0600) and ``ssh_client_key.pub``: a key the server accepts (as well as the
  password: the lab's NETCONF password when it runs that server too, so one login reaches both),
  made by the lab. Neither the password nor the key is ever logged or recorded.
* ``ssh_host_key`` (0600): the server's host key, made by the server; ``ssh_known_hosts``: its
  public half for each port (``[127.0.0.1]:PORT ssh-ed25519 ...``), for strict host key checking.
* ``ssh.log``: the server's log.

    ep = lab.ssh_endpoint("r1")     # SshEndpoint(host, port, username, password, private_key, known_hosts)
    res = ssh_exec(ep, "show bgp summary", timeout=10)   # ExecResult: vtysh -c on the router, over SSH
    # ssh -p PORT -i <lab dir>/ssh_client_key -o UserKnownHostsFile=<lab dir>/ssh_known_hosts ani@127.0.0.1
"""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ani.errors import LabError, LabGone
from ani.lab import servers
from ani.host.proc import ExecResult
from ani.lab.servers import HOST, write_json_private

INFO_FILE = "ssh.json"
LOG_FILE = "ssh.log"
HOST_KEY_FILE = "ssh_host_key"
CLIENT_KEY_FILE = "ssh_client_key"
KNOWN_HOSTS_FILE = "ssh_known_hosts"
USERNAME = "ani"
MODULE = "ani.lab.ssh_server"
#: the process and its files (:mod:`ani.lab.servers`)
KIND = servers.ServerKind(MODULE, INFO_FILE, LOG_FILE, "SSH server")
#: bound on the server's ports listening once the lab has converged (seconds; it starts long before)
READY_TIMEOUT_S = 30.0
#: bound on the server's exit after SIGTERM before it is killed (seconds)
STOP_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SshEndpoint:
    """Where and how to reach one device's CLI over SSH.

    Attributes:
        host, port: the address (the lab: 127.0.0.1 and the router's port).
        username: the login.
        password: the password, or None (key only); never shown by ``repr``.
        private_key: path of a private key file to log in with, or None.
        known_hosts: path of a known_hosts file holding the server's host key (strict host key
            checking), or None (the key is not checked).
        name: the name the device's prompt starts with (the lab: the router's name).
        credential: where the password or key comes from, for messages (``password from
            $ANI_LAB_PASSWORD (inventory.yaml: devices[0].credentials.password_env)``), never the
            secret; "" for the kind of secret only.
    """

    host: str
    port: int
    username: str
    password: str | None = field(default=None, repr=False)
    private_key: Path | None = None
    known_hosts: Path | None = None
    name: str = ""
    credential: str = ""


def info_path(lab_dir: Path) -> Path:
    return Path(lab_dir) / INFO_FILE


def read_info(lab_dir: Path) -> dict[str, Any] | None:
    """The contents of ``ssh.json``, or None if missing / unreadable."""
    return servers.read_info(KIND, lab_dir)


def write_credentials(lab_dir: Path, password: str | None = None) -> dict[str, Any]:
    """Make the lab's SSH credentials (user ``ani``; ``password``, default a random one of 24
    URL-safe characters; an ed25519 client key in ``ssh_client_key``, 0600) and write ``ssh.json``
    (0600). Returns its contents. The lab passes its NETCONF password, so that one login reaches
    both management paths of a router, as on a real device (one inventory entry, :mod:`ani.inventory`)."""
    lab_dir = Path(lab_dir)
    key = servers.ensure_private_key(lab_dir / CLIENT_KEY_FILE)
    (lab_dir / f"{CLIENT_KEY_FILE}.pub").write_bytes(key.export_public_key())
    info = {"username": USERNAME, "password": password or secrets.token_urlsafe(18), "host": HOST,
            "client_key": str(lab_dir / CLIENT_KEY_FILE), "host_key": str(lab_dir / HOST_KEY_FILE),
            "known_hosts": str(lab_dir / KNOWN_HOSTS_FILE)}
    write_json_private(info_path(lab_dir), info)
    return info


def start_server(lab_id: str, lab_dir: Path) -> subprocess.Popen[bytes]:
    """Start the SSH server process of lab ``lab_id`` (own session, output to ``ssh.log``).
    Returns at once."""
    return servers.start(KIND, lab_id, lab_dir)


def wait_ready(lab_id: str, lab_dir: Path, proc: subprocess.Popen[bytes],
               timeout_s: float = READY_TIMEOUT_S) -> dict[str, int]:
    """Wait until every router's port accepts a connection. Returns ``{router: port}``. Raises
    LabError (with the tail of ``ssh.log``) if the server exits or is not ready in ``timeout_s``
    seconds."""
    return servers.wait_listening(KIND, lab_id, lab_dir, proc, timeout_s)


def server_pids(lab_id: str, lab_dir: Path, pid: int | None, started: int | None) -> list[int]:
    """The verified PIDs of lab ``lab_id``'s SSH server (:func:`ani.lab.servers.server_pids`)."""
    return servers.server_pids(KIND, lab_id, lab_dir, pid, started)


def endpoint(lab_id: str, lab_dir: Path, router: str) -> SshEndpoint:
    """The SSH endpoint of ``router``'s CLI. Raises LabGone (a LabError) if the lab is gone, LabError
    if it runs no SSH server (``ssh=False``) or the server has no port for ``router``."""
    if not Path(lab_dir).is_dir():
        raise LabGone(lab_id, f"no {lab_dir}")
    info = read_info(lab_dir) or {}
    ports = info.get("ports") or {}
    if router not in ports:
        raise LabError(f"lab {lab_id} has no SSH server for {router!r}"
                       + ("" if info else " (started with ssh=False?)"))
    key, known = info.get("client_key"), info.get("known_hosts")
    return SshEndpoint(info.get("host", HOST), int(ports[router]), info["username"], info.get("password"),
                       Path(key) if key else None, Path(known) if known else None, name=router,
                       credential=f"the lab's password, in {info_path(lab_dir)}")


def ssh_exec(ep: SshEndpoint, command: str, timeout: float = 10.0) -> ExecResult:
    """Run ``command`` through an SSH exec channel of its own on ``ep`` (a device whose login runs
    its CLI: the lab's server runs ``vtysh -c COMMAND``; an FRR device with vtysh as the login
    shell does the same). ``timeout``: seconds, login included; then ``timed_out`` is set.

    Returns an :class:`ani.host.proc.ExecResult` (``rc``: the exit status, 255 when the login
    failed or the connection broke, with the reason in ``stderr``; ``-9`` after a timeout). Never
    raises for the connection: a caller reads ``rc`` as it reads a local command's."""
    import asyncssh

    async def go() -> ExecResult:
        t0 = time.monotonic()
        try:
            async with asyncssh.connect(
                ep.host, ep.port, username=ep.username, password=ep.password,
                client_keys=[str(ep.private_key)] if ep.private_key else None,
                known_hosts=str(ep.known_hosts) if ep.known_hosts else None,
                agent_path=None, login_timeout=timeout, connect_timeout=timeout,
            ) as conn:
                r = await conn.run(command, check=False)
        except (OSError, asyncssh.Error) as exc:
            return ExecResult(255, "", f"{ep.username}@{ep.host}:{ep.port}: {type(exc).__name__}: {exc}\n",
                              False, time.monotonic() - t0)
        out, err = r.stdout or "", r.stderr or ""
        rc = r.exit_status if r.exit_status is not None else 255
        return ExecResult(rc, str(out), str(err), False, time.monotonic() - t0)

    async def bounded() -> ExecResult:
        t0 = time.monotonic()
        try:
            return await asyncio.wait_for(go(), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            return ExecResult(-9, "", "", True, time.monotonic() - t0)

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # the usual case: no event loop in this thread
        return asyncio.run(bounded())
    from ani.host.threads import ContextPool  # called from async code: a loop of its own

    with ContextPool(max_workers=1) as ex:
        return ex.submit(asyncio.run, bounded()).result()


__all__ = ["SshEndpoint", "endpoint", "read_info", "server_pids", "ssh_exec", "start_server", "wait_ready",
           "write_credentials"]
