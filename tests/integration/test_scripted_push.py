"""The scripted agent's device-level push (``ani.agents.scripted_push``) on real FRR at A0, A1
and A2: a multi-router change on brownfield-small, then a second one that removes and modifies,
each verified out of band (the device layer's own read equals the intended configuration) with
every baseline invariant passing and the new sites' routes carried by BGP.

Every case is its own lab: they run three at a time in the module's first test
(:mod:`side_by_side`, issue 28 §4), each test taking its own case's outcome.
"""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network

import pytest
from side_by_side import outcome, side_by_side, with_labs

from ani.agents.base import Budget, StepCounter
from ani.agents.scripted import AgentFailed
from ani.agents.scripted_push import push_configs, read_configs
from ani.device.apply import mismatch, read
from ani.device.model import (
    FirewallRule,
    OspfNetwork,
    Peer,
    PrefixList,
    PrefixListEntry,
    RouteMap,
    RouteMapEntry,
    StaticRoute,
)
from ani.observer import Observer, summarize
from ani.observer.checks import RouteCheck
from ani.registry import create_adapter
from ani.scenario import load_scenario

pytestmark = pytest.mark.integration

SCENARIO = "scenarios/brownfield-small.yaml"
ROUTERS = ["c1", "c2", "e1", "e2", "e3", "e4"]
#: new sites: (edge, interface carrying the gateway, prefix, gateway)
SITES = [("e1", "to-blue1", "198.19.4.0/24", "198.19.4.1"),
         ("e2", "to-blue2", "198.19.5.0/24", "198.19.5.1"),
         ("e3", "to-blue3", "198.19.6.0/24", "198.19.6.1")]
EXTRA_RULE = FirewallRule(saddr_set="tenant_blue", daddr_set="tenant_blue", action="accept")


def _add_site(want, edge, ifname, prefix, gateway):
    pl = want[edge].prefix_lists["PL-TENANTS"]
    pl.entries.append(PrefixListEntry(seq=max(e.seq for e in pl.entries) + 10, action="permit", prefix=prefix))
    want[edge].interfaces[ifname].addresses.append(IPv4Interface(f"{gateway}/{prefix.split('/')[1]}"))
    for cfg in want.values():
        if cfg.firewall is not None:
            cfg.firewall.sets["tenant_blue"].elements.append(IPv4Network(prefix))


def _remove_site(want, edge, ifname, prefix, gateway):
    pl = want[edge].prefix_lists["PL-TENANTS"]
    pl.entries = [e for e in pl.entries if str(e.prefix) != prefix]
    iface = want[edge].interfaces[ifname]
    iface.addresses = [a for a in iface.addresses if str(a) != f"{gateway}/{prefix.split('/')[1]}"]
    for cfg in want.values():
        if cfg.firewall is not None:
            s = cfg.firewall.sets["tenant_blue"]
            s.elements = [e for e in s.elements if str(e) != prefix]


def _copy(configs):
    return {r: c.model_copy(deep=True) for r, c in configs.items()}


def _holds(lab, want):
    for r, cfg in want.items():
        got = read(lab, r)
        expected = cfg.canonical()
        assert got == expected, f"{r}: {mismatch(got, expected)}"


PUSH_LEVELS = ["a0", "a1", "a2"]
FAILED_LEVELS = ["a0", "a1"]


@pytest.fixture(scope="module")
def cases():
    """``{(case, level): outcome}``, the cases three at a time (A2's push, the longest, first)."""
    return side_by_side({
        **{("push", level): with_labs(_push_multi_router_change, level) for level in reversed(PUSH_LEVELS)},
        **{("failed", level): with_labs(_failed_push_puts_the_routers_back, level) for level in FAILED_LEVELS},
    })


@pytest.mark.timeout(1200)  # the module's cases, three at a time, in the first test's setup
@pytest.mark.parametrize("level", PUSH_LEVELS)
def test_push_multi_router_change(cases, level):
    outcome(cases, ("push", level))


@pytest.mark.timeout(1200)  # as above
@pytest.mark.parametrize("level", FAILED_LEVELS)
def test_failed_push_puts_the_routers_back(cases, level):
    outcome(cases, ("failed", level))


