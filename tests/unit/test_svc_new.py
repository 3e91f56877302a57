"""The new service classes (tenant-policy, shared-service, ebgp-peering) through their hooks, on
brownfield-small: model errors, check refusals naming the field, what apply writes, discovery
of what apply wrote, baseline invariants, generator determinism, trap rate and errors."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network

import pytest
from pydantic import ValidationError

from ani.device.model import FirewallRule, RouteMapEntry
from ani.device.render import render
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services import get_service_class, service_classes
from ani.intents.services.ebgp_peering import EbgpPeeringAdd, EbgpPeeringRemove
from ani.intents.services.shared_service import SharedServiceAdd, SharedServiceRemove
from ani.intents.services.tenant_policy import TenantPolicyApply, TenantPolicyRemove
from ani.scenario import load_scenario, parse_scenario
from ani.scenario.build import Build, Layer

SCENARIO = "scenarios/brownfield-small.yaml"


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(SCENARIO)


@pytest.fixture
def build(scenario):
    return Build.from_scenario(scenario, seed=7)


def run(cls_name: str, ch, state):
    """check -> allocate -> check -> apply -> canonical, as the intents compiler does."""
    cls = get_service_class(cls_name)
    cls.check(ch, "changes.0", state)
    alloc: dict = {}
    ch = cls.allocate(ch, "changes.0", state, None, alloc)
    cls.check(ch, "changes.0", state)
    cls.apply(ch, "changes.0", state, None, alloc)
    for r in state:
        state[r] = state[r].canonical()
    return ch


def refused(cls_name: str, ch, state) -> IntentError:
    with pytest.raises(IntentError) as ei:
        get_service_class(cls_name).check(ch, "changes.0", state)
    return ei.value


def generated(service: str, density: int, seed: int = 7, trap_rate: float = 0.0, **options):
    b = Build.from_scenario(load_scenario(SCENARIO), seed=seed)
    get_service_class(service).generate(b, Layer(service=service, density=density, trap_rate=trap_rate, options=options))
    return b


def test_registered_in_order():
    names = [c.name for c in service_classes()]
    assert {"tenant-policy", "shared-service", "ebgp-peering"} <= set(names)
    assert names.index("tenant-policy") < names.index("shared-service") < names.index("ebgp-peering")
    for n in ("tenant-policy", "shared-service", "ebgp-peering"):
        assert get_service_class(n).shares  # each says what shared state it uses


# -- tenant-policy ---------------------------------------------------------------------------


@pytest.mark.parametrize("data, field", [
    ({"tenant": "blue", "seq": 10}, "local_pref, community or both"),
    ({"tenant": "blue", "seq": 65535, "community": "64500:1"}, "seq"),
    ({"tenant": "blue", "seq": 10, "community": "64500:70000"}, "community"),
    ({"tenant": "Blue", "seq": 10, "community": "64500:1"}, "tenant"),
    ({"tenant": "blue", "seq": 10, "community": "64500:1", "prefixes": []}, "prefixes"),
    ({"tenant": "blue", "seq": "10", "community": "64500:1"}, "seq"),
    ({"tenant": "blue", "seq": 10, "community": "64500:1", "colour": "red"}, "colour"),
])
def test_tenant_policy_model_errors(data, field):
    with pytest.raises(ValidationError) as ei:
        TenantPolicyApply(**data)
    assert field in str(ei.value)


def test_tenant_policy_apply_writes_the_shared_route_map_and_discovers_back(build):
    state = build.configs
    ch = run("tenant-policy", TenantPolicyApply(tenant="blue", seq=10, local_pref=200, community="64500:101"), state)
    assert ch.prefixes == [IPv4Network(f"198.18.1{i}.0/24") for i in range(1, 5)]  # the tenant's set, allocated
    text = render(state["e2"])
    assert "neighbor RR route-map RM-POLICY-OUT out" in text
    assert "route-map RM-POLICY-OUT permit 10\n match ip address prefix-list PL-POL-blue-10\n" \
           " set community 64500:101\n set local-preference 200\n" in text
    assert "route-map RM-POLICY-OUT permit 65535\nexit" in text  # the catch-all
    assert "ip prefix-list PL-POL-blue-10 seq 40 permit 198.18.14.0/24" in text
    assert "RM-POLICY-OUT" not in render(state["c1"])  # route reflectors untouched
    (svc,) = get_service_class("tenant-policy").discover(state)
    assert svc.spec == ch and svc.id == "tenant-policy/blue/10" and svc.routers == ["e1", "e2", "e3", "e4"]


def test_tenant_policy_check_refusals_name_the_field(build):
    state = build.configs
    run("tenant-policy", TenantPolicyApply(tenant="blue", seq=10, community="64500:101"), state)
    e = refused("tenant-policy", TenantPolicyApply(tenant="red", seq=10, community="64500:102"), state)
    assert (e.code, e.path) == ("seq-conflict", "changes.0.seq") and "PL-POL-blue-10" in e.message
    e = refused("tenant-policy", TenantPolicyApply(tenant="green", seq=20, community="64500:102"), state)
    assert (e.code, e.path) == ("unknown-reference", "changes.0.tenant")
    e = refused("tenant-policy", TenantPolicyApply(tenant="red", seq=20, community="64500:1",
                                                   prefixes=["198.18.21.0/24", "198.18.11.0/24"]), state)
    assert (e.code, e.path) == ("invalid", "changes.0.prefixes.0")  # sorted: 198.18.11.0/24 is blue's
    e = refused("tenant-policy", TenantPolicyRemove(tenant="red", seq=10), state)
    assert (e.code, e.path) == ("service-not-found", "changes.0.seq")
    state["e3"].bgp.ipv4_unicast.peers["RR"] = state["e3"].bgp.ipv4_unicast.peers["RR"].model_copy(
        update={"route_map_out": "RM-OTHER"})
    e = refused("tenant-policy", TenantPolicyApply(tenant="red", seq=20, community="64500:1"), state)
    assert e.code == "invalid" and "e3" in e.message and "RM-OTHER" in e.message


def test_tenant_policy_remove_last_drops_the_route_map(build):
    state = build.configs
    before = {r: c.model_copy(deep=True) for r, c in state.items()}
    run("tenant-policy", TenantPolicyApply(tenant="blue", seq=10, community="64500:101"), state)
    run("tenant-policy", TenantPolicyApply(tenant="red", seq=20, local_pref=50), state)
    run("tenant-policy", TenantPolicyRemove(tenant="blue", seq=10), state)
    assert [e.seq for e in state["e1"].route_maps["RM-POLICY-OUT"].entries] == [20, 65535]
    run("tenant-policy", TenantPolicyRemove(tenant="red", seq=20), state)
    assert state == before


def test_tenant_policy_invariants_follow_first_match(build, scenario):
    state = build.configs
    run("tenant-policy", TenantPolicyApply(tenant="blue", seq=20, prefixes=["198.18.11.0/24"],
                                           local_pref=300, community="64500:7"), state)
    cls = get_service_class("tenant-policy")
    (chk,) = cls.invariants(state, scenario.topology)
    assert (chk.router, str(chk.prefix), chk.expect, chk.local_pref, chk.community) == (
        "e2", "198.18.11.0/24", True, 300, "64500:7")  # checked on a remote edge
    assert chk.service == "tenant-policy/blue/20"
    # an entry before it that takes the prefix (a deny without a match) shadows it: the
    # invariant says what FRR does with the configuration, not what the entry intended
    for r in ("e1", "e2", "e3", "e4"):
        rm = state[r].route_maps["RM-POLICY-OUT"]
        rm.entries.insert(0, RouteMapEntry(seq=5, action="deny"))
    (chk,) = cls.invariants(state, scenario.topology)
    assert chk.expect is False and chk.local_pref is None


def test_tenant_policy_generator_determinism_traps_and_errors():
    a = generated("tenant-policy", 4, seed=3, trap_rate=0.0)
    b = generated("tenant-policy", 4, seed=3, trap_rate=0.0)
    c = generated("tenant-policy", 4, seed=4, trap_rate=0.0)
    assert a.to_scenario(name="x") == b.to_scenario(name="x")
    assert a.to_scenario(name="x") != c.to_scenario(name="x")
    seqs = lambda bd: [e.seq for e in bd.configs["e1"].route_maps["RM-POLICY-OUT"].entries][:-1]  # noqa: E731
    assert seqs(a) == [10, 20, 30, 40]
    assert seqs(generated("tenant-policy", 5, seed=3, trap_rate=1.0)) == [10, 11, 12, 13, 14]  # no room between
    half = seqs(generated("tenant-policy", 8, seed=1, trap_rate=0.5))
    diffs = [y - x for x, y in zip(half, half[1:])]
    assert len(half) == 8 and 1 in diffs and 10 in diffs  # density 8 = every site of the 2 tenants
    svcs = get_service_class("tenant-policy").discover(a.configs)
    assert len(svcs) == 4
    covered = [p for s in svcs for p in s.spec.prefixes]
    assert len(covered) == len(set(covered))  # each site under at most one policy
    with pytest.raises(GeneratorError, match="layer tenant-policy: density 9 needs 9 tenant sites"):
        generated("tenant-policy", 9)


# -- shared-service ----------------------------------------------------------------------------


@pytest.mark.parametrize("data, field", [
    ({"name": "dns1", "router": "c1", "prefix": "198.18.240.0/31", "clients": ["blue"]}, "prefix"),
    ({"name": "dns1", "router": "c1", "prefix": "198.18.240.0/28", "clients": []}, "clients"),
    ({"name": "dns1", "router": "c1", "prefix": "198.18.240.0/28", "clients": ["blue", "blue"]}, "clients"),
    ({"name": "DNS", "router": "c1", "prefix": "198.18.240.0/28", "clients": ["blue"]}, "name"),
    ({"name": "dns1", "router": "c1", "prefix": "198.18.240.1/28", "clients": ["blue"]}, "prefix"),
])
def test_shared_service_model_errors(data, field):
    with pytest.raises(ValidationError) as ei:
        SharedServiceAdd(**data)
    assert field in str(ei.value)


def test_shared_service_apply_discover_and_refusals(build, scenario):
    state = build.configs
    ch = run("shared-service", SharedServiceAdd(name="dns1", router="c1", prefix="198.18.240.0/28",
                                                clients=["red", "blue"]), state)
    c1 = render(state["c1"])
    assert "interface to-dns1\n ip address 198.18.240.1/28\n ip ospf area 0\n ip ospf passive\nexit" in c1
    fw = state["e3"].firewall
    assert fw.sets["shared_dns1"].elements == [IPv4Network("198.18.240.0/28")]
    assert fw.forward_rules[:3] == [
        FirewallRule(saddr_set="tenant_blue", daddr_set="shared_dns1", action="accept"),
        FirewallRule(saddr_set="tenant_red", daddr_set="shared_dns1", action="accept"),
        FirewallRule(daddr_set="shared_dns1", action="drop"),
    ]  # before the inter-tenant drops
    assert fw.forward_rules[3].daddr_set == "tenant_red"
    (svc,) = get_service_class("shared-service").discover(state)
    assert svc.spec == ch and svc.routers == ["c1", "e1", "e2", "e3", "e4"]

    e = refused("shared-service", SharedServiceAdd(name="dns1", router="c2", prefix="198.18.241.0/28", clients=["blue"]), state)
    assert (e.code, e.path) == ("service-exists", "changes.0.name")
    e = refused("shared-service", SharedServiceAdd(name="ntp1", router="c9", prefix="198.18.241.0/28", clients=["blue"]), state)
    assert (e.code, e.path) == ("unknown-router", "changes.0.router")
    e = refused("shared-service", SharedServiceAdd(name="ntp1", router="c2", prefix="198.18.12.0/28", clients=["blue"]), state)
    assert (e.code, e.path) == ("prefix-overlap", "changes.0.prefix")
    e = refused("shared-service", SharedServiceAdd(name="ntp1", router="c2", prefix="198.18.240.0/29", clients=["blue"]), state)
    assert (e.code, e.path) == ("prefix-overlap", "changes.0.prefix")
    e = refused("shared-service", SharedServiceAdd(name="ntp1", router="c2", prefix="198.18.241.0/28",
                                                   clients=["blue", "green"]), state)
    assert (e.code, e.path) == ("unknown-reference", "changes.0.clients.1")
    e = refused("shared-service", SharedServiceRemove(name="ntp1"), state)
    assert (e.code, e.path) == ("service-not-found", "changes.0.name")

    before = Build.from_scenario(scenario, seed=7).configs
    run("shared-service", SharedServiceRemove(name="dns1"), state)
    assert state == before


def test_shared_service_invariants_sample_clients_and_isolate_the_others():
    b = generated("shared-service", 3, seed=7)
    scen = parse_scenario(b.to_scenario(name="x"))
    cls = get_service_class("shared-service")
    checks = cls.invariants(b.configs, scen.topology)
    for svc in cls.discover(b.configs):
        mine = [c for c in checks if c.service == svc.id]
        addr = scen.host_address(svc.spec.name)
        assert all(c.dst == addr and c.dst_node == svc.spec.name for c in mine)
        for t in scen.tenants:
            srcs = [c for c in mine if c.src.startswith(t)]
            assert len(srcs) == 3  # a sample of the tenant's 4 sites, each on another edge
            assert {c.expect for c in srcs} == {t in svc.spec.clients}
    # a service that isolates nobody has no negative checks
    st = b.configs
    for r in st:
        if st[r].firewall is not None:
            st[r].firewall.forward_rules = [x for x in st[r].firewall.forward_rules
                                            if not (x.saddr_set is None and x.action == "drop")]
    assert all(c.expect for c in cls.invariants(st, scen.topology))


def test_shared_service_generator_determinism_traps_and_errors():
    a, b = generated("shared-service", 3, seed=5), generated("shared-service", 3, seed=5)
    assert a.to_scenario(name="x") == b.to_scenario(name="x")
    assert a.to_scenario(name="x") != generated("shared-service", 3, seed=6).to_scenario(name="x")
    assert {"dns1", "ntp1", "log1"} <= set(a.hosts) and all(a.hosts[h].gateway for h in ("dns1", "ntp1", "log1"))
    t = generated("shared-service", 3, seed=5, trap_rate=1.0)
    specs = {s.spec.name: s.spec for s in get_service_class("shared-service").discover(t.configs)}
    made = [specs[n] for n in ("dns1", "ntp1", "log1")]  # creation order
    end = IPv4Network("198.18.240.0/20").broadcast_address
    for x, y in zip(made, made[1:]):  # every trap right after the previous on its router (unless the range ends)
        assert (y.prefix.network_address == x.prefix.broadcast_address + 1 and x.router == y.router) \
            or x.prefix.broadcast_address == end
    assert any(y.prefix.network_address == x.prefix.broadcast_address + 1 for x, y in zip(made, made[1:]))
    with pytest.raises(GeneratorError, match="layer shared-service: no free /28 left in 198.18.240.0/28"):
        generated("shared-service", 2, range="198.18.240.0/28")


# -- ebgp-peering ----------------------------------------------------------------------------

PEERING = dict(edge="e1", interface="to-x1", local_address="100.64.9.0/31", neighbor="100.64.9.1",
               remote_as=65001, accept=["172.16.0.0/24"], announce=["198.18.11.0/24"])


@pytest.mark.parametrize("update, field", [
    ({"neighbor": "100.64.9.0"}, "neighbor"),
    ({"neighbor": "100.64.8.1"}, "neighbor"),
    ({"accept": []}, "accept"),
    ({"announce": ["198.18.11.0/24", "198.18.11.0/24"]}, "announce"),
    ({"remote_as": 0}, "remote_as"),
    ({"interface": "to x1"}, "interface"),
])
def test_ebgp_model_errors(update, field):
    with pytest.raises(ValidationError) as ei:
        EbgpPeeringAdd(**{**PEERING, **update})
    assert field in str(ei.value)


def test_ebgp_apply_discover_refusals_and_remove(build):
    state = build.configs
    before = {r: c.model_copy(deep=True) for r, c in state.items()}
    ch = run("ebgp-peering", EbgpPeeringAdd(**PEERING), state)
    text = render(state["e1"])
    for line in ("interface to-x1\n ip address 100.64.9.0/31\n ip ospf area 0\n ip ospf passive\nexit",
                 " neighbor 100.64.9.1 remote-as 65001\n neighbor 100.64.9.1 timers connect 1",
                 "  neighbor 100.64.9.1 route-map RM-EXT-IN in\n  neighbor 100.64.9.1 route-map RM-EXT-OUT out",
                 "ip prefix-list PL-EXT-IN seq 10 permit 172.16.0.0/24",
                 "ip prefix-list PL-EXT-OUT seq 10 permit 198.18.11.0/24",
                 "route-map RM-EXT-IN permit 10\n match ip address prefix-list PL-EXT-IN"):
        assert line in text
    (svc,) = get_service_class("ebgp-peering").discover(state)
    assert svc.spec == ch
    # a second peer on the same edge shares the lists: both now see both (the effective filters)
    run("ebgp-peering", EbgpPeeringAdd(**{**PEERING, "interface": "to-x2", "local_address": "100.64.9.2/31",
                                          "neighbor": "100.64.9.3", "remote_as": 65002,
                                          "accept": ["172.16.1.0/24"], "announce": ["198.18.11.0/24"]}), state)
    assert [e.seq for e in state["e1"].prefix_lists["PL-EXT-IN"].entries] == [10, 20]
    assert [e.seq for e in state["e1"].prefix_lists["PL-EXT-OUT"].entries] == [10]  # already there: kept
    svcs = get_service_class("ebgp-peering").discover(state)
    assert [s.spec.accept for s in svcs] == [[IPv4Network("172.16.0.0/24"), IPv4Network("172.16.1.0/24")]] * 2

    e = refused("ebgp-peering", EbgpPeeringAdd(**{**PEERING, "remote_as": 64500}), state)
    assert e.code == "service-exists"
    e = refused("ebgp-peering", EbgpPeeringAdd(**{**PEERING, "edge": "e2", "remote_as": 64500}), state)
    assert (e.code, e.path) == ("invalid", "changes.0.remote_as")
    e = refused("ebgp-peering", EbgpPeeringAdd(**{**PEERING, "edge": "e2", "local_address": "100.64.9.4/31",
                                                          "neighbor": "100.64.9.5", "accept": ["10.0.0.0/8", "198.18.0.0/16"]}), state)
    assert (e.code, e.path) == ("prefix-overlap", "changes.0.accept.1")
    e = refused("ebgp-peering", EbgpPeeringAdd(**{**PEERING, "edge": "e2"}), state)
    assert (e.code, e.path) == ("address-conflict", "changes.0.local_address")  # the link is e1's
    e = refused("ebgp-peering", EbgpPeeringAdd(**{**PEERING, "edge": "e7"}), state)
    assert (e.code, e.path) == ("unknown-router", "changes.0.edge")
    e = refused("ebgp-peering", EbgpPeeringRemove(edge="e2", neighbor="100.64.9.1"), state)
    assert (e.code, e.path) == ("service-not-found", "changes.0.neighbor")

    run("ebgp-peering", EbgpPeeringRemove(edge="e1", neighbor="100.64.9.3"), state)
    assert "PL-EXT-IN" in state["e1"].prefix_lists  # still shared by the other peering
    run("ebgp-peering", EbgpPeeringRemove(edge="e1", neighbor="100.64.9.1"), state)
    assert state == before


def test_ebgp_invariants_and_generator():
    b = generated("ebgp-peering", 1, seed=7, trap_rate=1.0)
    assert generated("ebgp-peering", 1, seed=7, trap_rate=1.0).to_scenario(name="x") == b.to_scenario(name="x")
    assert generated("ebgp-peering", 1, seed=8, trap_rate=1.0).to_scenario(name="x") != b.to_scenario(name="x")
    (x,) = b.routers("external")
    assert b.roles[x] == "external" and b.daemons[x] == ["zebra", "staticd", "bgpd"]
    scen = parse_scenario(b.to_scenario(name="x"))
    (svc,) = get_service_class("ebgp-peering").discover(b.configs)
    s = svc.spec
    nets = b.configs[x].bgp.ipv4_unicast.networks
    refused_net = next(n for n in nets if n not in s.accept)
    assert refused_net.prefixlen == 25 and any(refused_net.subnet_of(a) for a in s.accept)  # the trap: a more specific
    checks = get_service_class("ebgp-peering").invariants(b.configs, scen.topology)
    by = {(c.kind, getattr(c, "router", None), str(getattr(c, "prefix", getattr(c, "neighbor", "")))): c for c in checks}
    assert ("bgp_session", s.edge, str(s.neighbor)) in by and ("bgp_session", x, str(s.local_address.ip)) in by
    assert by[("route", s.edge, str(refused_net))].expect is False
    others = [e for e in ("e1", "e2", "e3", "e4") if e != s.edge][:2]
    for p in s.accept:
        assert all(by[("route", e, str(p))].expect for e in others)
    for p in s.announce:
        assert by[("route", x, str(p))].expect
    absent = [c for c in checks if c.kind == "route" and c.router == x and not c.expect]
    assert len(absent) == 3 and not {c.prefix for c in absent} & set(s.announce)
    no_trap = generated("ebgp-peering", 1, seed=7, trap_rate=0.0)
    nets = no_trap.configs["x1"].bgp.ipv4_unicast.networks
    assert [n.prefixlen for n in nets] == [24, 24, 24]
    b2 = Build.from_scenario(load_scenario(SCENARIO), seed=1)
    b2.roles = {r: "core" for r in b2.roles}
    with pytest.raises(GeneratorError, match="layer ebgp-peering: the build has no tenant edge"):
        get_service_class("ebgp-peering").generate(b2, Layer(service="ebgp-peering", density=1))


def test_the_three_layers_coexist_on_one_build():
    b = Build.from_scenario(load_scenario(SCENARIO), seed=11)
    for name, d in (("tenant-policy", 3), ("shared-service", 2), ("ebgp-peering", 2)):
        get_service_class(name).generate(b, Layer(service=name, density=d, trap_rate=0.3))
    scen = parse_scenario(b.to_scenario(name="x"))
    for name, d in (("tenant-policy", 3), ("shared-service", 2), ("ebgp-peering", 2)):
        assert len(get_service_class(name).discover(scen.device_configs | b.configs)) == d
        assert get_service_class(name).invariants(b.configs, scen.topology)
    assert IPv4Address("100.64.255.11") in [a.ip for a in b.configs["e1"].interfaces["lo"].addresses]


def test_generated_configs_round_trip_through_frr_text_and_yang():
    """The classes write only what the device model expresses: every router's config of the three
    layers reads back equal from its FRR text and from its YANG XML, and validates (A2)."""
    from ani.device import yang
    from ani.device.parse import parse

    b = Build.from_scenario(load_scenario(SCENARIO), seed=11)
    for name, d in (("tenant-policy", 3), ("shared-service", 2), ("ebgp-peering", 2)):
        get_service_class(name).generate(b, Layer(service=name, density=d, trap_rate=0.5))
    for r, cfg in b.configs.items():
        frr = cfg.model_copy(update={"firewall": None})
        back = parse(render(frr))
        assert back == frr and not back.unmodelled, r
        xml = yang.to_xml(cfg)
        assert yang.from_xml(xml, cfg.hostname) == cfg, r
        assert [i for i in yang.validate_xml(xml) if i.severity == "error"] == [], r


def test_docs_example(run_doc_example):
    out = run_doc_example("shared-state-classes.md", "shared-state")
    assert "tenant-policy ['tenant-policy/" in out and "ebgp-peering ['ebgp-peering/e" in out


def test_active_validation_hooks(build, scenario):
    """own_checks: the invariants of what the changes create, on the state after;
    touched_invariants: every other instance's, on the state before (a removed or replaced
    instance's old invariants are left out: they no longer hold by design)."""
    from types import SimpleNamespace

    cls = get_service_class("tenant-policy")
    before = {r: c.model_copy(deep=True) for r, c in build.configs.items()}
    run("tenant-policy", TenantPolicyApply(tenant="blue", seq=10, prefixes=["198.18.11.0/24"], community="64500:1"), before)
    after = {r: c.model_copy(deep=True) for r, c in before.items()}
    new = run("tenant-policy", TenantPolicyApply(tenant="red", seq=20, prefixes=["198.18.22.0/24"], local_pref=90), after)
    own = cls.own_checks([new], before, after, scenario.topology)
    assert [(c.service, str(c.prefix), c.local_pref) for c in own] == [("tenant-policy/red/20", "198.18.22.0/24", 90)]
    kept = cls.touched_invariants(before, scenario.topology, SimpleNamespace(changes=(new,)))
    assert [c.service for c in kept] == ["tenant-policy/blue/10"]
    gone = TenantPolicyRemove(tenant="blue", seq=10)
    assert cls.touched_invariants(before, scenario.topology, SimpleNamespace(changes=(gone,))) == []
    assert cls.own_checks([gone], before, after, scenario.topology) == []
    assert cls.named_tenants(new, {"blue", "red"}) == {"red"}
    assert cls.named_networks(new) == [IPv4Network("198.18.22.0/24")]
    ss = get_service_class("shared-service")
    add = SharedServiceAdd(name="dns1", router="c1", prefix="198.18.240.0/28", clients=["blue"])
    assert ss.named_tenants(add, {"blue", "red"}) == {"blue"}
    assert ss.named_tenants(SharedServiceRemove(name="dns1"), {"blue", "red"}) == {"blue", "red"}
    assert get_service_class("ebgp-peering").named_networks(EbgpPeeringAdd(**PEERING)) == [
        IPv4Network("172.16.0.0/24"), IPv4Network("198.18.11.0/24")]


def test_the_generator_stacks_the_three_layers_on_the_default_topology():
    """tests/data/manifest-shared-state.yaml: the generator's verification (the inventory holds
    exactly what the layers made) passes at several seeds and densities; same seed, same file."""
    from ani.scenario.generate import generate, render_yaml

    path = "tests/data/manifest-shared-state.yaml"
    for seed, density in ((1, 2), (2, 4), (3, 8)):
        data = generate(path, seed=seed, density=density)
        names = {(c.get("service") or "").split("/")[0] for c in data["invariants"]}
        assert {"tenant-policy", "shared-service", "ebgp-peering"} <= names
        assert [r for r in data["topology"]["routers"] if r.startswith("x")] == ["x1"]
    assert render_yaml(generate(path, seed=2, density=4)) == render_yaml(generate(path, seed=2, density=4))
