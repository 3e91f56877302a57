"""ani.device.apply and ani.netconf.frr_backend on real FRR: read, apply only the difference,
refusals and restore, the startup config left alone, operational state; FRR defaults the model
folds (``bgp route-map delay-timer 5``), ``coalesce-time``, the nft set names nft refuses.

One brownfield-small lab for the module (conftest's ``module_lab``: scenarios/brownfield-small.yaml;
router e1: OSPF + iBGP to the reflectors c1 / c2, PL-TENANTS seq 10 / 20, nftables table inet
fw). Every test puts e1 back to the configuration read at the start (the ``e1`` fixture) and
checks that it did. The tri-ospf-ibgp NETCONF test and the docs example make their own labs.
"""

from __future__ import annotations

import copy
import secrets
import time
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path

import pytest

import ani.device.apply as device_apply
import ani.device.state as device_state
from ani.device.apply import ApplyError, apply, read
from ani.device.model import (
    BgpAfPeer,
    DeviceConfig,
    Firewall,
    FirewallRule,
    FirewallSet,
    OspfNetwork,
    Peer,
    PrefixListEntry,
    StaticRoute,
)
from ani.lab import frr
from ani.netconf.frr_backend import STATE, FrrBackend

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).parent.parent.parent / "scenarios" / "brownfield-small.yaml"
R = "e1"
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = SCENARIO, "h2a", False  # conftest's module_lab


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


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
    # (a session may have dropped once while the lab came up on a loaded machine: what matters
    # is that the apply below neither drops nor re-establishes any, compared after it)
    assert {s for s, _, _ in sessions.values()} == {"Established"}

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
    real_reload, real_exec = device_state.frr_reload, lab.exec

    def spy_reload(*a, **k):  # type: ignore[no-untyped-def]
        calls.append("frr-reload")
        return real_reload(*a, **k)

    def spy_exec(node, argv, **k):  # type: ignore[no-untyped-def]
        calls.append(" ".join(argv[:2]))
        return real_exec(node, argv, **k)

    monkeypatch.setattr(device_state, "frr_reload", spy_reload)
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


def test_in_place_edits_are_canonicalised_or_refused(lab, e1):
    """A model changed in place (not validated by pydantic) applies like the same model built
    afresh; one the edits made invalid is refused before anything is changed."""
    want = e1.model_copy(deep=True)
    want.static_routes.insert(0, StaticRoute(prefix="203.0.113.0/24", nexthop="blackhole"))
    want.static_routes.insert(0, StaticRoute(prefix="192.0.2.1/32", nexthop="blackhole"))
    assert apply(lab, R, want).changed and read(lab, R) == want.canonical()
    before = lab.running_config(R)
    want.static_routes.append(StaticRoute(prefix="192.0.2.1/32", nexthop="blackhole"))  # twice
    with pytest.raises(ApplyError, match="not valid; nothing applied.*duplicate static route") as err:
        apply(lab, R, want)
    assert err.value.restored is True and lab.running_config(R) == before


def test_firewall_removed_and_back(lab, e1):
    apply(lab, R, e1.model_copy(update={"firewall": None}))
    assert read(lab, R).firewall is None
    assert "table inet fw" not in lab.exec(R, ["nft", "list", "ruleset"]).stdout


def test_write_startup_only_when_asked(lab, e1):
    want = changed(e1, lambda m: m.prefix_lists["PL-TENANTS"].entries.pop())
    apply(lab, R, want, write_startup=True)
    text = (frr.etc_dir(lab.pathspace(R)) / "frr.conf").read_text()
    assert "seq 10 permit 198.18.11.0/24" in text and "seq 20" not in text


def test_route_map_delay_timer_5_applies_and_reads_back_equal(lab, e1):
    """5 is FRR 8.4's default and FRR never prints it: the model holds it as None, so intending
    5 (from e1's 1) applies (``no bgp route-map delay-timer``) and verifies; 0 is printed."""
    assert e1.bgp_route_map_delay_timer == 1
    five = changed(e1, lambda m: setattr(m, "bgp_route_map_delay_timer", 5))
    assert five.bgp_route_map_delay_timer is None
    report = apply(lab, R, five)
    assert report.diff == ["- bgp route-map delay-timer 1"]
    assert read(lab, R) == five
    assert "delay-timer" not in lab.running_config(R)
    zero = changed(e1, lambda m: setattr(m, "bgp_route_map_delay_timer", 0))
    apply(lab, R, zero)
    assert "bgp route-map delay-timer 0" in lab.running_config(R).splitlines()
    assert read(lab, R) == zero


def test_coalesce_time_added_changed_and_removed(lab, e1):
    """``coalesce-time`` is printed right after ``bgp router-id`` (before ``timers bgp``), a
    configured 1000 (bgpd's initial value) too; removing it (``no coalesce-time N``) leaves no line.
    The generated brownfield carries ``coalesce-time 0`` (issue 24 §3), so the edge starts with it."""
    assert e1.bgp.coalesce_time == 0
    sessions = bgp_sessions(lab)
    for value in (50, 1000, 0):
        want = changed(e1, lambda m, v=value: setattr(m.bgp, "coalesce_time", v))
        apply(lab, R, want)
        assert read(lab, R) == want
        lines = lab.running_config(R).splitlines()
        i = lines.index(f" coalesce-time {value}")
        assert lines[i - 1].startswith(" bgp router-id ") and lines[i + 1].startswith(" timers bgp ")
    gone = changed(e1, lambda m: setattr(m.bgp, "coalesce_time", None))
    apply(lab, R, gone)
    assert read(lab, R) == gone and "coalesce-time" not in lab.running_config(R)
    apply(lab, R, e1)
    assert " coalesce-time 0" in lab.running_config(R).splitlines()
    assert {a: s[0] for a, s in bgp_sessions(lab).items()} == {a: s[0] for a, s in sessions.items()}


