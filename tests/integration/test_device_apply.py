"""ani.device.apply and ani.netconf.frr_backend on real FRR: read, apply only the difference,
refusals and restore, the startup config left alone, operational state.

One brownfield-small lab for the module (scenarios/brownfield-small.yaml; router e1: OSPF + iBGP
to the reflectors c1 / c2, PL-TENANTS seq 10 / 20, nftables table inet fw). Every test puts e1
back to the configuration read at the start (the ``e1`` fixture) and checks that it did.
"""

from __future__ import annotations

import copy
import secrets
import time
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path

import pytest

import ani.device.apply as device_apply
from ani.device.apply import ApplyError, apply, read
from ani.device.model import BgpAfPeer, DeviceConfig, OspfNetwork, Peer, PrefixListEntry, StaticRoute
from ani.lab import frr
from ani.netconf.frr_backend import STATE, FrrBackend

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).parent.parent.parent / "scenarios" / "brownfield-small.yaml"
R = "e1"


@pytest.fixture(scope="module")
def lab():
    from ani.errors import CapabilityMissing
    from ani.lab.capability import check_capabilities
    from ani.lab.lab import Lab

    try:
        check_capabilities()
    except CapabilityMissing as exc:
        pytest.skip(f"lab unavailable on this host: {exc}")
    lab = Lab(SCENARIO, lab_id="h2a" + secrets.token_hex(3), netconf=False)
    try:
        lab.up()
        yield lab
    finally:
        lab.down()


@pytest.fixture
def e1(lab):
    """e1's configuration at the start of the test; put back (and checked) afterwards."""
    base = read(lab, R)
    assert base.unmodelled == []
    yield base
    if read(lab, R) != base:
        apply(lab, R, base)
    assert read(lab, R) == base


def changed(base: DeviceConfig, edit) -> DeviceConfig:  # type: ignore[no-untyped-def]
    want = copy.deepcopy(base)
    edit(want)
    return DeviceConfig.model_validate(want.model_dump())


def startup(lab) -> tuple[bytes, int, list[str]]:  # type: ignore[no-untyped-def]
    d = frr.etc_dir(lab.pathspace(R))
    f = d / "frr.conf"
    return f.read_bytes(), f.stat().st_mtime_ns, sorted(p.name for p in d.iterdir())


def bgp_sessions(lab) -> dict[str, tuple[str, int, int]]:  # type: ignore[no-untyped-def]
    """address -> (state, connectionsEstablished, connectionsDropped): a reset session counts
    one more drop (and one more establishment once it is back)."""
    peers = lab.vtysh_json(R, "show bgp summary json")["ipv4Unicast"]["peers"]
    return {a: (p["state"], p["connectionsEstablished"], p["connectionsDropped"]) for a, p in peers.items()}


def route_lines(lab) -> list[str]:  # type: ignore[no-untyped-def]
    return [ln for ln in lab.running_config(R).splitlines() if ln.startswith("ip route ")]


# -- reading --------------------------------------------------------------------------------


def test_read_is_the_running_config_and_the_ruleset(lab, e1):
    assert e1.hostname == R
    assert [str(a) for a in e1.interfaces["to-blue1"].addresses] == ["198.18.11.1/24"]
    assert [e.seq for e in e1.prefix_lists["PL-TENANTS"].entries] == [10, 20]
    assert e1.firewall is not None
    assert [str(n) for n in e1.firewall.sets["tenant_blue"].elements][:1] == ["198.18.11.0/24"]
    assert [r.action for r in e1.firewall.forward_rules] == ["drop", "drop"]
    assert FrrBackend(lab, R).read() == e1


# -- applying -------------------------------------------------------------------------------


def test_apply_changes_only_the_difference(lab, e1, monkeypatch):
    def edit(m: DeviceConfig) -> None:
        m.prefix_lists["PL-TENANTS"].entries.append(PrefixListEntry(seq=30, action="permit", prefix="192.0.2.0/24"))
        m.interfaces["to-blue1"].addresses.append(IPv4Interface("203.0.113.1/24"))
        m.firewall.sets["tenant_blue"].elements.append(IPv4Network("192.0.2.0/24"))

    want = changed(e1, edit)
    sessions, start = bgp_sessions(lab), startup(lab)
    assert {s for s, _, _ in sessions.values()} == {"Established"}
    assert all(dropped == 0 for _, _, dropped in sessions.values())

    report = FrrBackend(lab, R).apply(want)
    print(f"apply of 3 changes on {R}: {report.seconds:.2f} s")

    assert report.changed
    assert report.diff == [
        "+ interface to-blue1 / ip address 203.0.113.1/24",
        "+ ip prefix-list PL-TENANTS seq 30 permit 192.0.2.0/24",
        "+ nft / table inet fw / set tenant_blue / element 192.0.2.0/24",
    ]
    assert read(lab, R) == want
    assert bgp_sessions(lab) == sessions  # not reset: same count of establishments, same start
    assert startup(lab) == start  # frr.conf not written (same bytes, same mtime, no frr.conf.sav)

    # a firewall-only change runs no frr-reload; an FRR-only change no nft -f
    calls: list[str] = []
    real_reload, real_exec = device_apply.frr_reload, lab.exec

    def spy_reload(*a, **k):  # type: ignore[no-untyped-def]
        calls.append("frr-reload")
        return real_reload(*a, **k)

    def spy_exec(node, argv, **k):  # type: ignore[no-untyped-def]
        calls.append(" ".join(argv[:2]))
        return real_exec(node, argv, **k)

    monkeypatch.setattr(device_apply, "frr_reload", spy_reload)
    monkeypatch.setattr(lab, "exec", spy_exec)
    fw_only = changed(want, lambda m: m.firewall.sets["tenant_red"].elements.pop())
    apply(lab, R, fw_only)
    assert "frr-reload" not in calls and "nft -f" in calls
    calls.clear()
    apply(lab, R, changed(fw_only, lambda m: m.prefix_lists["PL-TENANTS"].entries.pop()))
    assert "frr-reload" in calls and "nft -f" not in calls


