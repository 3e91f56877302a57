"""ani.inventory without devices: the file's rules (each error names the file and the field),
secrets read from a variable or a file at use and never shown, and the adapters built on it."""

from __future__ import annotations

from pathlib import Path

import asyncssh
import pytest

from ani.errors import ConfigError, InventoryError
from ani.inventory import load_inventory
from ani.netconf.client import SessionLost, known_host_b64
from ani.registry import create_adapter

ROOT_ADAPTERS = Path(__file__).resolve().parents[2] / "adapters"

GOOD = """
defaults:
  username: netops
  credentials: {password_env: INV_TEST_PW}
devices:
  - name: edge-1
    host: 192.0.2.11
    hostname: edge1
    ports: {ssh: 2201, netconf: 8301}
  - name: core.2
    host: 192.0.2.12
    ports: {netconf: 830}
    username: admin
    credentials: {password_file: secrets/core2.pw}
  - name: r3
    host: 192.0.2.13
    ports: {ssh: 22}
    credentials: {private_key_file: keys/id_ed25519}
    known_hosts_file: known_hosts
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "inv.yaml"
    p.write_text(text)
    return p


@pytest.fixture
def inv_file(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "core2.pw").write_text("s3cret-core\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id_ed25519").write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    return write(tmp_path, GOOD)


def test_a_good_file_gives_devices_and_endpoints_with_secrets_read_at_use(inv_file, monkeypatch):
    inv = load_inventory(inv_file)
    assert inv.devices == ["edge-1", "core.2", "r3"]
    assert inv.topology.nodes == inv.devices and inv.topology.links == []
    monkeypatch.setenv("INV_TEST_PW", "pw-from-env")
    ep = inv.ssh_endpoint("edge-1")
    assert (ep.host, ep.port, ep.username, ep.password, ep.name) == ("192.0.2.11", 2201, "netops", "pw-from-env", "edge1")
    assert "pw-from-env" not in repr(ep) and "pw-from-env" not in repr(inv)
    nc = inv.netconf_endpoint("core.2")
    assert (nc.port, nc.username, nc.password, nc.private_key) == (830, "admin", "s3cret-core", None)
    assert "s3cret-core" not in repr(nc)
    r3 = inv.ssh_endpoint("r3")
    assert r3.password is None and r3.private_key == inv_file.parent / "keys" / "id_ed25519"  # relative to the file
    assert r3.known_hosts == inv_file.parent / "known_hosts" and r3.name == "r3"
    inv.check()


def test_a_secret_that_cannot_be_read_is_an_error_naming_the_field(inv_file, monkeypatch):
    inv = load_inventory(inv_file)  # loading reads no secret
    monkeypatch.delenv("INV_TEST_PW", raising=False)
    with pytest.raises(InventoryError, match=r"inv.yaml: devices\[0\].credentials.password_env: the environment "
                                             r"variable INV_TEST_PW is not set"):
        inv.ssh_endpoint("edge-1")
    with pytest.raises(InventoryError, match=r"devices\[0\].credentials.password_env"):
        inv.check()
    (inv_file.parent / "secrets" / "core2.pw").unlink()
    with pytest.raises(InventoryError, match=r"devices\[1\].credentials.password_file: cannot read .*core2.pw"):
        inv.netconf_endpoint("core.2")
    with pytest.raises(InventoryError, match=r"devices\[1\].ports: core.2 has no ssh port"):
        inv.ssh_endpoint("core.2")
    with pytest.raises(InventoryError, match=r"unknown device 'edge1'; did you mean 'edge-1'\?"):
        inv.device("edge1")


@pytest.mark.parametrize("device,message", [
    ("{name: r1, host: h, username: u, ports: {ssh: 22}, credentials: {password: hunter2}}",
     r"devices\[0\].credentials.password: a secret is never written in the inventory: use password_env, "
     r"password_file, private_key_file"),
    ("{name: r1, host: h, username: u, ports: {ssh: 22}, password: hunter2, credentials: {password_env: X}}",
     r"devices\[0\].password: a secret is never written in the inventory"),
    ("{name: r1, host: h, username: u, ports: {ssh: 22}, credentials: {password_env: X, password_file: f}}",
     r"devices\[0\].credentials: give exactly one of password_env, password_file, private_key_file "
     r"\(got password_env, password_file\)"),
    ("{name: r1, host: h, username: u, ports: {ssh: 22}, credentials: {}}",
     r"devices\[0\].credentials: give exactly one of"),
    ("{name: r1, host: h, username: u, ports: {}, credentials: {password_env: X}}",
     r"devices\[0\].ports: give ssh, netconf or both"),
    ("{name: r1, host: h, username: u, ports: {ssh: 70000}, credentials: {password_env: X}}",
     r"devices\[0\].ports.ssh: Input should be less than or equal to 65535"),
    ("{name: 'r 1', host: h, username: u, ports: {ssh: 22}, credentials: {password_env: X}}",
     r"devices\[0\].name: 'r 1' is not a device name"),
    ("{name: r1, host: h, username: u, ports: {ssh: 22}, credentials: {password_env: X}, vendor: x}",
     r"devices\[0\].vendor: unknown key"),
    ("{name: r1, host: h, username: u, ports: {ssh: 22}, credentials: {password_env: X}, platform: nosuch}",
     r"devices\[0\].platform: .*nosuch"),
    ("{name: r1, host: h, ports: {ssh: 22}, credentials: {password_env: X}}",
     r"devices\[0\].username: Field required"),
])
def test_a_bad_device_is_refused_naming_the_file_and_the_field(tmp_path, device, message):
    p = write(tmp_path, f"devices:\n  - {device}\n")
    with pytest.raises(InventoryError, match=rf"^{tmp_path / 'inv.yaml'}: .*{message}"):
        load_inventory(p)


def test_the_whole_file_is_checked_too(tmp_path):
    with pytest.raises(InventoryError, match=r"inv.yaml: devices: List should have at least 1 item"):
        load_inventory(write(tmp_path, "devices: []\n"))
    with pytest.raises(InventoryError, match=r"inv.yaml: defaults.credentials.password: a secret is never"):
        load_inventory(write(tmp_path, "defaults: {credentials: {password: x}}\ndevices: [{name: a}]\n"))
    with pytest.raises(InventoryError, match=r"inv.yaml: an inventory must be a mapping with 'devices', got list"):
        load_inventory(write(tmp_path, "- a\n"))
    with pytest.raises(InventoryError, match=r"inv.yaml: devices\[1\].name: 'r1' is written twice"):
        load_inventory(write(tmp_path, "defaults: {host: h, username: u, ports: {ssh: 22}, credentials: "
                                       "{password_env: X}}\ndevices: [{name: r1}, {name: r1}]\n"))
    with pytest.raises(InventoryError, match=r"nowhere.yaml: cannot read"):
        load_inventory(tmp_path / "nowhere.yaml")
    assert issubclass(InventoryError, ConfigError)


def test_adapters_act_on_an_inventory(inv_file, monkeypatch):
    monkeypatch.setenv("INV_TEST_PW", "pw")
    inv = load_inventory(inv_file)
    a1 = create_adapter("a1", inv)
    assert a1.transport == "ssh" and a1.snapshots.cli_only is True  # its CLI only
    topo = a1.call("get_topology", {})
    assert topo.ok and [n["name"] for n in topo.data["topology"]["nodes"]] == inv.devices
    bad = a1.call("get_running_config", {"device": "edge1"})
    assert bad.error.code.value == "unknown_device" and "did you mean 'edge-1'" in bad.error.message
    # an nft statement cannot run on a device reached through its CLI: refused, nothing sent
    res = a1.call("update_config", {"device": "r3", "commands": ["nft add element inet fw s { 192.0.2.0/24 }"]})
    assert res.error.code.value == "not_allowed" and "need a shell on the device" in res.error.message
    assert a1._sessions == {}
    with pytest.raises(ConfigError, match="transport: 'local'"):
        create_adapter("a1", inv, options={"transport": "local"})
    with pytest.raises(ConfigError, match="check_device_status reads the devices' processes"):
        create_adapter("a1", inv, options={"extra_tools": ["check_device_status"]})
    a2 = create_adapter("a2", inv)
    assert a2.devices == inv.devices


def test_known_hosts_gives_the_key_of_that_host_and_port(tmp_path):
    k1, k2 = (asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode() for _ in range(2))
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[192.0.2.1]:830 {k1}192.0.2.2 {k2}")
    assert known_host_b64(kh, "192.0.2.1", 830) == k1.split()[1]
    assert known_host_b64(kh, "192.0.2.2", 22) == k2.split()[1]
    with pytest.raises(SessionLost, match="holds no host key for 192.0.2.3 port 830"):
        known_host_b64(kh, "192.0.2.3", 830)
    with pytest.raises(SessionLost, match="cannot read the known_hosts file"):
        known_host_b64(tmp_path / "none", "192.0.2.1", 830)


def test_one_a1_adapter_speaks_the_devices_one_platform(tmp_path, monkeypatch):
    monkeypatch.setenv("X", "pw")
    frr = (ROOT_ADAPTERS / "frr.yaml")
    other = tmp_path / "frr-copy.yaml"  # the same definition under another name and path
    other.write_text(frr.read_text().replace("platform: frr", "platform: frr-copy", 1))
    p = write(tmp_path, f"""
defaults: {{host: 127.0.0.1, username: u, credentials: {{password_env: X}}}}
devices:
  - {{name: r1, ports: {{ssh: 22}}}}
  - {{name: r2, ports: {{ssh: 22}}, platform: frr-copy.yaml}}
  - {{name: r3, ports: {{netconf: 830}}, platform: frr-copy.yaml}}
""")
    inv = load_inventory(p)
    assert inv.platforms == {"r1": "frr", "r2": str(other)}
    with pytest.raises(InventoryError, match=r"the devices have different platforms \(.*frr-copy.yaml: r2; frr: r1\); one A1 adapter speaks one"):
        inv.connect("a1")
    with pytest.raises(ConfigError, match=r"a1 options: platform: 'frr', but the target's devices r2 \(.*\) have another"):
        create_adapter("a1", inv)