def test_firewall_set_names_at_the_edge_of_what_nft_accepts(lab, e1):
    """Names the model accepts although they look like keywords (another case, a prefix, dots and
    dashes) really apply and read back."""
    names = ["DROP", "_x.y-z", "saddr", "Ip"]

    def edit(m: DeviceConfig) -> None:
        for n in names:
            m.firewall.sets[n] = FirewallSet(elements=[IPv4Network("192.0.2.0/24")])
        m.firewall.forward_rules.append(FirewallRule(saddr_set="DROP", daddr_set="_x.y-z", action="drop"))

    want = changed(e1, edit)
    apply(lab, R, want)
    assert read(lab, R) == want


def test_nft_refuses_exactly_the_keywords(lab, e1):
    """Re-measures ``ani.device.nft_names`` on the lab's nft (``nft -c``: checked, nothing
    applied) with the script ``replace_script`` writes: each listed keyword is refused as a set
    name, and so is a leading digit; the same words in upper case and parser words that are not
    keywords in that place are accepted."""
    from ani.device.firewall import replace_script
    from ani.device.nft_names import NFT_KEYWORDS

    def script(*names: str) -> str:  # the model cannot hold these names: substitute them
        marks = [f"PLACEHOLDER{i:04d}X" for i in range(len(names))]
        fw = Firewall(sets={m: FirewallSet(elements=[IPv4Network("192.0.2.0/24")]) for m in marks},
                      forward_rules=[FirewallRule(saddr_set=m, action="drop") for m in marks])
        text = replace_script(fw)
        for mark, name in zip(marks, names):
            text = text.replace(mark, name)
        return text

    def nft_ok(text: str) -> bool:
        return lab.exec(R, ["nft", "-c", "-f", "-"], input=text).ok

    accepted = [w.upper() for w in sorted(NFT_KEYWORDS)] + ["saddr", "daddr", "state", "name", "with", "to", "_x.y-z"]
    assert nft_ok(script(*accepted))
    assert [w for w in sorted(NFT_KEYWORDS) if nft_ok(script(w))] == []  # all refused
    assert not nft_ok(script("9net")) and not nft_ok(script("0abc"))
    assert read(lab, R) == e1  # -c applied nothing


def test_tri_topology_with_coalesce_time_is_managed_over_netconf(make_lab):
    """tests/data/tri-ospf-ibgp.yaml has ``coalesce-time 50`` under router bgp: now modelled, its
    routers read with no unmodelled line and a NETCONF commit applies (it used to be refused)."""
    from ncclient import manager

    tri = make_lab(Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml", lab_id="h2t" + secrets.token_hex(3),
                   netconf=True)  # the module lab has none (LAB_NETCONF); this test commits over NETCONF
    m = read(tri, "r1")
    assert m.unmodelled == [] and m.bgp.coalesce_time == 50
    ep = tri.netconf_endpoint("r1")
    ns = "urn:ani:yang:ani-frr"
    with manager.connect(host=ep.host, port=ep.port, username=ep.username, password=ep.password,
                         hostkey_verify=False, allow_agent=False, look_for_keys=False, timeout=30) as nc:
        got = nc.get_config(source="running", filter=("subtree", f'<frr xmlns="{ns}"><bgp/></frr>')).data_ele
        assert got.findtext(f".//{{{ns}}}coalesce-time") == "50"
        nc.edit_config(target="candidate", config=(
            f'<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><frr xmlns="{ns}"><static-route>'
            "<prefix>192.0.2.0/24</prefix><next-hop>blackhole</next-hop></static-route></frr></config>"))
        nc.commit()
    lines = tri.running_config("r1").splitlines()
    assert "ip route 192.0.2.0/24 blackhole" in lines and " coalesce-time 50" in lines
    assert read(tri, "r1") == changed(m, lambda c: c.static_routes.append(
        StaticRoute(prefix="192.0.2.0/24", nexthop="blackhole")))


def test_docs_example_runs(make_lab, run_doc_example):
    """docs/device-model.md's apply example runs as written (its own a0_two lab) and prints what
    its comments say."""
    del make_lab  # only for its capability check
    out = run_doc_example("device-model.md", "device-apply").splitlines()
    assert out == [
        "[]",
        "True ['+ ip route 192.0.2.0/24 blackhole', '+ router bgp 64501 / coalesce-time 50']",
        "False",
        "True ['+ ip route 192.0.2.0/24 10.1.12.2']",
        "True",
        "True",
        "True ['ip prefix-list PL description by hand']",
    ]



def test_docs_parse_example_runs(make_lab, run_doc_example):
    """docs/device-model.md's first example runs as pasted: it makes its own lab, the parse of
    e1's running config renders back to the same text (its assert) and nothing is unmodelled."""
    del make_lab  # only for its capability check
    assert run_doc_example("device-model.md", "device-parse").splitlines() == ["[]"]


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
