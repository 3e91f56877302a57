"""ani.intents.checks.active_checks on the shipped brownfield (no lab: configs from the scenario)."""

from __future__ import annotations

from ipaddress import IPv4Address
from pathlib import Path

import pytest

from ani.intents import Pools, network_configs, plan
from ani.intents.checks import active_checks, baseline_checks, site_hosts, touched_tenants
from ani.observer.checks import BgpSessionCheck, LoopbackCheck, ReachCheck, RouteCheck
from ani.scenario import get_task_class
from ani.scenario.invariants import baseline_invariants
from ani.scenario.manifest import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")


@pytest.fixture(scope="module")
def configs(scenario):
    return network_configs(scenario)


def _concerns(check, tenants: set[str], routers: set[str], hosts: dict[str, str], loops: dict) -> bool:
    """Whether a baseline invariant of the scenario concerns the tenants / routers (the subset
    active_checks must derive)."""
    if isinstance(check, ReachCheck):
        return hosts[check.src] in tenants or hosts[check.dst_node] in tenants
    if isinstance(check, RouteCheck):  # a site's prefix on a route reflector: its tenant's
        return check.service.removeprefix("tenant:") in tenants
    by_addr = {ip: r for r, ip in loops.items()}
    if isinstance(check, BgpSessionCheck):
        return check.router in routers or by_addr[check.neighbor] in routers
    assert isinstance(check, LoopbackCheck)
    return check.router in routers or by_addr[check.address] in routers


def _hosts(scenario) -> dict[str, str]:
    return {s.host: t for t, s in scenario.sites}


def test_site_hosts_are_the_scenarios_sites_in_order(scenario, configs):
    got = [(s.tenant, s.host, s.address, s.prefix, s.edge) for s in site_hosts(configs, scenario.topology)]
    want = [(t, s.host, scenario.host_address(s.host), s.prefix, s.edge) for t, s in scenario.sites]
    assert got == want and len(got) == 8


def test_static_route_over_a_blue_prefix_on_a_core_router(scenario, configs):
    """c1 carries no site: the only tenant touched is blue, whose blue2 prefix the route covers.
    The derived baseline checks are exactly the scenario's invariants about blue (reach pairs,
    isolation pairs with blue) and c1 (its BGP sessions, loopback pairs with c1), in the same order."""
    change = {"type": "static-route", "action": "add", "router": "c1", "prefix": "198.18.12.0/24",
              "next_hop": "blackhole"}
    result = plan([change], configs)
    assert result.routers == ["c1"]
    got = active_checks([change], configs, result, scenario.topology)
    want = [c for c in baseline_invariants(scenario)
            if _concerns(c, {"blue"}, {"c1"}, _hosts(scenario), scenario.loopbacks())]
    assert got == want
    # what that subset is, spelled out: 6 blue pairs, 16 blue-red pairs, no red-red pair
    reach = [c for c in got if isinstance(c, ReachCheck)]
    assert [c.service for c in reach].count("tenant:blue") == 6
    assert [c.service for c in reach].count("isolation") == 16
    assert not any(c.service == "tenant:red" for c in reach)
    assert {(c.router, str(c.neighbor)) for c in got if isinstance(c, BgpSessionCheck)} == {
        ("c1", "100.64.255.11"), ("c1", "100.64.255.12"), ("c1", "100.64.255.13"), ("c1", "100.64.255.14"),
        ("e1", "100.64.255.1"), ("e2", "100.64.255.1"), ("e3", "100.64.255.1"), ("e4", "100.64.255.1")}
    assert len([c for c in got if isinstance(c, LoopbackCheck)]) == 10  # c1 -> 5 others, 5 others -> c1


