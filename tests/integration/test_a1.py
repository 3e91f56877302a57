"""A1 on real FRR in namespaces: issue cases 1-7, snapshot/rollback, blocklist ablation.

Topology: tests/data/a1_pair.yaml (r1: ospfd + bgpd, AS 64501, nftables inet fw; r2: bgpd only,
AS 64502). One lab for the module (conftest's ``module_lab``): the ``lab`` fixture hands it out
converged and, after every test, puts both routers back to the state read when the lab came up
(FRR running config and nftables ruleset, through A1's own snapshot store: restored and
verified), then waits for convergence again (a test may have reset the BGP session). Tests
compare real running configs / rulesets read out-of-band through the lab, never through the
adapter.

Every test that drives A1 runs over both transports of its CLI session (the ``transport``
fixture): ``local`` (vtysh inside the router, scrapli's bin transport) and ``ssh`` (the router's
CLI over the lab's SSH server, scrapli's ssh2 transport: the path a real device is reached by).
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import time
from pathlib import Path

import pytest

from ani.adapters.a1 import A1Adapter
from ani.adapters.cli_session import CliSession, SessionError
from ani.adapters.platform import load_platform
from ani.adapters.sandbox import truncation_marker
from ani.errors import ErrorCode
from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

PAIR = Path(__file__).parent.parent / "data" / "a1_pair.yaml"
LAB_TOPOLOGY, LAB_PREFIX = PAIR, "a1p"  # conftest's module_lab


@pytest.fixture(scope="module")
def pair(module_lab):
    """The module's lab and the state of every router as it came up (A1's snapshot store)."""
    from ani.adapters.snapshot import SnapshotStore

    store = SnapshotStore(module_lab, load_platform())
    return module_lab, store, {r: store.take(r, "module start") for r in module_lab.routers}


@pytest.fixture
def lab(pair):
    """The shared lab, converged; afterwards every router is restored to the module's start
    (verified) and the lab is converged again (BGP sessions Established, OSPF Full)."""
    shared, store, start = pair
    shared.wait_converged()
    yield shared
    for router, snap in start.items():
        rep = store.restore(router, snap.state)
        assert rep.verified, (router, rep.detail)
    shared.wait_converged()


@pytest.fixture(params=["local", "ssh"])
def transport(request) -> str:
    """The A1 option ``transport``: each test that drives A1 runs over both."""
    return request.param


@pytest.fixture
def a1(lab, open_adapter, transport):
    adapter = open_adapter(A1Adapter(lab, options={"transport": transport}))
    assert adapter.transport == transport
    return adapter


def running(lab, router="r1") -> str:
    """The running config without the ``Building configuration...`` header (stable text)."""
    text = lab.running_config(router)
    return text[text.index("Current configuration:"):] if "Current configuration:" in text else text


def ruleset(lab, router="r1") -> str:
    res = lab.exec(router, ["nft", "list", "ruleset"])
    assert res.rc == 0, res.stderr
    return res.stdout


def bgp_peers(lab, router="r1") -> dict[str, str]:
    doc = lab.vtysh_json(router, "show bgp summary json")
    return {a: p["state"] for a, p in doc.get("ipv4Unicast", {}).get("peers", {}).items()}


# -- issue case 1 ---------------------------------------------------------------------------

CASE1 = [
    "ip prefix-list PL-A seq 5 permit 192.0.2.0/24",
    "router bgp 64501",
    "neighbor 198.51.100.2 remote-as 64502",
    "neighbor 198.51.100.2 route-map RM-IN inn",
    "neighbor 198.51.100.3 remote-as 64503",
    "exit",
    "ip prefix-list PL-B seq 5 permit 198.51.100.0/24",
]


def test_case1_misspelt_keyword_nothing_applied_and_line_named(lab, a1):
    before = running(lab)
    res = a1.call("update_config", {"device": "r1", "commands": CASE1})
    assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED
    assert "command 4 'neighbor 198.51.100.2 route-map RM-IN inn'" in res.error.message
    assert res.data["failed_index"] == 3
    assert [r["status"] for r in res.data["results"]] == ["not_run"] * 3 + ["error"] + ["not_run"] * 3
    assert res.changed is False
    assert running(lab) == before


def test_case1_line_the_device_rejects_is_rolled_back(lab, a1):
    """Same shape, but the 4th line passes the grammar and FRR rejects it at run time."""
    before, nft_before = running(lab), ruleset(lab)
    cmds = list(CASE1)
    cmds[3] = "neighbor 198.51.100.2 peer-group PG-NOPE"
    res = a1.call("update_config", {"device": "r1", "commands": cmds})
    assert not res.ok and res.error.code == ErrorCode.ROLLED_BACK
    assert "command 4 'neighbor 198.51.100.2 peer-group PG-NOPE'" in res.error.message
    results = res.data["results"]
    assert [r["status"] for r in results] == ["success"] * 3 + ["error"] + ["not_run"] * 3
    assert "Configure the peer-group first" in results[3]["message"]
    assert res.data["undone"] == cmds[:3]
    assert all(r.get("undone") for r in results[:3])
    assert res.changed is False
    assert running(lab) == before
    assert ruleset(lab) == nft_before
    assert "198.51.100.2" not in bgp_peers(lab)


# -- issue case 2 ---------------------------------------------------------------------------


def test_case2_chain_third_line_fails_nothing_remains(lab, a1):
    before = running(lab)
    res = a1.call("update_config", {"device": "r1", "commands": [
        "router bgp 64501",
        "neighbor 198.51.100.6 remote-as 64506",
        "neighbor 198.51.100.6 bogus-keyword",
    ]})
    assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED
    assert "bogus-keyword" in res.error.message
    assert running(lab) == before

    # the run-time version: the device accepts line 2 then rejects line 3
    res = a1.call("update_config", {"device": "r1", "commands": [
        "router bgp 64501",
        "neighbor 198.51.100.6 remote-as 64506",
        "neighbor 198.51.100.6 peer-group PG-NOPE",
    ]})
    assert not res.ok and res.error.code == ErrorCode.ROLLED_BACK
    assert res.data["ran"] == ["router bgp 64501", "neighbor 198.51.100.6 remote-as 64506"]
    assert res.data["results"][2]["status"] == "error"
    assert running(lab) == before
    assert "198.51.100.6" not in bgp_peers(lab)
    assert "198.51.100.6" not in lab.running_config("r1")


# -- issue case 3 ---------------------------------------------------------------------------


def test_case3_ospf_on_router_without_ospfd_reports_failure(lab, a1):
    before = running(lab, "r2")
    res = a1.call("update_config", {"device": "r2", "commands": [
        "ip prefix-list PL-X seq 5 permit 192.0.2.0/24",
        "router ospf",
        "network 10.0.12.0/30 area 0",
    ]})
    assert not res.ok
    assert res.error.code == ErrorCode.ROLLED_BACK
    assert res.data["results"][1]["status"] == "error"
    assert "ospfd is not running" in res.data["results"][1]["message"]
    assert res.data["results"][2]["status"] == "not_run"
    assert running(lab, "r2") == before
    # the bare block alone fails too (never "success")
    res = a1.call("update_config", {"device": "r2", "commands": ["router ospf"]})
    assert not res.ok and res.data["results"][0]["status"] == "error"
    assert running(lab, "r2") == before


# -- issue case 4 ---------------------------------------------------------------------------


def test_case4_global_line_inside_bgp_block_applies_nothing(lab, a1):
    before = running(lab)
    res = a1.call("update_config", {"device": "r1", "commands": [
        "router bgp 64501",
        "neighbor 198.51.100.2 remote-as 64502",
        "ip prefix-list PL-D seq 5 permit 192.0.2.0/24",
        "neighbor 198.51.100.3 remote-as 64503",
    ]})
    assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED
    msg = res.error.message
    assert "command 4 'neighbor 198.51.100.3 remote-as 64503'" in msg
    assert "command 3 ('ip prefix-list PL-D seq 5 permit 192.0.2.0/24')" in msg
    assert running(lab) == before
    assert a1._sessions == {}  # refused before any session was opened

    # with an explicit re-open of the block, every line lands in its intended block
    res = a1.call("update_config", {"device": "r1", "commands": [
        "router bgp 64501",
        "neighbor 198.51.100.2 remote-as 64502",
        "ip prefix-list PL-D seq 5 permit 192.0.2.0/24",
        "router bgp 64501",
        "neighbor 198.51.100.3 remote-as 64503",
    ]})
    assert res.ok and res.changed, res.text
    after = lab.running_config("r1")
    bgp_block = after[after.index("router bgp 64501"):]
    bgp_block = bgp_block[: bgp_block.index("\nexit")]
    assert " neighbor 198.51.100.2 remote-as 64502" in bgp_block
    assert " neighbor 198.51.100.3 remote-as 64503" in bgp_block
    assert re.search(r"^ip prefix-list PL-D seq 5 permit 192.0.2.0/24$", after, re.M)


# -- issue case 5 ---------------------------------------------------------------------------


@pytest.mark.parametrize("router,rid", [("r1", "10.255.0.1"), ("r2", "10.255.0.2")])
def test_case5_call_reaches_that_router_only(lab, a1, router, rid):
    res = a1.call("execute_validation", {"device": router, "command": "show running-config"})
    assert res.ok
    assert re.findall(r"^hostname (\S+)$", res.text, re.M) == [router]
    assert set(re.findall(r"router-id (\S+)$", res.text, re.M)) == {rid}
    res = a1.call("execute_validation", {"device": router, "command": "show bgp summary json"})
    assert json.loads(res.text)["ipv4Unicast"]["routerId"] == rid
    res = a1.call("get_running_config", {"device": router})
    assert res.ok and f"hostname {router}\n" in res.data["running_config"]


def test_case5_wrong_or_missing_frr_is_an_error_not_a_fallback(lab, transport):
    plat = load_platform()
    if transport == "local":
        # r1's vtysh under r2's name: the prompt check refuses it
        s = CliSession("r2", lab.node_argv("r1", ["vtysh"]), plat, timeout_s=5)
    else:
        # r2's endpoint with r1's port (a port mix-up): the prompt check refuses it
        s = CliSession.over_ssh("r2", dataclasses.replace(lab.ssh_endpoint("r2"), port=lab.ssh_endpoint("r1").port),
                                plat, timeout_s=5)
    with pytest.raises(SessionError, match="not the router's name"):
        s.open()
    if transport == "local":
        # a pathspace with no FRR behind it
        s = CliSession("r2", lab.node_argv("r2", ["/usr/bin/vtysh", "-N", "ani-no-such-pathspace"]), plat, timeout_s=5)
    else:
        # a wrong password, then a host key that is not the server's
        ep = lab.ssh_endpoint("r2")
        s = CliSession.over_ssh("r2", dataclasses.replace(ep, password="not-the-password", private_key=None),
                                plat, timeout_s=5)
        with pytest.raises(SessionError, match="cannot open the CLI over SSH"):
            s.open()
        assert not s.is_open
        import asyncssh

        other = Path(lab.dir) / "other_known_hosts"  # another key for r2's port: not the server's
        other.write_text(f"[{ep.host}]:{ep.port} "
                         + asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode())
        s = CliSession.over_ssh("r2", dataclasses.replace(ep, known_hosts=other), plat, timeout_s=5)
    with pytest.raises(SessionError):
        s.open()
    assert not s.is_open
    res = A1Adapter(lab, options={"transport": transport}).call(
        "execute_validation", {"device": "r9", "command": "show bgp summary"})
    assert res.error.code == ErrorCode.UNKNOWN_DEVICE


class _WrongPathspace:
    """The lab, except that vtysh inside r2 is pointed at a pathspace with no FRR behind it."""

    def __init__(self, lab) -> None:  # noqa: ANN001
        self._lab = lab

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._lab, name)

    def node_argv(self, node: str, argv: list[str]) -> list[str]:
        if argv[:1] == ["vtysh"]:
            argv = ["/usr/bin/vtysh", "-N", self._lab.pathspace(node) + "-missing", *argv[1:]]
        return self._lab.node_argv(node, argv)


class _ClosedPort:
    """The lab, except that r2's SSH endpoint names a port nothing listens on."""

    def __init__(self, lab) -> None:  # noqa: ANN001
        self._lab = lab
        import socket

        with socket.socket() as s:  # a port that was free a moment ago
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._lab, name)

    def ssh_endpoint(self, router: str):  # noqa: ANN201
        ep = self._lab.ssh_endpoint(router)
        return dataclasses.replace(ep, port=self.port) if router == "r2" else ep