def test_unchanged_apply_is_a_no_op(lab, e1):
    report = apply(lab, R, e1)
    assert not report.changed and report.diff == []


def test_one_line_change_time(lab, e1):
    """The figure the NETCONF commit path pays (printed, not asserted)."""
    want = changed(e1, lambda m: m.prefix_lists["PL-TENANTS"].entries.append(
        PrefixListEntry(seq=30, action="permit", prefix="192.0.2.0/24")))
    times = []
    for target in (want, e1, want, e1):
        times.append(apply(lab, R, target).seconds)
    print("one-line apply on a brownfield edge (s): " + ", ".join(f"{t:.2f}" for t in times))


def test_refused_change_is_restored(lab, e1):
    # FRR refuses 'network .. area' under router ospf while interfaces have 'ip ospf area'
    def edit(m: DeviceConfig) -> None:
        m.ospf.networks = [OspfNetwork(prefix="192.0.2.0/24", area="0")]
        m.prefix_lists["PL-TENANTS"].entries.append(PrefixListEntry(seq=30, action="permit", prefix="192.0.2.0/24"))

    start = startup(lab)
    with pytest.raises(ApplyError) as err:
        apply(lab, R, changed(e1, edit))
    assert err.value.restored is True
    assert "Please remove all ip ospf area" in err.value.message  # FRR's own words
    assert err.value.lines == ["+ router ospf / network 192.0.2.0/24 area 0"]
    assert read(lab, R) == e1  # the prefix-list entry that did apply was taken back
    assert startup(lab) == start


def test_static_route_distance_only_change(lab, e1):
    route = StaticRoute(prefix="192.0.2.0/24", nexthop="198.51.100.1")
    one = changed(e1, lambda m: m.static_routes.append(route))
    apply(lab, R, one)
    assert route_lines(lab) == ["ip route 192.0.2.0/24 198.51.100.1"]

    far = changed(e1, lambda m: m.static_routes.append(route.model_copy(update={"distance": 200})))
    report = apply(lab, R, far)
    assert report.diff == ["- ip route 192.0.2.0/24 198.51.100.1", "+ ip route 192.0.2.0/24 198.51.100.1 200"]
    assert route_lines(lab) == ["ip route 192.0.2.0/24 198.51.100.1 200"]  # exactly that route
    assert read(lab, R) == far

    apply(lab, R, one)  # and back to distance 1
    assert route_lines(lab) == ["ip route 192.0.2.0/24 198.51.100.1"]


def test_remove_a_prefix_list_entry(lab, e1):
    want = changed(e1, lambda m: m.prefix_lists["PL-TENANTS"].entries.pop())
    report = apply(lab, R, want)
    assert report.diff == ["- ip prefix-list PL-TENANTS seq 20 permit 198.18.21.0/24"]
    assert [ln for ln in lab.running_config(R).splitlines() if ln.startswith("ip prefix-list")] == [
        "ip prefix-list PL-TENANTS seq 10 permit 198.18.11.0/24"
    ]


def test_bgp_neighbors_added_and_removed_other_sessions_untouched(lab, e1):
    sessions = bgp_sessions(lab)

    def add(m: DeviceConfig) -> None:
        m.bgp.neighbors["192.0.2.9"] = Peer(remote_as=65009, description="lab peer", timers_connect=5)
        m.bgp.ipv4_unicast.peers["192.0.2.9"] = BgpAfPeer(route_map_in="RM-TENANTS-OUT")

    with_peer = changed(e1, add)
    apply(lab, R, with_peer)
    assert read(lab, R) == with_peer
    # removing it takes its address-family lines too ('no neighbor' drops them all)
    apply(lab, R, e1)
    assert read(lab, R) == e1
    # an iBGP session of the peer-group: removed, then back
    no_rr2 = changed(e1, lambda m: m.bgp.neighbors.pop("100.64.255.2"))
    report = apply(lab, R, no_rr2)
    assert report.diff == ["- router bgp 64500 / neighbor 100.64.255.2 peer-group RR"]
    assert set(bgp_sessions(lab)) == {"100.64.255.1"}
    assert bgp_sessions(lab)["100.64.255.1"] == sessions["100.64.255.1"]  # never reset
    apply(lab, R, e1)
    lab.wait_converged(timeout_s=30)
    assert bgp_sessions(lab)["100.64.255.1"] == sessions["100.64.255.1"]


