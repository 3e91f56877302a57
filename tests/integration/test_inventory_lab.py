"""The path to real devices, on a real lab: an inventory of the lab's routers (``ani lab
inventory``) and A1 and A2 built on it, reaching the routers only through their SSH and NETCONF
ports, as they would reach devices that are no lab. Every state is read out of band through the
lab. One lab of tests/data/a1_pair.yaml for the module; each test uses its own names.

A1 on an inventory has no shell on the devices: its snapshot is the FRR running config (read
over an SSH exec channel of its own), its rollback the configuration lines back to it sent
through the CLI, verified; nft statements are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ani.errors import ErrorCode
from ani.inventory import lab_inventory, load_inventory

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "tests" / "data" / "a1_pair.yaml", "inv"
NS = "urn:ani:yang:ani-frr"


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(scope="module")
def password(lab) -> str:
    return json.loads((lab.dir / "ssh.json").read_text())["password"]


@pytest.fixture
def inv(lab, password, tmp_path, monkeypatch):
    monkeypatch.setenv("ANI_LAB_PASSWORD", password)
    p = tmp_path / "inventory.yaml"
    p.write_text(lab_inventory(lab))
    return load_inventory(p)


def running(lab, router: str = "r1") -> str:
    text = lab.running_config(router)
    return text[text.index("Current configuration:"):]


def test_ani_lab_inventory_prints_a_file_that_loads_and_names_no_secret(lab, password, tmp_path):
    for args in ([], ["--key"]):
        res = subprocess.run([sys.executable, "-m", "ani.cli", "lab", "inventory", lab.id, *args], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        assert password not in res.stdout
        p = tmp_path / f"inv{len(args)}.yaml"
        p.write_text(res.stdout)
        inv = load_inventory(p)
        assert inv.devices == ["r1", "r2"]
        assert inv.device("r1").ports.ssh == lab.ssh_endpoint("r1").port
        assert inv.device("r1").ports.netconf == (None if args else lab.netconf_endpoint("r1").port)


def test_a1_on_the_inventory_applies_reads_and_rolls_back_through_the_cli(lab, inv, password):
    a1 = inv.connect("a1")
    try:
        assert a1.transport == "ssh" and a1.snapshots.cli_only
        for r in ("r1", "r2"):
            res = a1.call("get_running_config", {"device": r})
            assert res.ok and f"hostname {r}\n" in res.text
        res = a1.call("execute_validation", {"device": "r2", "command": "show bgp summary json"})
        assert res.ok and json.loads(res.text)["ipv4Unicast"]["routerId"] == "10.255.0.2"

        line = "ip prefix-list PL-INV1 seq 5 permit 192.0.2.0/24"
        res = a1.call("update_config", {"device": "r1", "commands": [line]})
        assert res.ok and res.changed and f"+{line}" in res.data["diff"], res.text
        assert line in running(lab)

        # a line FRR refuses: the lines before it are undone through the CLI, verified
        before = running(lab)
        res = a1.call("update_config", {"device": "r1", "commands": [
            "ip prefix-list PL-INV2 seq 5 permit 192.0.2.0/24", "router bgp 64501",
            "neighbor 198.51.100.2 remote-as 64502", "neighbor 198.51.100.2 peer-group PG-NOPE"]})
        assert res.error.code == ErrorCode.ROLLED_BACK and res.data["rolled_back"] is True, res.text
        assert res.changed is False and running(lab) == before

        # snapshot, changes (a block line, a removal), rollback: the running config as it was
        snap = a1.call("snapshot", {"device": "r1"}).data["snapshot_id"]
        res = a1.call("update_config", {"device": "r1", "commands": [
            "router bgp 64501", "neighbor 198.51.100.9 remote-as 64509", "exit", f"no {line}"]})
        assert res.ok and res.changed, res.text
        rb = a1.call("rollback", {"device": "r1", "snapshot_id": snap})
        assert rb.ok and rb.data["verified"] and rb.changed, rb.text
        assert "- neighbor 198.51.100.9 remote-as 64509" in rb.data["frr_diff"]
        assert running(lab) == before

        # no shell on an inventory device: an nft statement is refused, nothing sent
        res = a1.call("update_config", {"device": "r1", "commands": [
            "ip prefix-list PL-INV3 seq 5 permit 192.0.2.0/24", "nft add element inet fw tenant_blue { 198.19.7.0/24 }"]})
        assert res.error.code == ErrorCode.NOT_ALLOWED and "need a shell on the device" in res.error.message
        assert running(lab) == before
        assert password not in json.dumps(a1.trajectory.calls, default=str)
    finally:
        a1.close()


def test_a1_refuses_a_device_whose_host_key_is_not_the_known_one(lab, inv, tmp_path):
    import asyncssh

    kh = tmp_path / "other_known_hosts"
    kh.write_text("".join(f"[127.0.0.1]:{lab.ssh_endpoint(r).port} "
                          + asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
                          for r in lab.routers))
    p = tmp_path / "other.yaml"  # the lab's inventory, but host keys that are not the routers'
    p.write_text(lab_inventory(lab).replace(str(lab.known_hosts), str(kh)))
    before = running(lab)
    a1 = load_inventory(p).connect("a1")
    try:
        res = a1.call("get_running_config", {"device": "r1"})
        port = lab.ssh_endpoint("r1").port
        assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False, res.text
        assert res.data["cause"] == "host_key_mismatch"
        assert f"the host key of 127.0.0.1 port {port} is not the one {kh} holds" in res.error.message
        res = a1.call("update_config", {"device": "r1", "commands": ["ip prefix-list PL-INV4 seq 5 permit 192.0.2.0/24"]})
        # (update_config first reads the snapshot over an asyncssh exec channel of its own,
        # ani.lab.ssh.ssh_exec, which this classification does not reach yet: still retriable)
        assert not res.ok and res.error.code == ErrorCode.DEVICE_UNREACHABLE, res.text
    finally:
        a1.close()
    assert running(lab) == before


def _a1_first_call(path: Path):
    a1 = load_inventory(path).connect("a1")
    try:
        return a1.call("get_running_config", {"device": "r1"})
    finally:
        a1.close()


def test_a1_wrong_password_is_a_refused_login_not_retried(lab, inv, monkeypatch):
    monkeypatch.setenv("ANI_LAB_PASSWORD", "not-the-password-7Q")
    before = running(lab)
    res = _a1_first_call(Path(inv.source))
    port = lab.ssh_endpoint("r1").port
    assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False, res.text
    assert res.data["cause"] == "auth_refused"
    assert f"the login was refused for ani@127.0.0.1:{port}" in res.error.message
    assert "$ANI_LAB_PASSWORD" in res.error.message and "devices[0].credentials.password_env" in res.error.message
    assert "not-the-password-7Q" not in res.text
    assert running(lab) == before


def test_a1_closed_port_is_connection_refused_and_retriable(lab, inv, tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = tmp_path / "closed.yaml"
    p.write_text(lab_inventory(lab).replace(f"ssh: {lab.ssh_endpoint('r1').port}", f"ssh: {port}"))
    res = _a1_first_call(p)
    assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is True, res.text
    assert res.data["cause"] == "connection_refused"
    assert f"connection refused on 127.0.0.1:{port}" in res.error.message and "resolve" not in res.error.message


def test_a1_empty_known_hosts_names_the_file_host_and_port(lab, inv, password, tmp_path):
    kh = tmp_path / "empty_known_hosts"
    kh.write_text("")
    p = tmp_path / "empty.yaml"
    p.write_text(lab_inventory(lab).replace(str(lab.known_hosts), str(kh)))
    res = _a1_first_call(p)
    port = lab.ssh_endpoint("r1").port
    assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False, res.text
    assert res.data["cause"] == "host_key_unknown"
    assert f"{kh} holds no host key for 127.0.0.1 port {port}: the server cannot be checked" in res.error.message
    assert password not in res.text


#: the first lines of a file of another kind (an /etc/shadow) given as a known_hosts or platform file
SHADOW = "zzuser:$6$SeCrEtHaSh.abc/xyz:20228:0:99999:7:::\nzzdaemon:*:20228:0:99999:7:::\n"


@pytest.mark.parametrize("level", ["a1", "a2"])
def test_a_known_hosts_file_of_another_kind_never_reaches_the_agent(lab, inv, password, tmp_path, level):
    """issue 23 §1: with known_hosts_file naming /etc/shadow, A2's tool result quoted its first
    line (asyncssh's parse error passed on). The agent reads where the file stops being a
    known_hosts file, never a byte of it."""
    kh = tmp_path / "shadow"
    kh.write_text(SHADOW)
    p = tmp_path / "shadow.yaml"
    p.write_text(lab_inventory(lab).replace(str(lab.known_hosts), str(kh)))
    adapter = load_inventory(p).connect(level)
    try:
        res = adapter.call("get_running_config" if level == "a1" else "get_config", {"device": "r1"})
    finally:
        adapter.close()
    assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False, res.text
    assert "SeCrEtHaSh" not in res.text and "zzuser" not in res.text and password not in res.text
    assert res.data["cause"] == "host_key_unknown"  # at both levels: one wording, not retriable
    assert f"cannot read the known_hosts file {kh}: line 1 is not a known_hosts entry" in res.error.message


def test_a_platform_file_of_another_kind_is_refused_without_its_content(lab, tmp_path):
    shadow = tmp_path / "shadow"
    shadow.write_text(SHADOW)
    p = tmp_path / "platform.yaml"
    p.write_text(lab_inventory(lab).replace("platform: frr", f"platform: {shadow}"))
    with pytest.raises(Exception) as err:
        load_inventory(p)
    said = str(err.value)
    assert f"devices[0].platform: {shadow}: invalid platform file: " in said
    assert "2 unknown keys that are not names (not shown" in said
    assert "SeCrEtHaSh" not in said and "zzuser" not in said and "zzdaemon" not in said


def test_a_device_without_the_levels_port_is_refused_at_connect(lab, inv, tmp_path):
    from ani.errors import InventoryError

    p = tmp_path / "sshonly.yaml"
    p.write_text(lab_inventory(lab, key=True))  # SSH only: no netconf port
    with pytest.raises(InventoryError) as info:
        load_inventory(p).connect("a2")
    assert f"{p}: devices[0].ports: r1 has no netconf port" in str(info.value)
    assert "devices[1].ports: r2 has no netconf port" in str(info.value)
    # a mixed inventory stays usable; a call on the device without the port is not retriable
    q = tmp_path / "mixed.yaml"
    q.write_text(lab_inventory(lab).replace(f"netconf: {lab.netconf_endpoint('r2').port}", "").replace("ports:\n      ssh", "ports:\n      ssh"))
    a2 = load_inventory(q).connect("a2")
    try:
        res = a2.call("get_config", {"device": "r2"})
        assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False, res.text
        assert "r2 has no netconf port" in res.error.message
    finally:
        a2.close()


def test_a2_on_the_inventory_edits_and_commits_over_netconf(lab, inv, password, monkeypatch):
    pl = (f'<frr xmlns="{NS}"><prefix-list><name>PL-INV5</name><entry><seq>5</seq><action>permit</action>'
          "<prefix>192.0.2.0/24</prefix></entry></prefix-list></frr>")
    a2 = inv.connect("a2")
    try:
        assert a2.call("lock", {"device": "r2"}).ok
        res = a2.call("edit_config", {"device": "r2", "config": pl})
        assert res.ok, res.text
        res = a2.call("commit", {"devices": ["r2"], "confirmed": False})
        assert res.ok and res.changed, res.text
        assert "ip prefix-list PL-INV5 seq 5 permit 192.0.2.0/24" in running(lab, "r2")
        assert a2.call("unlock", {"device": "r2"}).ok
        assert password not in json.dumps(a2.trajectory.calls, default=str)
    finally:
        a2.close()
    monkeypatch.setenv("ANI_LAB_PASSWORD", "not-the-password")
    a2 = inv.connect("a2")
    try:
        res = a2.call("get_config", {"device": "r1"})
        assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False, res.text
        assert res.data["cause"] == "auth_refused" and "the login was refused for ani@127.0.0.1:" in res.error.message
        assert "not-the-password" not in res.error.message
    finally:
        a2.close()


def test_ani_mcp_serve_on_the_inventory_over_stdio(lab, inv, password, tmp_path):
    """``ani mcp serve --inventory FILE --level a1``: an MCP client's calls reach the devices over
    SSH (the change read back out of band through the lab); the trajectory names no secret; a
    level that cannot act on an inventory and --lab with --inventory are refused (exit 2)."""
    import os

    import anyio
    from mcp import Client, StdioServerParameters, types

    path = Path(inv.source)
    traj = tmp_path / "traj.jsonl"
    line = "ip prefix-list PL-INVMCP seq 5 permit 192.0.2.0/24"
    params = StdioServerParameters(
        command=sys.executable, cwd=str(ROOT),
        args=["-m", "ani.cli", "mcp", "serve", "--inventory", str(path), "--level", "a1", "--trajectory", str(traj)],
        env={**os.environ, "ANI_LAB_PASSWORD": password})

    def text(res: types.CallToolResult) -> str:
        return "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))

    async def main() -> tuple[list[str], str, types.CallToolResult, types.CallToolResult]:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            cfg = await client.call_tool("get_running_config", {"device": "r2"})
            change = await client.call_tool("update_config", {"device": "r1", "commands": [line]})
            unknown = await client.call_tool("get_running_config", {"device": "r9"})
            return names, text(cfg), change, unknown

    try:
        names, cfg, change, unknown = anyio.run(main)
        assert "update_config" in names and "rollback" in names
        assert "hostname r2\n" in cfg
        assert change.is_error is False, text(change)
        assert line in running(lab)  # out of band: the lab's own vtysh
        assert unknown.is_error is True and "unknown device 'r9'" in text(unknown)
        assert len([x for x in traj.read_text().splitlines() if '"tool_call"' in x]) == 3
        assert password not in traj.read_text()
    finally:
        lab.vtysh("r1", ["configure terminal", f"no {line}"])
    for extra, words in ((["--level", "a3t"], "cannot act on an inventory"),
                         (["--level", "a1", "--lab", lab.id], "--lab and --inventory: give one")):
        res = subprocess.run([sys.executable, "-m", "ani.cli", "mcp", "serve", "--inventory", str(path), *extra],
                             cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert res.returncode == 2 and words in res.stderr, res.stderr


def test_the_docs_example_runs_as_written(run_doc_example):
    out = run_doc_example("real-devices.md", "real-devices").splitlines()
    assert out == ["['r1', 'r2'] True", "ssh 1", "False rolled_back True False", "True True True", "True True"]