def test_case5_adapter_with_missing_pathspace_is_unreachable_not_a_fallback(lab, transport):
    wrong = _WrongPathspace(lab) if transport == "local" else _ClosedPort(lab)
    adapter = A1Adapter(wrong, options={"transport": transport})
    try:
        res = adapter.call("execute_validation", {"device": "r2", "command": "show running-config"})
        assert not res.ok and res.error.code == ErrorCode.DEVICE_UNREACHABLE
        assert "hostname" not in res.text
        res = adapter.call("get_running_config", {"device": "r2"})
        assert not res.ok and res.error.code == ErrorCode.DEVICE_UNREACHABLE
    finally:
        adapter.close()


# -- issue case 6 ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def routes_lab():
    """A lab of its own holding 5000 static routes on r1 (read only: both transports read it;
    taking 5000 routes off the shared lab again cost more than a lab)."""
    from conftest import _owned_labs

    with _owned_labs() as factory:
        lab = factory(PAIR, lab_id="a1r" + secrets.token_hex(3), netconf=False, ssh=True)
        path = Path(lab.dir) / "routes.conf"
        path.write_text("".join(f"ip route 10.{100 + i // 250}.{i % 250}.0/24 blackhole\n" for i in range(5000)))
        res = lab.exec("r1", ["vtysh", "-f", str(path)], timeout=120)
        assert not res.timed_out
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            summ = lab.vtysh_json("r1", "show ip route summary json")
            static = sum(r.get("rib", 0) for r in summ.get("routes", []) if r.get("type") == "static")
            if static >= 5000:
                break
            time.sleep(0.5)
        assert static >= 5000
        yield lab


