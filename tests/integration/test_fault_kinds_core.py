"""The core fault kinds on real routers (issue 14, must show): each one's effect, its
verification, that the session's present check sees it vanish, and its removal. Latency: the
capability check and its message on this kernel (no netem)."""

from __future__ import annotations

import re
import time

import pytest

from ani.errors import FaultUnavailable
from ani.faults.base import FaultSpec, get_fault_kind
from ani.faults.kinds.latency import netem_missing

pytestmark = pytest.mark.integration

from tests.conftest import TRI  # noqa: E402

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = TRI, "fk", False
R2_ON_R1_LINK = "10.0.12.2"


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def ping_loss(lab, node, addr, count=10, interval="0.05", dev="eth-r2") -> float:
    """Loss (%) of pings bound to ``dev`` (so OSPF cannot route them around the link); a
    device that cannot send at all ("Network is unreachable") loses every packet."""
    res = lab.exec(node, ["ping", "-n", "-q", "-I", dev, "-c", str(count), "-i", interval, "-W", "1", addr], timeout=60)
    if "Network is unreachable" in res.stdout + res.stderr:
        return 100.0
    m = re.search(r"(\d+(?:\.\d+)?)% packet loss", res.stdout)
    assert m, res.stdout + res.stderr
    return float(m.group(1))