def test_onboarding_checks_the_new_site_and_every_touched_baseline(scenario, configs):
    """blue onboards nsite on e1 (the onboard-site task's lab, where nsite is a host): e1..e4
    change (the blue set is on every edge), so both tenants are touched. The service's own checks
    are the task's hidden tests; the rest is every baseline invariant but the c1 <-> c2 loopbacks."""
    variant = get_task_class("onboard-site").variant(scenario, 0)
    topo = variant.lab_topology(scenario)
    p = variant.params
    change = {"type": "tenant-site", "action": "onboard", "tenant": p["tenant"], "site": p["site"],
              "edge": p["edge"], "prefix": p["prefix"], "gateway": p["gateway"]}
    result = plan([change], configs, pools=Pools.for_scenario(scenario, configs))
    assert result.routers == ["e1", "e2", "e3", "e4"]
    got = active_checks([change], configs, result, topo)
    own = [c for c in got if c.service == "tenant-site/blue/nsite"]
    hidden = [(c.name, c.src, c.dst, c.expect) for c in variant.hidden_tests]
    assert [(c.name, c.src, c.dst, c.expect) for c in own[: len(hidden)]] == hidden
    # then the tenant's other edges reach the new gateway (the prefix was carried there)
    assert [c.name for c in own[len(hidden):]] == [f"reach {e} -> e1 ({p['gateway']})" for e in ("e2", "e3", "e4")]
    assert got[: len(own)] == own
    cores = {scenario.loopbacks()["c1"], scenario.loopbacks()["c2"]}
    base = [c for c in baseline_invariants(scenario)
            if not (isinstance(c, LoopbackCheck) and c.router in ("c1", "c2") and c.address in cores)]
    assert got[len(own):] == base
    assert len(base) == len(baseline_invariants(scenario)) - 2
    assert active_checks([change], configs, result, topo) == got  # deterministic
    assert all(c.service for c in got)


def test_onboarding_without_a_host_in_the_topology_checks_the_gateway_only(scenario, configs):
    change = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2",
              "prefix": "198.19.7.0/24"}
    result = plan([change], configs)
    got = active_checks([change], configs, result, scenario.topology)
    own = [c for c in got if c.service == "tenant-site/blue/nsite"]
    assert [(c.src, str(c.dst), c.expect) for c in own] == [(e, "198.19.7.1", True) for e in ("e1", "e3", "e4")]
    assert len(got) == len(own) + len(baseline_invariants(scenario)) - 2


def test_a_removed_site_is_not_an_existing_site(scenario, configs):
    change = {"type": "tenant-site", "action": "remove", "tenant": "red", "site": "red3"}
    result = plan([change], configs)
    got = active_checks([change], configs, result, scenario.topology)
    hosts = {c.src for c in got if isinstance(c, ReachCheck)} | {c.dst_node for c in got if isinstance(c, ReachCheck)}
    assert "red3" not in hosts and {"red1", "red2", "red4", "blue1"} <= hosts


def test_touched_tenants(scenario, configs):
    from ani.intents.models import parse_changes

    def touched(change):
        result = plan([change], configs)
        return touched_tenants(parse_changes([change]), configs, {**configs, **result.configs}, result.routers)

    # a floating address on a core router whose network covers red1..red3's prefixes
    assert touched({"type": "floating-address", "action": "add", "address": "198.18.20.1/22", "router": "c2"}) == ["red"]
    # a static route on a core router over nothing of a tenant
    assert touched({"type": "static-route", "action": "add", "router": "c2", "prefix": "203.0.113.0/24",
                    "next_hop": "blackhole"}) == []
    # any change on an edge touches the tenants whose sites it carries
    assert touched({"type": "static-route", "action": "add", "router": "e3", "prefix": "203.0.113.0/24",
                    "next_hop": "blackhole"}) == ["blue", "red"]


def test_baseline_checks_unrestricted_equal_the_scenarios_invariants(scenario, configs):
    got = baseline_checks(configs, scenario.topology)
    want = baseline_invariants(scenario)
    # same checks; BGP sessions may come in another order (live configs order neighbors canonically)
    assert sorted(c.name for c in got) == sorted(c.name for c in want)
    assert [c for c in got if not isinstance(c, BgpSessionCheck)] == [c for c in want if not isinstance(c, BgpSessionCheck)]
    assert {c.neighbor for c in got if isinstance(c, BgpSessionCheck)} >= {IPv4Address("100.64.255.1")}