def test_case6_5000_static_routes_truncated_in_time_and_next_call_works(routes_lab, open_adapter, transport):
    a1 = open_adapter(A1Adapter(routes_lab, options={"transport": transport}))
    assert a1.transport == transport
    res = a1.call("execute_validation", {"device": "r1", "command": "show ip route"})
    assert res.ok, res.text[:500]
    assert res.elapsed_s < a1.command_timeout_s
    assert res.data["truncated"] is True
    assert res.data["bytes"] > 65536
    assert res.text.endswith(truncation_marker(res.data["bytes"] - 65536, 65536))
    assert len(res.text.encode()) < 65536 + 200
    nxt = a1.call("execute_validation", {"device": "r1", "command": "show bgp summary"})
    assert nxt.ok and "10.0.12.2" in nxt.text and nxt.data["truncated"] is False


def test_case6_timeout_is_bounded_and_session_recovers(lab, transport):
    adapter = A1Adapter(lab, options={"command_timeout_s": 0.000001, "transport": transport})
    try:
        t0 = time.monotonic()
        res = adapter.call("execute_validation", {"device": "r1", "command": "show running-config"})
        assert time.monotonic() - t0 < 5
        assert not res.ok and res.error.code in (ErrorCode.TIMEOUT, ErrorCode.DEVICE_UNREACHABLE)
        assert res.error.retriable
        adapter.command_timeout_s = 10.0
        for s in adapter._sessions.values():
            s.timeout_s = 10.0
        res = adapter.call("execute_validation", {"device": "r1", "command": "show bgp summary"})
        assert res.ok and "10.0.12.2" in res.text
    finally:
        adapter.close()


