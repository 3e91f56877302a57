"""The lab's SSH server of the routers' CLIs (``python -m ani.lab.ssh_server``) without a lab: a
lab dir whose routers' ``enter`` scripts run a stand-in ``vtysh`` (a shell script), reached with
asyncssh's client. Authentication, exec and shell sessions, exit status, what is refused, the
sessions ended with their client and with the server, no secret in the log."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import asyncssh
import pytest

from ani.errors import LabError
from ani.lab import ssh
from ani.lab.proc import is_alive

#: the stand-in for `<lab dir>/<router>/enter vtysh [-c CMD]`: -c prints what it ran (exit 3 for
#: "fail"); interactive: writes its pid, prints a prompt and echoes each line until EOF
ENTER = """#!/bin/sh
shift  # "vtysh"
if [ "$1" = "-c" ]; then
  echo "{router} ran: $2"
  [ "$2" = fail ] && exit 3
  exit 0
fi
echo $$ > "{dir}/{router}.pid"
printf '{router}# '
while read -r line; do printf '%s\\n{router}# ' "$line"; done
"""


def _served(tmp_path: Path):  # noqa: ANN202
    (tmp_path / "state.json").write_text(json.dumps({"topology": {"routers": {"r1": {}, "r2": {}}}}))
    for r in ("r1", "r2"):
        (tmp_path / r).mkdir()
        enter = tmp_path / r / "enter"
        enter.write_text(ENTER.format(router=r, dir=tmp_path))
        enter.chmod(0o755)
    info = ssh.write_credentials(tmp_path)
    proc = ssh.start_server("x1", tmp_path)
    try:
        ports = ssh.wait_ready("x1", tmp_path, proc, timeout_s=30)
        yield tmp_path, info, ports, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)


@pytest.fixture(scope="module")
def lab_dir(tmp_path_factory):
    """One server for the tests that leave it running."""
    yield from _served(tmp_path_factory.mktemp("lab"))


@pytest.fixture
def own_lab_dir(tmp_path: Path):
    """A server of the test's own (it stops it)."""
    yield from _served(tmp_path)


def _connect(lab_dir: Path, port: int, **kw):  # noqa: ANN202
    opts = {"username": "ani", "known_hosts": str(lab_dir / ssh.KNOWN_HOSTS_FILE),
            "client_keys": [str(lab_dir / ssh.CLIENT_KEY_FILE)], **kw}
    return asyncssh.connect("127.0.0.1", port, **opts)


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(coro)


def test_credentials_are_private_and_the_endpoint_names_them(lab_dir, tmp_path_factory):
    d, info, ports, _ = lab_dir
    for name in (ssh.INFO_FILE, ssh.CLIENT_KEY_FILE, ssh.HOST_KEY_FILE):
        assert (d / name).stat().st_mode & 0o777 == 0o600, name
    other = ssh.write_credentials(tmp_path_factory.mktemp("other"))
    assert len(info["password"]) >= 20 and other["password"] != info["password"]
    info = ssh.read_info(d)  # the server added its ports and pid
    assert info["ports"] == ports and set(ports) == {"r1", "r2"}
    ep = ssh.endpoint("x1", d, "r2")
    assert (ep.host, ep.port, ep.username, ep.name) == ("127.0.0.1", ports["r2"], "ani", "r2")
    assert ep.private_key == d / ssh.CLIENT_KEY_FILE and ep.known_hosts == d / ssh.KNOWN_HOSTS_FILE
    assert info["password"] not in repr(ep)
    with pytest.raises(LabError, match="no SSH server for 'r9'"):
        ssh.endpoint("x1", d, "r9")


def test_endpoint_of_a_lab_without_ssh_or_gone(tmp_path):
    with pytest.raises(LabError, match="ssh=False"):
        ssh.endpoint("x1", tmp_path, "r1")
    with pytest.raises(LabError, match="x1 is not running"):
        ssh.endpoint("x1", tmp_path / "gone", "r1")