def wait_for(pred, timeout=20.0, every=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(every)
    return pred()


def bgp_state(lab, router, peer):
    data = lab.vtysh_json(router, "show bgp summary json")
    return data.get("ipv4Unicast", {}).get("peers", {}).get(peer, {}).get("state")


def test_link_down_both_ends(lab):
    k = get_fault_kind("link_down")
    spec = FaultSpec(kind="link_down", at_step=1, duration_s=5, target={"link": ["r1", "r2"]}, params={"ends": "both"})
    assert ping_loss(lab, "r1", R2_ON_R1_LINK) == 0.0
    h = k.inject(lab, spec)
    try:
        ok, detail = k.verify(lab, spec, h)
        assert ok, detail
        assert "r1:eth-r2 down/DOWN" in detail and "r2:" in detail
        assert ping_loss(lab, "r1", R2_ON_R1_LINK, count=3) == 100.0
        # someone re-ups one end behind the fault's back: present() sees it
        r2_if = h["both"][1][1]
        lab.exec("r2", ["ip", "link", "set", "dev", r2_if, "up"])
        ok, detail = k.present(lab, spec, h)
        assert not ok and f"r2:{r2_if} up/" in detail
    finally:
        k.remove(lab, spec, h)
    ok, detail = k.removed(lab, spec, h)
    assert ok, detail
    k.remove(lab, spec, h)  # idempotent
    assert wait_for(lambda: ping_loss(lab, "r1", R2_ON_R1_LINK, count=3) == 0.0)


def test_link_down_one_end_takes_the_peers_carrier(lab):
    k = get_fault_kind("link_down")
    spec = FaultSpec(kind="link_down", at_step=0, target={"link": ["r2", "r1"]}, params={"ends": "one"})
    h = k.inject(lab, spec)
    try:
        ok, detail = k.verify(lab, spec, h)
        assert ok, detail
        assert "r2:eth-r1 down/DOWN" in detail
        assert re.search(r"r1:eth-r2 up/(DOWN|LOWERLAYERDOWN)\b", detail), detail  # admin-up, no carrier
        assert ping_loss(lab, "r1", R2_ON_R1_LINK, count=3) == 100.0
    finally:
        k.remove(lab, spec, h)
    assert k.removed(lab, spec, h)[0]


def test_packet_loss_drops_a_share_and_counts(lab):
    k = get_fault_kind("packet_loss")
    spec = FaultSpec(kind="packet_loss", at_step=2, target={"link": ["r1", "r2"]}, params={"loss_pct": 50})
    before = lab.exec("r1", ["nft", "list", "ruleset"]).stdout
    # the neighbour entry resolved just before (REACHABLE for >= 15 s), so the loss measured is
    # the rule's, not a failed ARP exchange's (the rule drops ARP too)
    assert wait_for(lambda: ping_loss(lab, "r1", R2_ON_R1_LINK, count=3) == 0.0)
    h = k.inject(lab, spec)
    try:
        ok, detail = k.verify(lab, spec, h)
        assert ok, detail
        assert "drops 50%" in detail
        loss = ping_loss(lab, "r1", R2_ON_R1_LINK, count=100, interval="0.02")
        # each direction drops 50 %: a round trip survives 25 % of the time (expected loss 75 %)
        assert 50.0 <= loss <= 95.0, loss
        ok, detail = k.verify(lab, spec, h)
        counted = [int(n) for n in re.findall(r"\((\d+) packets so far\)", detail)]
        assert ok and len(counted) == 2 and sum(counted) >= 20, detail
        assert k.present(lab, spec, h)[0]
    finally:
        k.remove(lab, spec, h)
    ok, detail = k.removed(lab, spec, h)
    assert ok, detail
    assert lab.exec("r1", ["nft", "list", "ruleset"]).stdout == before  # only its own table went
    k.remove(lab, spec, h)  # idempotent
    # (a neighbour entry that failed under the loss may cost the first probe: retry)
    assert wait_for(lambda: ping_loss(lab, "r1", R2_ON_R1_LINK, count=20, interval="0.02") == 0.0)


def test_packet_loss_vanishes_when_its_table_is_deleted(lab):
    k = get_fault_kind("packet_loss")
    spec = FaultSpec(kind="packet_loss", at_step=3, target={"link": ["r1", "r3"]}, params={"loss_pct": 20})
    h = k.inject(lab, spec)
    try:
        node, _if, table = h["ends"][1]
        lab.exec(node, ["nft", "delete", "table", "netdev", table])
        ok, detail = k.present(lab, spec, h)
        assert not ok and f"no table {table}" in detail
    finally:
        k.remove(lab, spec, h)
    assert k.removed(lab, spec, h)[0]


def test_latency_is_unavailable_here_and_says_why(lab):
    k = get_fault_kind("latency")
    why = k.unavailable(lab)
    probe = lab.exec("r1", ["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"])
    if probe.ok:  # a kernel with netem: the kind must be available and work
        lab.exec("r1", ["tc", "qdisc", "del", "dev", "lo", "root"])
        assert why is None
        return
    assert why is not None and why == netem_missing()
    assert "latency needs the sch_netem kernel module" in why and "this kernel has no netem" in why
    assert probe.stderr.strip() in why  # tc's own words
    spec = FaultSpec(kind="latency", at_step=0, target={"link": ["r1", "r2"]}, params={"delay_ms": 50})
    with pytest.raises(FaultUnavailable, match="no netem"):
        k.inject(lab, spec)
    # nothing was faked on the link: its root qdisc is not a delay of any kind
    qd = lab.exec("r1", ["tc", "qdisc", "show", "dev", "eth-r2"]).stdout
    assert "netem" not in qd and "tbf" not in qd


def test_daemon_restart_changes_the_pid_and_the_session_comes_back(lab):
    k = get_fault_kind("daemon_restart")
    spec = FaultSpec(kind="daemon_restart", at_step=1, duration_s=4, target={"router": "r1"}, params={"daemon": "bgpd"})
    assert wait_for(lambda: bgp_state(lab, "r2", "10.255.0.1") == "Established")
    old = lab.daemon_pid("r1", "bgpd")
    cfg_before = lab.exec("r1", ["vtysh", "-d", "bgpd", "-c", "show running-config"]).stdout
    h = k.inject(lab, spec)
    try:
        ok, detail = k.verify(lab, spec, h)
        assert ok and f"pid {old} killed" in detail, detail
        assert lab.daemon_pid("r1", "bgpd") is None and lab.dead_daemons("r1") == ["bgpd"]
        # the crash is felt: r2's session to r1 leaves Established (hold time 3 s)
        assert wait_for(lambda: bgp_state(lab, "r2", "10.255.0.1") != "Established", timeout=10)
    finally:
        k.remove(lab, spec, h)
    ok, detail = k.removed(lab, spec, h)
    assert ok, detail
    new = lab.daemon_pid("r1", "bgpd")
    assert new is not None and new != old and f"{old} -> {new}" in detail
    assert lab.dead_daemons("r1") == []  # the lab's state knows the new pid
    body = lambda t: [ln for ln in t.splitlines() if ln.strip() and not ln.startswith(("Building", "Current", "frr version"))]
    assert body(lab.exec("r1", ["vtysh", "-d", "bgpd", "-c", "show running-config"]).stdout) == body(cfg_before)
    assert wait_for(lambda: bgp_state(lab, "r2", "10.255.0.1") == "Established", timeout=30)
    # removal is idempotent and leaves the new daemon alone
    k.remove(lab, spec, h)
    assert lab.daemon_pid("r1", "bgpd") == new


def test_a_fault_placed_in_time_comes_without_a_call_and_the_hold_runs_it_out(lab):
    """issue 23 §2 on real routers: a fault placed at 0.3 s of the agent's time is injected by
    the watcher while no call returns (an agent thinking, or in a long call), and the hold keeps
    the run open until it has run its duration; the record says how long it was in effect."""
    from ani.faults.session import FaultSession
    from ani.trajectory import Trajectory

    spec = FaultSpec(kind="link_down", at_step=3, at_s=0.3, duration_s=5.0, target={"link": ["r1", "r2"]},
                     params={"ends": "both"})
    s = FaultSession(lab, [spec], Trajectory())
    s.start()
    try:
        assert wait_for(lambda: s.active == 1, timeout=15)  # no on_tool_call: the watcher injected it
        assert ping_loss(lab, "r1", R2_ON_R1_LINK, count=3) == 100.0
        held = s.hold(bound_s=60)
    finally:
        s.stop()
    [rec] = s.records
    assert s.invalid_reason is None and rec.injected and rec.verified and rec.removed, rec.detail
    assert rec.injected_s >= 0.3 and rec.exposure_s >= 5.0 and held > 0
    assert rec.acting_s < rec.exposure_s  # the agent "stopped" at the hold
    assert wait_for(lambda: ping_loss(lab, "r1", R2_ON_R1_LINK, count=3) == 0.0)