# -- issue case 7 ---------------------------------------------------------------------------

INJECTIONS = [
    "show ip route\nconfigure terminal\nno router bgp 64501",
    "show ip route\rconfigure terminal\rno router bgp 64501",
    "show ip route; configure terminal; no router bgp 64501",
    "show ip route && vtysh -c 'configure terminal' -c 'no router bgp 64501'",
    "show ip route\u2028configure terminal\u2028no router bgp 64501",
    "show ip route\u2029configure terminal\u2029no router bgp 64501",
    "show ip route | vtysh -c 'configure terminal' -c 'no router bgp 64501'",
    "do no router bgp 64501",
]


def test_case7_injections_refused_before_anything_is_sent(lab, a1):
    before = running(lab)
    peers = bgp_peers(lab)
    assert peers == {"10.0.12.2": "Established"}
    for cmd in INJECTIONS:
        res = a1.call("execute_validation", {"device": "r1", "command": cmd})
        assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED, cmd
        assert "refused" in res.error.message
        res = a1.call("update_config", {"device": "r1", "commands": [cmd]})
        assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED, cmd
    assert a1._sessions == {}  # no session was ever opened: nothing was sent
    assert running(lab) == before
    assert bgp_peers(lab) == peers


# -- update_config success, warnings, exact `changed` -----------------------------------------