def test_exec_runs_vtysh_c_in_that_router_with_its_exit_status(lab_dir):
    d, info, ports, _ = lab_dir

    async def go():  # noqa: ANN202
        out = {}
        for r in ("r1", "r2"):
            async with _connect(d, ports[r]) as conn:
                out[r] = await conn.run("show bgp summary")
                out[r + "-fail"] = await conn.run("fail")
        async with _connect(d, ports["r1"], client_keys=None, password=info["password"]) as conn:
            out["pw"] = await conn.run("show version")
        return out

    out = run(go())
    assert (out["r1"].stdout, out["r1"].exit_status) == ("r1 ran: show bgp summary\n", 0)
    assert out["r2"].stdout == "r2 ran: show bgp summary\n"
    assert out["r2-fail"].exit_status == 3
    assert out["pw"].stdout == "r1 ran: show version\n"


@pytest.mark.parametrize("kw", [
    {"client_keys": None, "password": "wrong"},
    {"username": "root"},
    {"client_keys": [asyncssh.generate_private_key("ssh-ed25519")]},
], ids=["wrong-password", "wrong-user", "other-key"])
def test_other_credentials_are_refused(lab_dir, kw):
    d, _, ports, _ = lab_dir
    with pytest.raises(asyncssh.PermissionDenied):
        run(_connect(d, ports["r1"], **kw).__aenter__())


def test_a_host_key_that_is_not_the_known_one_is_refused(lab_dir, tmp_path_factory):
    d, _, ports, _ = lab_dir
    other = tmp_path_factory.mktemp("kh") / "known_hosts"
    other.write_text(f"[127.0.0.1]:{ports['r1']} "
                     + asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode())
    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        run(_connect(d, ports["r1"], known_hosts=str(other)).__aenter__())


def test_subsystems_and_forwarding_are_refused(lab_dir):
    d, _, ports, _ = lab_dir

    async def go():  # noqa: ANN202
        async with _connect(d, ports["r1"]) as conn:
            with pytest.raises((asyncssh.Error, OSError)):
                async with conn.start_sftp_client():
                    pass
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.open_connection("127.0.0.1", ports["r2"])

    run(go())


def _wait_dead(pid: int, bound_s: float = 10.0) -> bool:
    end = time.monotonic() + bound_s
    while time.monotonic() < end:
        if not is_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_shell_session_with_a_pty_is_the_cli_and_ends_with_its_client(lab_dir):
    d, info, ports, _ = lab_dir

    async def go() -> str:
        async with _connect(d, ports["r2"]) as conn:
            proc = await conn.create_process(term_type="xterm", term_size=(120, 40), encoding=None)
            seen = await proc.stdout.readuntil(b"r2# ")
            proc.stdin.write(b"show ip route\n")
            seen += await proc.stdout.readuntil(b"r2# ")
            # the client goes away without ending the session
            return seen.decode()

    seen = run(go())
    assert seen.startswith("r2# ") and "show ip route" in seen
    pid = int((d / "r2.pid").read_text())
    assert _wait_dead(pid), "the session's CLI outlived its client"
    assert info["password"] not in (d / ssh.LOG_FILE).read_text()


def test_the_server_ends_its_sessions_and_stops_when_the_lab_is_gone(own_lab_dir):
    d, _, ports, proc = own_lab_dir

    async def go() -> None:
        conn = await _connect(d, ports["r1"])
        p = await conn.create_process(term_type="xterm")
        await p.stdout.readuntil("r1# ")
        (d / "state.json").unlink()  # the lab was removed by someone who did not stop the server
        await asyncio.get_running_loop().run_in_executor(None, proc.wait, 20)
        conn.close()

    run(go())
    assert proc.returncode == 0
    assert _wait_dead(int((d / "r1.pid").read_text()))
    assert "the lab is gone: stopping" in (d / ssh.LOG_FILE).read_text()


def test_sigterm_stops_the_server(own_lab_dir):
    d, _, _, proc = own_lab_dir
    assert ssh.server_pids("x1", d, proc.pid, None) == [proc.pid]
    assert ssh.server_pids("x2", d, proc.pid, None) == []  # another lab's id: not its server
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(20) == 0
    assert ssh.server_pids("x1", d, proc.pid, None) == []
