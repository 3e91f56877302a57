"""ani.intents on the real brownfield-small scenario (parsed, no lab): inventory, pools,
compile and validation."""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network

import pytest

from ani.device.model import FirewallSet, PrefixList, PrefixListEntry
from ani.intents import (
    IntentError,
    Inventory,
    PoolExhausted,
    Pools,
    compile_changes,
    network_configs,
    plan,
    validate_changes,
)
from ani.intents.pools import NamePool, PrefixPool, SeqPool
from ani.scenario.manifest import load_scenario
from ani.scenario.tasks import get_task_class

EDGES = ["e1", "e2", "e3", "e4"]


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("scenarios/brownfield-small.yaml")


@pytest.fixture()
def configs(scenario):
    return network_configs(scenario)


@pytest.fixture()
def pools(scenario, configs):
    return Pools.for_scenario(scenario, configs)


def onboard(**kw):
    return {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2", **kw}


# -- inventory -----------------------------------------------------------------------------------


def test_inventory_finds_the_eight_sites(scenario, configs):
    inv = Inventory(configs)
    sites = inv.list_services("tenant-site")
    assert [s.id for s in sites] == [f"tenant-site/{t}/{t}{i}" for t in ("blue", "red") for i in range(1, 5)]
    for tenant, site in scenario.sites:
        s = inv.get_service(f"tenant-site/{tenant}/{site.host}")
        assert (s.spec.edge, s.spec.prefix, s.spec.gateway, s.spec.interface) == (
            site.edge, site.prefix, site.gateway, f"to-{site.host}")
        assert s.routers == [site.edge]


def test_inventory_firewall_and_shared_lists(configs):
    inv = Inventory(configs)
    blue = inv.get_service("tenant-firewall/blue")
    assert blue.spec.isolate_from == ["red"] and blue.routers == EDGES
    assert inv.get_service("tenant-firewall/red").spec.isolate_from == ["blue"]
    rm = inv.get_service("route-map-entry/RM-TENANTS-OUT/10")
    assert rm.routers == EDGES and rm.spec.match_prefix_list == "PL-TENANTS"
    pl = inv.get_service("prefix-list-entry/PL-TENANTS/198.18.12.0/24")
    assert pl.routers == ["e2"] and pl.spec.seq == 10
    assert inv.get_service("bgp-peering/e1/100.64.255.1").spec.peer_group == "RR"
    assert inv.get_service("nope") is None
    assert inv.tenants() == ["blue", "red"]
    assert inv.get_service("tenant-site/blue/blue2").to_dict()["spec"]["prefix"] == "198.18.12.0/24"


def test_network_configs_do_not_share_state(scenario):
    a = network_configs(scenario)
    a["e1"].firewall.sets.clear()
    assert network_configs(scenario)["e1"].firewall.sets


# -- onboarding (vs the scripted agent) ----------------------------------------------------------------


def scripted_expectation(configs, tenant, edge, ifname, prefix, gateway):
    """What the scripted agent changes at A1/A2: a PL-TENANTS entry at max seq + 10 on the edge,
    the gateway address on the edge interface, the prefix in tenant_<t> on every router with it."""
    exp = {r: c.model_copy(deep=True) for r, c in configs.items()}
    e = exp[edge]
    entries = e.prefix_lists["PL-TENANTS"].entries
    seq = max(x.seq for x in entries) + 10
    e.prefix_lists["PL-TENANTS"] = PrefixList(entries=[*entries, PrefixListEntry(seq=seq, action="permit", prefix=prefix)])
    from ani.device.model import Interface

    e.interfaces[ifname] = Interface(addresses=[IPv4Interface(f"{gateway}/{prefix.prefixlen}")])
    for c in exp.values():
        if c.firewall is not None and f"tenant_{tenant}" in c.firewall.sets:
            s = c.firewall.sets[f"tenant_{tenant}"]
            c.firewall.sets[f"tenant_{tenant}"] = FirewallSet(elements=[*s.elements, prefix])
    return {r: c.canonical() for r, c in exp.items() if c.canonical() != configs[r]}


def test_onboard_blue_on_e2_exact_changes(configs, pools):
    res = plan([onboard(prefix="198.19.7.0/24")], configs, pools=pools)
    assert res.routers == EDGES  # the edge, and every router with set tenant_blue
    e2 = res.configs["e2"]
    assert [(x.seq, str(x.prefix)) for x in e2.prefix_lists["PL-TENANTS"].entries] == [
        (10, "198.18.12.0/24"), (20, "198.18.22.0/24"), (30, "198.19.7.0/24")]
    assert e2.interfaces["to-nsite"].addresses == [IPv4Interface("198.19.7.1/24")]
    for r in EDGES:
        assert IPv4Network("198.19.7.0/24") in res.configs[r].firewall.sets["tenant_blue"].elements
        assert IPv4Network("198.19.7.0/24") not in res.configs[r].firewall.sets["tenant_red"].elements
    for r in ("e1", "e3", "e4"):  # nothing else changes on the other edges
        other = res.configs[r].model_copy(deep=True)
        other.firewall = configs[r].firewall
        assert other == configs[r]
    assert res.configs == scripted_expectation(configs, "blue", "e2", "to-nsite", IPv4Network("198.19.7.0/24"),
                                               IPv4Network("198.19.7.0/24")[1])
    assert res.allocations == {"changes.0.gateway": "198.19.7.1", "changes.0.seq/e2/PL-TENANTS": 30}
    assert configs == network_configs_of(configs)  # input untouched


def network_configs_of(configs):
    return {r: c.model_copy(deep=True) for r, c in configs.items()}


@pytest.mark.parametrize("seed", range(6))
def test_onboard_matches_scripted_agent_for_task_variants(scenario, configs, pools, seed):
    p = get_task_class("onboard-site").variant(scenario, seed).params
    change = {"type": "tenant-site", "action": "onboard", "tenant": p["tenant"], "site": p["site"],
              "edge": p["edge"], "interface": p["edge_ifname"], "prefix": p["prefix"], "gateway": p["gateway"]}
    res = plan([change], configs, pools=pools)
    assert res.configs == scripted_expectation(configs, p["tenant"], p["edge"], p["edge_ifname"],
                                               IPv4Network(p["prefix"]), IPv4Network(p["prefix"])[1])
    assert validate_changes([change], configs) == []


def test_onboard_allocates_prefix_gateway_and_interface(configs, pools):
    res = plan([onboard()], configs, pools=pools)
    assert res.allocations["changes.0.prefix"] == "198.19.0.0/24"
    assert res.changes[0].interface == "to-nsite" and str(res.changes[0].gateway) == "198.19.0.1"
    # a second site in the same compile gets the next prefix and the next seq
    res = compile_changes([onboard(), onboard(site="nsite2", tenant="red")], configs,
                          pools=Pools.from_configs(configs, site_network=IPv4Network("198.19.0.0/16")))
    e2 = res.configs["e2"]
    assert [(x.seq, str(x.prefix)) for x in e2.prefix_lists["PL-TENANTS"].entries][-2:] == [
        (30, "198.19.0.0/24"), (40, "198.19.1.0/24")]
    assert IPv4Network("198.19.1.0/24") in e2.firewall.sets["tenant_red"].elements


def test_compile_is_deterministic(scenario, configs):
    changes = [onboard(), onboard(site="x2", edge="e3", tenant="red"),
               {"type": "tenant-site", "action": "remove", "tenant": "blue", "site": "blue1"}]
    a = compile_changes(changes, configs, pools=Pools.for_scenario(scenario, configs))
    b = compile_changes(changes, network_configs(scenario), pools=Pools.for_scenario(scenario, network_configs(scenario)))
    assert a.configs == b.configs and a.allocations == b.allocations
    assert [c.model_dump_json() for c in a.configs.values()] == [c.model_dump_json() for c in b.configs.values()]


# -- remove / move ----------------------------------------------------------------------------------


def test_remove_existing_site(configs):
    res = plan([{"type": "tenant-site", "action": "remove", "tenant": "red", "site": "red3"}], configs)
    assert res.routers == EDGES
    e3 = res.configs["e3"]
    assert [str(x.prefix) for x in e3.prefix_lists["PL-TENANTS"].entries] == ["198.18.13.0/24"]
    assert "to-red3" not in e3.interfaces  # no address left: FRR does not print it
    for r in EDGES:
        assert IPv4Network("198.18.23.0/24") not in res.configs[r].firewall.sets["tenant_red"].elements
    assert Inventory({**configs, **res.configs}).get_service("tenant-site/red/red3") is None


def test_remove_unknown_site_refused(configs):
    with pytest.raises(IntentError) as ei:
        plan([{"type": "tenant-site", "action": "remove", "tenant": "red", "site": "red9"}], configs)
    assert ei.value.code == "service-not-found" and "tenant-site/red/red9" in ei.value.message


def test_move_site_to_another_edge(configs):
    res = plan([{"type": "tenant-site", "action": "move", "tenant": "blue", "site": "blue1", "edge": "e3"}], configs)
    assert res.routers == ["e1", "e3"]  # set membership unchanged: no other router touched
    assert "to-blue1" not in res.configs["e1"].interfaces
    assert [str(x.prefix) for x in res.configs["e1"].prefix_lists["PL-TENANTS"].entries] == ["198.18.21.0/24"]
    e3 = res.configs["e3"]
    assert e3.interfaces["to-blue1"].addresses == [IPv4Interface("198.18.11.1/24")]
    assert [(x.seq, str(x.prefix)) for x in e3.prefix_lists["PL-TENANTS"].entries][-1] == (30, "198.18.11.0/24")
    moved = Inventory({**configs, **res.configs}).get_service("tenant-site/blue/blue1")
    assert moved.spec.edge == "e3"


# -- conflicts and references --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "code", "path", "needle"),
    [
        (onboard(prefix="198.18.12.0/24"), "prefix-overlap", "changes.0.prefix", "tenant-site/blue/blue2"),
        (onboard(prefix="198.18.20.0/22"), "prefix-overlap", "changes.0.prefix", "tenant-site/red/red1"),
        (onboard(prefix="100.64.1.0/24"), "prefix-overlap", "changes.0.prefix", "interface to-e1"),
        (onboard(site="blue2"), "service-exists", "changes.0", "tenant-site/blue/blue2"),
        (onboard(tenant="green"), "unknown-reference", "changes.0.tenant", "tenant_green"),
        (onboard(edge="e9"), "unknown-router", "changes.0.edge", "e9"),
        (onboard(edge="c1"), "unknown-reference", "changes.0.edge", "c1"),
        (onboard(interface="to-red2", prefix="198.19.3.0/24"), "address-conflict", "changes.0.interface", "198.18.22.1/24"),
        (onboard(prefix="198.19.3.0/24", gateway="198.19.4.1"), "invalid", "changes.0.gateway", "198.19.4.1"),
        (onboard(prefix="198.19.3.7/32"), "invalid", "changes.0.prefix", "no room for a gateway and a host"),
        ({"type": "prefix-list-entry", "action": "add", "routers": ["e2"], "name": "PL-TENANTS", "seq": 20,
          "prefix": "198.19.9.0/24"}, "seq-conflict", "changes.0.seq", "tenant red"),
        ({"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65001,
          "route_map_in": "RM-UNDEF"}, "unknown-reference", "changes.0.route_map_in", "RM-UNDEF"),
        ({"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "peer_group": "NOPE"},
         "unknown-reference", "changes.0.peer_group", "NOPE"),
        ({"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "100.64.255.1", "remote_as": 64500},
         "service-exists", "changes.0.neighbor", "bgp-peering/e1/100.64.255.1"),
        ({"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-X", "seq": 10,
          "match_prefix_list": "PL-UNDEF"}, "unknown-reference", "changes.0.match_prefix_list", "PL-UNDEF"),
        ({"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
          "next_hop": "100.64.1.1"}, "nexthop-self", "changes.0.next_hop", "100.64.1.1"),
        ({"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
          "next_hop": "eth9"}, "unknown-reference", "changes.0.next_hop", "eth9"),
        ({"type": "tenant-firewall", "action": "apply", "tenant": "blue", "isolate_from": ["green"]},
         "unknown-reference", "changes.0.isolate_from.0", "green"),
        ({"type": "tenant-site", "action": "onboard", "tenant": "blue"}, "schema", "changes.0.site", "required"),
        ({"type": "tenant-site", "action": "fly", "tenant": "blue", "site": "x"}, "schema", "changes.0", "tenant-site/fly"),
    ],
)
def test_refused_naming_the_culprit(configs, change, code, path, needle):
    errors = validate_changes([change], configs)
    assert len(errors) == 1
    err = errors[0]
    assert (err.code, err.path) == (code, path), err
    assert needle in err.message, err.message


def test_a_later_change_is_checked_against_the_earlier_ones(configs):
    changes = [onboard(prefix="198.19.5.0/24"), onboard(site="other", tenant="red", prefix="198.19.5.128/25")]
    [err] = validate_changes(changes, configs)
    assert (err.code, err.path) == ("prefix-overlap", "changes.1.prefix") and "tenant-site/blue/nsite" in err.message


def test_route_map_added_with_its_prefix_list_in_one_change_set(configs):
    changes = [
        {"type": "prefix-list-entry", "action": "add", "routers": ["e1"], "name": "PL-PEER", "prefix": "192.0.2.0/24"},
        {"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-PEER-IN", "seq": 10,
         "match_prefix_list": "PL-PEER", "set_local_preference": 200},
        {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65001,
         "route_map_in": "RM-PEER-IN"},
    ]
    res = plan(changes, configs)
    e1 = res.configs["e1"]
    assert res.routers == ["e1"] and res.allocations["changes.0.seq"] == 10
    assert e1.bgp.ipv4_unicast.peers["192.0.2.9"].route_map_in == "RM-PEER-IN"
    assert e1.route_maps["RM-PEER-IN"].entries[0].set_local_preference == 200
    after = Inventory({**configs, **res.configs})
    assert after.get_service("bgp-peering/e1/192.0.2.9").spec.route_map_in == "RM-PEER-IN"
    # and removed again
    back = plan([{**c, "action": "remove"} for c in reversed(changes)], {**configs, **res.configs})
    assert back.configs["e1"] == configs["e1"]


def test_static_route_distance_change_and_floating_address(configs):
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "198.51.100.1"}
    res = plan([route], configs)
    state = {**configs, **res.configs}
    res2 = plan([{**route, "distance": 200}], state)
    assert [(str(r.prefix), r.nexthop, r.distance) for r in res2.configs["e1"].static_routes] == [
        ("192.0.2.0/24", "198.51.100.1", 200)]
    fl = {"type": "floating-address", "action": "add", "address": "198.51.100.10/32", "router": "e1"}
    s = {**configs, **plan([fl], configs).configs}
    assert Inventory(s).get_service("floating-address/198.51.100.10").routers == ["e1"]
    moved = plan([{**fl, "router": "e2"}], s)
    assert moved.routers == ["e1", "e2"]
    assert Inventory({**s, **moved.configs}).get_service("floating-address/198.51.100.10").routers == ["e2"]


def test_firewall_policy_apply_and_remove(configs):
    # removing blue's isolation drops both rules and the set; applying it again restores it exactly
    res = plan([{"type": "tenant-firewall", "action": "remove", "tenant": "blue"}], configs)
    assert res.routers == EDGES
    assert res.configs["e1"].firewall.forward_rules == [] and "tenant_blue" not in res.configs["e1"].firewall.sets
    state = {**configs, **res.configs}
    # the sites of blue are no longer recognised without the set, so re-create from the red side
    again = plan([{"type": "tenant-firewall", "action": "apply", "tenant": "red", "isolate_from": []}], state)
    assert again.configs == {} or all(c.firewall.forward_rules == [] for c in again.configs.values())
    same = plan([{"type": "tenant-firewall", "action": "apply", "tenant": "blue"}], configs)
    assert same.configs == {}  # already as intended: nothing to change


def test_yang_errors_are_refusals(configs):
    # a route-map entry with no match / set compiles; a community that FRR refuses does not
    [err] = validate_changes([{"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-X",
                               "seq": 10, "set_community": ["bogus"]}], configs)
    assert err.code in ("invalid", "yang") and err.path.startswith("changes.0") and "bogus" in err.message


# -- pools --------------------------------------------------------------------------------------------


def test_pools_know_the_brownfield(scenario, configs):
    p = Pools.for_scenario(scenario, configs)
    assert p.seq("e2", "PL-TENANTS").used == {10, 20}
    assert p.seq("e2", "PL-TENANTS").allocate() == 30
    assert p.seq("e2", "PL-NEW").allocate() == 10
    assert p.site_prefix("blue").allocate() == IPv4Network("198.19.0.0/24")
    assert str(p.gateway(IPv4Network("198.18.11.0/24"))) == "198.18.11.2"  # .1 is e1's
    assert p.list_name("PL-TENANTS").allocate() == "PL-TENANTS-1"
    assert p.list_name("RM").used >= {"RM-TENANTS-OUT", "PL-TENANTS"}
    tp = Pools.for_scenario(scenario, configs, tenant_ranges={"blue": IPv4Network("198.18.8.0/21")})
    assert tp.site_prefix("blue").allocate() == IPv4Network("198.18.8.0/24")
    assert tp.site_prefix("blue").allocate() == IPv4Network("198.18.9.0/24")
    assert tp.site_prefix("blue").allocate() == IPv4Network("198.18.10.0/24")
    assert tp.site_prefix("blue").allocate() == IPv4Network("198.18.15.0/24")  # 11-14 are blue's sites


def test_pool_exhaustion_is_typed(scenario, configs):
    with pytest.raises(PoolExhausted) as ei:
        SeqPool("seq/e2/PL", {10, 20}, limit=20).allocate()
    assert (ei.value.pool, ei.value.size, ei.value.code) == ("seq/e2/PL", 2, "pool-exhausted")
    assert SeqPool("s", {20}, limit=20).allocate() == 10  # the lowest free one when max + step is too big
    with pytest.raises(PoolExhausted, match="size 4"):
        PrefixPool("site-prefix/x", IPv4Network("10.0.0.0/22"), 24, [IPv4Network("10.0.0.0/22")]).allocate()
    with pytest.raises(PoolExhausted):
        NamePool("list-name/PL", "PL", {"PL-1"}, limit=1).allocate()
    # through compile: a seq limit of 20 on lists that already hold 10 and 20
    tight = Pools.for_scenario(scenario, configs, seq_limit=20)
    [err] = validate_changes([onboard(prefix="198.19.1.0/24")], configs, pools=tight)
    assert isinstance(err, PoolExhausted) and err.pool == "seq/e2/PL-TENANTS" and err.size == 2
    # the site pool: a /23 of /24s, both used
    small = Pools.for_scenario(scenario, configs, tenant_ranges={"blue": IPv4Network("198.18.12.0/23")})
    [err] = validate_changes([onboard()], configs, pools=small)
    assert err.code == "pool-exhausted" and "site-prefix/blue" in str(err) and err.size == 2


def test_new_tenant_firewall_then_its_first_site(configs):
    changes = [
        {"type": "tenant-firewall", "action": "apply", "tenant": "green"},
        onboard(tenant="green", site="g1", edge="e4", prefix="198.19.40.0/24"),
    ]
    res = plan(changes, configs)
    assert res.routers == EDGES
    fw = res.configs["e1"].firewall
    assert fw.sets["tenant_green"].elements == [IPv4Network("198.19.40.0/24")]
    drops = {(r.saddr_set, r.daddr_set) for r in fw.forward_rules if r.action == "drop"}
    assert {("tenant_green", "tenant_blue"), ("tenant_blue", "tenant_green"),
            ("tenant_green", "tenant_red"), ("tenant_red", "tenant_green")} <= drops
    inv = Inventory({**configs, **res.configs})
    assert inv.get_service("tenant-site/green/g1").spec.edge == "e4"
    assert inv.get_service("tenant-firewall/green").spec.isolate_from == ["blue", "red"]


def test_pools_are_not_consumed_by_a_compile(configs, pools):
    a = plan([onboard()], configs, pools=pools)
    b = plan([onboard()], configs, pools=pools)
    assert a.allocations == b.allocations and a.configs == b.configs
    assert pools.seq("e2", "PL-TENANTS").used == {10, 20}


def test_yang_must_violation_refuses(configs):
    base = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24"}
    errors = validate_changes([{**base, "next_hop": "Null0"}, {**base, "next_hop": "198.51.100.1"}], configs)
    assert [(e.code, e.path.split(":")[0]) for e in errors] == [("yang", "e1")]
    assert "blackhole" in errors[0].message
    with pytest.raises(IntentError) as ei:
        plan([{**base, "next_hop": "Null0"}, {**base, "next_hop": "198.51.100.1"}], configs)
    assert ei.value.code == "yang"


def test_diff_per_router(configs, pools):
    res = plan([onboard(prefix="198.19.7.0/24")], configs, pools=pools)
    diff = res.diff(configs)
    assert sorted(diff) == EDGES
    added = [ln for ln in diff["e2"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert "+ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24" in added
    assert "+ ip address 198.19.7.1/24" in added
    assert not [ln for ln in diff["e2"].splitlines() if ln.startswith("-") and not ln.startswith("---")
                and "elements" not in ln]
    e1 = [ln for ln in diff["e1"].splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert len(e1) == 2 and all("elements" in ln for ln in e1) and "198.19.7.0/24" in e1[1]


@pytest.mark.parametrize(
    ("change", "code", "path", "needle"),
    [
        ({"type": "tenant-site", "action": "move", "tenant": "blue", "site": "blue9", "edge": "e3"},
         "service-not-found", "changes.0", "tenant-site/blue/blue9"),
        ({"type": "tenant-site", "action": "move", "tenant": "blue", "site": "blue1", "edge": "e3",
          "interface": "to-red3"}, "address-conflict", "changes.0.interface", "198.18.23.1/24"),
        ({"type": "tenant-site", "action": "move", "tenant": "blue", "site": "blue1", "edge": "c2"},
         "unknown-reference", "changes.0.edge", "c2"),
        ({"type": "tenant-site", "action": "remove", "tenant": "blue", "site": "blue1", "edge": "e2"},
         "invalid", "changes.0.edge", "e1"),
        ({"type": "static-route", "action": "remove", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "Null0"},
         "service-not-found", "changes.0", "static-route/e1/192.0.2.0/24/Null0"),
        ({"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "100.64.255.11", "remote_as": 1},
         "nexthop-self", "changes.0.neighbor", "100.64.255.11"),
        ({"type": "route-map-entry", "action": "remove", "routers": ["e2"], "name": "RM-TENANTS-OUT", "seq": 10},
         "invalid", "changes.0", "connected"),
    ],
)
def test_move_remove_refusals(configs, change, code, path, needle):
    [err] = validate_changes([change], configs)
    assert (err.code, err.path) == (code, path), err
    assert needle in err.message, err.message


def test_removing_both_sites_of_an_edge_then_onboarding_again(configs):
    changes = [{"type": "tenant-site", "action": "remove", "tenant": t, "site": f"{t}1"} for t in ("blue", "red")]
    state = {**configs, **plan(changes, configs).configs}
    assert "PL-TENANTS" not in state["e1"].prefix_lists  # FRR has no empty prefix-list
    res = plan([onboard(edge="e1", prefix="198.19.9.0/24")], state)
    assert [(x.seq, str(x.prefix)) for x in res.configs["e1"].prefix_lists["PL-TENANTS"].entries] == [(10, "198.19.9.0/24")]