def _push_multi_router_change(make_lab, level):
    scenario = load_scenario(SCENARIO)
    lab = make_lab(scenario.topology, netconf=level == "a2")
    observer = Observer(lab)
    assert all(r.passed for r in observer.evaluate(scenario.invariants, bound_s=20.0))

    adapter = create_adapter(level, lab)
    adapter.open()
    try:
        steps = StepCounter(adapter, Budget(max_steps=200, wall_clock_s=240))
        tools = {t.name for t in adapter.tools()}
        cur = read_configs(steps, tools, ROUTERS)
        assert set(cur) == set(ROUTERS) and cur["e1"].firewall is not None
        assert cur == {r: read(lab, r).model_copy(update={"unmodelled": []} if level == "a2" else {})
                       for r in ROUTERS}

        # 1: three new sites on three edges (entry + address + set element everywhere), plus
        # state no invariant watches: a static route, a prefix-list, a route-map, a BGP
        # neighbor that never comes up, an interface description, a rule appended to forward
        want = _copy(cur)
        for site in SITES:
            _add_site(want, *site)
        e4 = want["e4"]
        e4.static_routes.append(StaticRoute(prefix="192.0.2.0/24", nexthop="Null0", distance=200))
        e4.prefix_lists["PL-TEST"] = PrefixList(entries=[PrefixListEntry(seq=5, action="deny", prefix="192.0.2.0/24")])
        e4.route_maps["RM-TEST"] = RouteMap(entries=[RouteMapEntry(seq=10, action="permit", match_prefix_list="PL-TEST",
                                                                   set_local_preference=50)])
        e4.bgp.neighbors["192.0.2.9"] = Peer(remote_as=64999, description="test peer")
        e4.interfaces["to-red4"].description = "red site 4"
        e4.firewall.forward_rules.append(EXTRA_RULE)
        push_configs(steps, tools, cur, want)
        _holds(lab, want)
        routes = [RouteCheck(router="e4", prefix=p) for _e, _i, p, _g in SITES]
        results = observer.evaluate([*scenario.invariants, *routes], bound_s=20.0)
        assert all(r.passed for r in results), summarize(results)

        # 2: remove one site, change and remove the rest of the test state
        cur2 = read_configs(steps, tools, ROUTERS)
        want2 = _copy(cur2)
        _remove_site(want2, *SITES[2])
        e4 = want2["e4"]
        e4.static_routes = [r for r in e4.static_routes if str(r.prefix) != "192.0.2.0/24"]
        e4.route_maps["RM-TEST"].entries[0].set_local_preference = 70
        e4.prefix_lists["PL-TEST"].entries[0].prefix = IPv4Network("192.0.2.0/25")
        del e4.bgp.neighbors["192.0.2.9"]
        e4.interfaces["to-red4"].description = None
        e4.firewall.forward_rules.remove(EXTRA_RULE)
        push_configs(steps, tools, cur2, want2)
        _holds(lab, want2)
        gone = RouteCheck(router="e4", prefix=SITES[2][2], expect=False)
        results = observer.evaluate([*scenario.invariants, gone], bound_s=20.0)
        assert all(r.passed for r in results), summarize(results)

        # nothing left to do: no tool call at all
        again = read_configs(steps, tools, ROUTERS)
        n = steps.steps
        push_configs(steps, tools, again, want2)
        assert steps.steps == n
    finally:
        adapter.close()
    errors = [(c["tool"], c["summary"]) for c in adapter.trajectory.calls if not c["ok"]]
    assert errors == []


def _failed_push_puts_the_routers_back(make_lab, level):
    """e1's change is fine, e2's is one FRR refuses (an OSPF ``network`` statement beside the
    interface areas: "Please remove all ip ospf area x.x.x.x commands first"; the model takes
    it): the push fails naming e2 and what differs, and both routers run what they ran before.
    (A0: vtysh exits 1, its words are quoted; A1's update_config reports success, FRR's message
    having no '%': the read-back finds the line missing.) At A1 a set the allowlist cannot create fails the same way, naming the
    command."""
    scenario = load_scenario(SCENARIO)
    lab = make_lab(scenario.topology, netconf=False)
    adapter = create_adapter(level, lab)
    adapter.open()
    try:
        steps = StepCounter(adapter, Budget(max_steps=60))
        tools = {t.name for t in adapter.tools()}
        cur = read_configs(steps, tools, ["e1", "e2"])
        want = _copy(cur)
        _add_site(want, *SITES[0])
        want["e2"].ospf.networks.append(OspfNetwork(prefix="198.19.9.0/24", area="0"))
        fails = r"e2 does not hold its intended configuration .*\+ router ospf / network 198.19.9.0/24 area 0"
        if level == "a0":  # vtysh's words, quoted
            fails += r"; the change on e2 exited non-zero: .*Please remove all ip ospf area"
        with pytest.raises(AgentFailed, match=fails + r".*; put back as before: e1, e2$"):
            push_configs(steps, tools, cur, want)
        for r in ("e1", "e2"):
            assert read(lab, r) == cur[r], mismatch(read(lab, r), cur[r])
        if level == "a1":
            want = _copy(cur)
            _add_site(want, *SITES[0])
            want["e1"].firewall.sets["tenant_green"] = want["e1"].firewall.sets["tenant_blue"].model_copy(
                update={"elements": [IPv4Network("198.19.9.0/24")]})
            with pytest.raises(AgentFailed, match=r"update_config on e1: .*nft add set inet fw tenant_green"):
                push_configs(steps, tools, cur, want)
            assert read(lab, "e1") == cur["e1"]
    finally:
        adapter.close()