ONBOARD = [
    "interface eth-r2",
    "ip address 198.19.7.1/24",
    "exit",
    "ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24",
    "nft add element inet fw tenant_blue { 198.19.7.0/24 }",
]


def test_update_config_applies_and_changed_is_exact(lab, a1):
    res = a1.call("update_config", {"device": "r1", "commands": ONBOARD})
    assert res.ok, res.text
    assert res.changed is True
    assert [r["status"] for r in res.data["results"]] == ["success"] * 5
    cfg = lab.running_config("r1")
    assert "ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24" in cfg
    assert " ip address 198.19.7.1/24" in cfg
    assert "198.19.7.0/24" in lab.exec("r1", ["nft", "list", "set", "inet", "fw", "tenant_blue"]).stdout
    assert "+ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24" in res.data["diff"]
    # the same call again changes nothing, and says so
    res2 = a1.call("update_config", {"device": "r1", "commands": ONBOARD[:4]})
    assert res2.ok and res2.changed is False


def test_warning_is_success_with_message(lab, a1):
    res = a1.call("update_config", {"device": "r1", "commands": [
        "router bgp 64501", "neighbor 10.0.12.2 route-map RM-NOT-YET in",
    ]})
    assert res.ok and res.changed
    assert "does not exist" in res.data["results"][1]["message"]


def test_nft_failure_rolls_back_frr_lines_too(lab, a1):
    before, nft_before = running(lab), ruleset(lab)
    res = a1.call("update_config", {"device": "r1", "commands": [
        "ip prefix-list PL-TENANTS seq 40 permit 198.19.9.0/24",
        "nft add element inet fw no_such_set { 198.19.9.0/24 }",
    ]})
    assert not res.ok and res.error.code == ErrorCode.ROLLED_BACK
    assert res.data["results"][1]["status"] == "error"
    assert running(lab) == before and ruleset(lab) == nft_before


# -- snapshot / rollback -------------------------------------------------------------------


def test_snapshot_rollback_restores_frr_and_nft_exactly_and_reports_diff(lab, a1):
    conf = Path("/etc/frr") / lab.pathspace("r1") / "frr.conf"
    startup = conf.read_bytes()
    before, nft_before = running(lab), ruleset(lab)
    snap = a1.call("snapshot", {"device": "r1"})
    assert snap.ok and snap.data["snapshot_id"] == "r1-s1" and snap.changed is False
    res = a1.call("update_config", {"device": "r1", "commands": ONBOARD + [
        "nft delete element inet fw tenant_red { 198.18.2.0/24 }",
        "router bgp 64501", "neighbor 198.51.100.9 remote-as 64509",
    ]})
    assert res.ok, res.text
    res = a1.call("update_config", {"device": "r1", "commands": ["nft flush ruleset"]})
    assert res.ok and res.changed
    assert ruleset(lab).strip() == ""
    ids = [s["id"] for s in a1.call("list_snapshots", {"device": "r1"}).data["snapshots"]]
    assert ids == ["r1-s1", "r1-s2", "r1-s3"]

    rb = a1.call("rollback", {"device": "r1", "snapshot_id": "r1-s1"})
    assert rb.ok, rb.text
    assert rb.changed is True and rb.data["verified"] is True
    assert "-ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24" in rb.data["frr_diff"]
    assert "- neighbor 198.51.100.9 remote-as 64509" in rb.data["frr_diff"]
    assert "+table inet fw {" in rb.data["nft_diff"]
    assert running(lab) == before
    assert ruleset(lab) == nft_before
    assert conf.read_bytes() == startup  # snapshots and rollbacks never touch the startup config

    again = a1.call("rollback", {"device": "r1", "snapshot_id": "r1-s1"})
    assert again.ok and again.changed is False and again.data["diff"] == ""
    bad = a1.call("rollback", {"device": "r1", "snapshot_id": "r1-s99"})
    assert bad.error.code == ErrorCode.UNKNOWN_SNAPSHOT and "r1-s1" in bad.error.message
    assert a1.call("list_snapshots", {"device": "r2"}).data["snapshots"] == []


