"""The routers' CLIs over SSH on a real lab (``ani.lab.ssh``): started with the lab, shown by
``ani lab status``, in the state file, reaching each router's own FRR, its credentials private
and never printed, stopped with the lab (no process, no port, no file left)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

import asyncssh
import pytest

from ani.errors import LabError
from ani.lab import Lab
from ani.lab import ssh as lab_ssh
from ani.lab.cleanup import exists
from ani.lab.proc import is_alive
from ani.lab.servers import accepts
from ani.lab.state import read_state

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

DATA = Path(__file__).parent.parent / "data"
ANI = [sys.executable, "-m", "ani.cli"]


def ani(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANI, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def cli_lab_id(lab_host):
    lab_id = "ssh" + uuid.uuid4().hex[:4]
    yield lab_id
    if exists(lab_id):
        Lab.down_id(lab_id)


async def _exec(ep: lab_ssh.SshEndpoint, command: str) -> asyncssh.SSHCompletedProcess:
    async with asyncssh.connect(ep.host, ep.port, username=ep.username, client_keys=[str(ep.private_key)],
                                known_hosts=str(ep.known_hosts)) as conn:
        return await conn.run(command)


def test_lab_up_serves_each_routers_cli_over_ssh_until_lab_down(cli_lab_id):
    up = ani("lab", "up", str(DATA / "tri-ospf-ibgp.yaml"), "--lab", cli_lab_id)
    assert up.returncode == 0, up.stderr
    lab = Lab.attach(cli_lab_id)
    st = read_state(cli_lab_id)
    assert st is not None and set(st.ssh_ports) == {"r1", "r2", "r3"}
    info = lab_ssh.read_info(lab.dir)
    assert info["ports"] == st.ssh_ports
    for name in (lab_ssh.INFO_FILE, lab_ssh.CLIENT_KEY_FILE, lab_ssh.HOST_KEY_FILE):
        assert (lab.dir / name).stat().st_mode & 0o777 == 0o600, name

    status = ani("lab", "status", cli_lab_id)
    assert status.returncode == 0, status.stderr
    assert "ssh" in status.stdout and "CLI (vtysh) over SSH" in status.stdout
    lines = status.stdout.splitlines()
    for r, port in st.ssh_ports.items():  # a router's row: its NETCONF port, then its SSH port below
        i = next(i for i, ln in enumerate(lines) if ln.strip("│┃ ").startswith(r + " "))
        nc_port, ssh_port = (ln.split("│")[5].strip() for ln in lines[i:i + 2])
        assert (nc_port, ssh_port) == (str(lab.netconf_endpoint(r).port), str(port)), lines[i:i + 2]
    for out in (up.stdout, status.stdout, (lab.dir / lab_ssh.LOG_FILE).read_text()):
        assert info["password"] not in out

    # each port reaches its own router's FRR, and no other
    for r in ("r1", "r2", "r3"):
        res = asyncio.run(_exec(lab.ssh_endpoint(r), "show running-config"))
        assert res.exit_status == 0, res.stderr
        assert f"hostname {r}\n" in res.stdout
        assert {f"hostname {o}" for o in {"r1", "r2", "r3"} - {r}}.isdisjoint(res.stdout.splitlines())
    bad = asyncio.run(_exec(lab.ssh_endpoint("r2"), "show no-such-thing"))
    assert bad.exit_status != 0 and "% Unknown command" in bad.stdout + bad.stderr

    pids = lab_ssh.server_pids(cli_lab_id, lab.dir, st.ssh_pid, st.ssh_start)
    assert pids == [st.ssh_pid]
    down = ani("lab", "down", cli_lab_id)
    assert down.returncode == 0, down.stderr
    assert not is_alive(st.ssh_pid)
    assert not any(accepts(p) for p in st.ssh_ports.values())
    assert not exists(cli_lab_id)


def test_a_lab_without_ssh_says_so(make_lab):
    lab = make_lab(DATA / "a1_pair.yaml", netconf=False, ssh=False)
    assert read_state(lab.id).ssh_pid is None and not (lab.dir / lab_ssh.INFO_FILE).exists()
    with pytest.raises(LabError, match="ssh=False"):
        lab.ssh_endpoint("r1")


def test_a1_over_ssh_leaves_no_cli_process_once_closed(make_lab):
    from ani.adapters.a1 import A1Adapter
    from ani.lab.cleanup import pids_in_namespaces

    lab = make_lab(DATA / "a1_pair.yaml", netconf=False)
    daemons = {pid for r in lab.routers for pid in lab.daemon_pids(r).values()}

    def others() -> set[int]:
        pids = set(pids_in_namespaces([lab.netns(r) for r in lab.routers])) - daemons
        return {p for p in pids if is_alive(p)}

    adapter = A1Adapter(lab, options={"transport": "ssh"})
    adapter.open()
    for r in lab.routers:
        res = adapter.call("execute_validation", {"device": r, "command": "show bgp summary json"})
        assert res.ok and json.loads(res.text)["ipv4Unicast"]["routerId"].startswith("10.255.0.")
    assert others(), "each session's vtysh runs in its router"
    adapter.close()
    import time

    end = time.monotonic() + 10
    while others() and time.monotonic() < end:
        time.sleep(0.1)
    assert not others(), "a session's vtysh outlived the adapter"