def test_unmodelled_running_lines_refuse_the_apply_and_are_named(lab, e1):
    assert lab.vtysh(R, ["configure", "ip prefix-list PL-TENANTS description kept by hand"]).ok
    assert lab.exec(R, ["nft", "add", "table", "ip", "nat"]).ok
    try:
        before = lab.running_config(R)
        want = changed(e1, lambda m: m.prefix_lists["PL-TENANTS"].entries.pop())
        with pytest.raises(ApplyError) as err:
            apply(lab, R, want)
        assert err.value.restored is True
        assert err.value.lines == ["ip prefix-list PL-TENANTS description kept by hand", "nft / table ip nat"]
        assert "ip prefix-list PL-TENANTS description kept by hand" in err.value.message
        assert "nft / table ip nat" in err.value.message
        assert lab.running_config(R) == before  # nothing applied
    finally:
        lab.vtysh(R, ["configure", "no ip prefix-list PL-TENANTS description"])
        lab.exec(R, ["nft", "delete", "table", "ip", "nat"])


def test_hostname_other_than_the_routers_is_refused(lab, e1):
    with pytest.raises(ApplyError) as err:
        apply(lab, R, e1.model_copy(update={"hostname": "other"}))
    assert err.value.restored is True and "hostname" in err.value.message


def test_firewall_removed_and_back(lab, e1):
    apply(lab, R, e1.model_copy(update={"firewall": None}))
    assert read(lab, R).firewall is None
    assert "table inet fw" not in lab.exec(R, ["nft", "list", "ruleset"]).stdout


def test_write_startup_only_when_asked(lab, e1):
    want = changed(e1, lambda m: m.prefix_lists["PL-TENANTS"].entries.pop())
    apply(lab, R, want, write_startup=True)
    text = (frr.etc_dir(lab.pathspace(R)) / "frr.conf").read_text()
    assert "seq 10 permit 198.18.11.0/24" in text and "seq 20" not in text


# -- operational state ------------------------------------------------------------------------


def test_state_has_real_values(lab, e1):
    backend = FrrBackend(lab, R)
    deadline = time.monotonic() + 20  # sessions are up; the routes may still be on their way
    while True:
        st = backend.state()[STATE]
        routes = {(r["prefix"], r["protocol"]): r for r in st["route"]}
        if ("198.18.12.0/24", "bgp") in routes or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    nbrs = {n["address"]: n for n in st["bgp-neighbor"]}
    assert set(nbrs) == {"100.64.255.1", "100.64.255.2"}
    assert all(n["state"] == "Established" and n["remote-as"] == 64500 for n in nbrs.values())
    assert nbrs["100.64.255.1"]["prefixes-received"] > 0
    conn = routes[("198.18.11.0/24", "connected")]
    assert conn["selected"] is True and conn["next-hop"] == ["to-blue1"] and conn["distance"] == 0
    assert routes[("198.18.12.0/24", "bgp")]["selected"] is True  # e2's blue site, over iBGP
    assert routes[("100.64.255.1/32", "ospf")]["next-hop"] == ["100.64.1.0 via to-c1"]
    ifs = {i["name"]: i for i in st["interface"]}
    assert ifs["to-blue1"] == {"name": "to-blue1", "admin-status": "up", "oper-status": "up",
                               "address": ["198.18.11.1/24"], "mtu": 1500}
    ospf = {(n["router-id"], n["interface"]): n for n in st["ospf-neighbor"]}
    assert ospf[("100.64.255.1", "to-c1")]["state"].startswith("Full")
    assert ospf[("100.64.255.1", "to-c1")]["address"] == "100.64.1.0"


def test_state_is_valid_frr_state_of_the_yang_module(lab, e1):
    yang = pytest.importorskip("ani.device.yang")
    from yangson.enumerations import ContentType

    for router in (R, "c1"):
        raw = FrrBackend(lab, router).state()
        yang.data_model().from_raw(raw).validate(ctype=ContentType.all)
        elem = yang.state_to_xml(raw)
        assert elem.tag == f"{{{yang.NS}}}frr-state"
        assert len(elem.findall(f"{{{yang.NS}}}bgp-neighbor")) == len(raw[STATE]["bgp-neighbor"])