# -- blocklist ablation ---------------------------------------------------------------------


def test_blocklist_refuses_what_a1_permits(lab, transport):
    before = running(lab)
    guarded = create_adapter("a1", lab, blocklist=True, options={"transport": transport})
    try:
        res = guarded.call("update_config", {"device": "r1", "commands": ["no router bgp 64501"]})
        assert not res.ok and res.error.code == ErrorCode.BLOCKED
        assert running(lab) == before
        assert bgp_peers(lab) == {"10.0.12.2": "Established"}
        assert [t.name for t in guarded.tools()] == [t.name for t in guarded.inner.tools()]
    finally:
        guarded.close()

    plain = create_adapter("a1", lab, options={"transport": transport})
    try:
        snap = plain.call("snapshot", {"device": "r1"}).data["snapshot_id"]
        res = plain.call("update_config", {"device": "r1", "commands": ["no router bgp 64501"]})
        assert res.ok and res.changed
        assert "router bgp" not in lab.running_config("r1")
        rb = plain.call("rollback", {"device": "r1", "snapshot_id": snap})
        assert rb.ok and rb.data["verified"]
        assert running(lab) == before
    finally:
        plain.close()


def test_exec_operation_and_firewall_flush_blocked_only_by_the_wrapper(lab, transport):
    nft_before = ruleset(lab)
    guarded = create_adapter("a1", lab, blocklist=True, options={"transport": transport})
    plain = create_adapter("a1", lab, options={"transport": transport})
    try:
        for cmd in ["clear ip bgp *", "nft flush ruleset", "nft delete table inet fw"]:
            res = guarded.call("update_config", {"device": "r1", "commands": [cmd]})
            assert res.error.code == ErrorCode.BLOCKED, cmd
        assert ruleset(lab) == nft_before
        # A1 alone runs the operation: no configuration changed, so changed is False
        res = plain.call("update_config", {"device": "r1", "commands": ["clear ip bgp *"]})
        assert res.ok and res.changed is False, res.text
        assert res.data["results"] == [{"command": "clear ip bgp *", "status": "success"}]
    finally:
        guarded.close()
        plain.close()


def test_firewall_counters_moving_with_traffic_are_not_a_change(lab, a1):
    # counter values are state, not configuration: traffic through a counter rule must neither
    # make an update "changed" nor make a rollback unverifiable
    import subprocess

    assert lab.vtysh("r1", ["configure terminal", "ip route 192.0.2.0/24 10.0.12.2"]).rc == 0
    assert lab.vtysh("r2", ["configure terminal", "ip route 192.0.2.0/24 10.0.12.1"]).rc == 0
    res = a1.call("update_config", {"device": "r1", "commands": [
        "nft add rule inet fw forward ip daddr 192.0.2.0/24 counter",
    ]})
    assert res.ok and res.changed, res.text
    # r2 -> 192.0.2.1 bounces between r1 and r2 until its TTL runs out: r1 forwards (and counts) it
    ping = subprocess.Popen(
        lab.node_argv("r2", ["ping", "-q", "-i", "0.05", "-w", "20", "192.0.2.1"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        snap = a1.call("snapshot", {"device": "r1"}).data["snapshot_id"]
        res = a1.call("update_config", {"device": "r1", "commands": ["! only a comment"]})
        assert res.ok and res.changed is False, res.data.get("diff")
        res = a1.call("update_config", {"device": "r1", "commands": [
            "ip prefix-list PL-TENANTS seq 40 permit 198.19.9.0/24",
            "nft add element inet fw no_such_set { 198.19.9.0/24 }",
        ]})
        assert res.error.code == ErrorCode.ROLLED_BACK, res.text
        rb = a1.call("rollback", {"device": "r1", "snapshot_id": snap})
        assert rb.ok and rb.changed is False, rb.text
        assert "counter" in ruleset(lab)
    finally:
        ping.kill()
        ping.wait()
