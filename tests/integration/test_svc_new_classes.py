"""The new service classes on real FRR (brownfield-small + one generated layer each): every
invariant the class emits passes, and a plausible careless change made for one tenant breaks an
invariant of ANOTHER tenant's (the state is really shared: tenant isolation does not protect it)."""

from __future__ import annotations

import time

import pytest

from ani.intents.services import get_service_class
from ani.observer import Observer, summarize
from ani.scenario import load_scenario, parse_scenario
from ani.scenario.build import Build, Layer

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

SCENARIO = "scenarios/brownfield-small.yaml"


def _build(service: str, density: int, seed: int = 7, **options):
    build = Build.from_scenario(load_scenario(SCENARIO), seed=seed)
    get_service_class(service).generate(build, Layer(service=service, density=density, options=options))
    scenario = parse_scenario(build.to_scenario(name=f"t-{service}"), source=service)
    checks = get_service_class(service).invariants(build.configs, scenario.topology)
    return build, scenario, checks


def _baseline(scenario, checks):
    """The scenario's baseline invariants (every registered class's, through the registry),
    which must include the class's own ``checks``."""
    names = {c.name for c in scenario.invariants}
    assert checks and all(c.name in names for c in checks)
    return scenario.invariants


def _until_failed(lab, checks, bound_s: float = 20.0, every: bool = False):
    """Evaluate ``checks`` until one (``every``: each) fails, i.e. the change has propagated,
    or ``bound_s`` passes."""
    t0 = time.monotonic()
    while True:
        results = Observer(lab).evaluate(checks, bound_s=0.5)
        failed = [not r.passed for r in results]
        if (all(failed) if every else any(failed)) or time.monotonic() - t0 > bound_s:
            return results
        time.sleep(0.5)


def test_tenant_policy_on_frr_and_a_seq_collision_breaks_another_tenant(make_lab):
    build, scenario, checks = _build("tenant-policy", 2, trap_rate=0.0)
    assert checks and all(c.kind == "route" for c in checks)
    assert any(c.local_pref is not None for c in checks) and all(c.community for c in checks)
    lab = make_lab(scenario.topology)
    results = Observer(lab).evaluate(_baseline(scenario, checks), bound_s=20.0)
    assert all(r.passed for r in results), summarize(results)

    # the route check reads FRR's real attributes: the same check with another local-pref or
    # community fails and says what FRR has
    lp = next(c for c in checks if c.local_pref is not None)
    wrong = [lp.model_copy(update={"local_pref": lp.local_pref + 1, "name": "wrong lp"}),
             lp.model_copy(update={"community": "64500:9999", "name": "wrong community"})]
    results = Observer(lab).evaluate(wrong, bound_s=1.0)
    assert not any(r.passed for r in results), summarize(results)
    assert f"local-pref {lp.local_pref}, communities {lp.community}" in results[0].detail

    svcs = get_service_class("tenant-policy").discover(build.configs)
    victim = svcs[0]
    other = next(t for t in build.tenants if t != victim.spec.tenant)
    new_prefix = next(s["prefix"] for s in build.tenants[other])
    # careless: a policy for `other` written at the seq the victim tenant's entry already uses
    # (FRR merges it into that entry: the match now names the new list)
    for r in victim.routers:
        res = lab.vtysh(r, ["configure terminal",
                            f"ip prefix-list PL-POL-{other}-new seq 10 permit {new_prefix}",
                            f"route-map RM-POLICY-OUT permit {victim.spec.seq}",
                            f"match ip address prefix-list PL-POL-{other}-new"])
        assert res.rc == 0, res.stderr
    mine = [c for c in checks if c.service == victim.id]
    results = _until_failed(lab, mine)
    failed = [r for r in results if not r.passed]
    assert failed, summarize(results)
    assert all(victim.spec.tenant in r.service for r in failed)


def test_shared_service_on_frr_and_a_too_broad_drop_for_one_tenant_cuts_another(make_lab):
    build, scenario, checks = _build("shared-service", 2)
    svcs = get_service_class("shared-service").discover(build.configs)
    both = next(s for s in svcs if len(s.spec.clients) >= 2)  # seed 7: dns1 serves blue and red
    assert {c.expect for c in checks} == {True, False}  # reach for subscribers, isolation for the others
    lab = make_lab(scenario.topology)
    results = Observer(lab).evaluate(_baseline(scenario, checks), bound_s=20.0)
    assert all(r.passed for r in results), summarize(results)

    kept = both.spec.clients[0]  # another subscriber is the one being "revoked"
    # careless: "take the other tenant off the service" written as a drop of everything to the service,
    # inserted at the top of the shared chain
    for r in sorted(build.configs):
        if build.configs[r].firewall is not None:
            res = lab.exec(r, ["nft", "insert", "rule", "inet", "fw", "forward", "ip", "daddr",
                               f"@shared_{both.spec.name}", "drop"])
            assert res.rc == 0, res.stderr
    kept_hosts = {s["host"] for s in build.tenants[kept]}
    mine = [c for c in checks if c.service == both.id and c.expect and c.src in kept_hosts]
    assert mine
    results = Observer(lab).evaluate(mine, bound_s=2.0)
    assert not any(r.passed for r in results), summarize(results)


def test_ebgp_peering_on_frr_and_a_seq_reused_for_one_tenant_withdraws_another(make_lab):
    build, scenario, checks = _build("ebgp-peering", 1, trap_rate=1.0)
    (peering,) = get_service_class("ebgp-peering").discover(build.configs)
    kinds = {(c.kind, getattr(c, "expect", True)) for c in checks}
    assert kinds == {("bgp_session", True), ("route", True), ("route", False)}
    lab = make_lab(scenario.topology)
    results = Observer(lab).evaluate(_baseline(scenario, checks), bound_s=20.0)
    assert all(r.passed for r in results), summarize(results)

    # the refused more specific really reached the border edge's BGP table and was filtered
    # (it is absent because of PL-EXT-IN, not because the peer never sent it)
    edge, x = peering.spec.edge, peering.routers[1]
    refused = [c for c in checks if c.kind == "route" and not c.expect and c.router == edge]
    assert refused
    sent = lab.vtysh_json(x, f"show bgp ipv4 unicast neighbors {peering.spec.local_address.ip} advertised-routes")
    assert {str(c.prefix) for c in refused} <= set(sent.get("advertisedRoutes", {})), sent

    announced = peering.spec.announce[0]
    other = next(p for t, sites in build.tenants.items() for p in [s["prefix"] for s in sites]
                 if t != next(t2 for t2, ss in build.tenants.items() if str(announced) in [s["prefix"] for s in ss]))
    # careless: "announce <other tenant's site> to the peer too", written at the seq the
    # announced tenant's entry already has: FRR replaces that entry
    res = lab.vtysh(edge, ["configure terminal", f"ip prefix-list PL-EXT-OUT seq 10 permit {other}"])
    assert res.rc == 0, res.stderr
    victim = [c for c in checks if c.kind == "route" and c.router == x and c.expect and c.prefix == announced]
    assert victim
    results = _until_failed(lab, victim, every=True)
    assert not any(r.passed for r in results), summarize(results)


def test_the_three_classes_coexist_and_a_removed_catch_all_breaks_the_external_routes(make_lab):
    """All three layers on one brownfield: every invariant of every class (and the scenario's
    baseline) holds; removing RM-POLICY-OUT's catch-all on the border edge (a tenant-policy
    change) withdraws the external routes from the other edges (ebgp-peering's invariants)."""
    build = Build.from_scenario(load_scenario(SCENARIO), seed=7)
    layers = (("tenant-policy", 2), ("shared-service", 1), ("ebgp-peering", 1))
    for name, density in layers:
        get_service_class(name).generate(build, Layer(service=name, density=density, trap_rate=0.5))
    scenario = parse_scenario(build.to_scenario(name="t-all"), source="all")
    checks = [c for name, _ in layers for c in get_service_class(name).invariants(build.configs, scenario.topology)]
    lab = make_lab(scenario.topology)
    results = Observer(lab).evaluate(_baseline(scenario, checks), bound_s=20.0)
    assert all(r.passed for r in results), summarize(results)
    print(f"{len(results)} invariants pass")

    (peering,) = get_service_class("ebgp-peering").discover(build.configs)
    res = lab.vtysh(peering.spec.edge, ["configure terminal", "no route-map RM-POLICY-OUT permit 65535"])
    assert res.rc == 0, res.stderr
    external = [c for c in checks if c.service == peering.id and c.kind == "route" and c.expect
                and c.router != peering.routers[1]]
    assert external
    results = _until_failed(lab, external, every=True)  # the withdrawal reaches the edges one by one
    assert not any(r.passed for r in results), summarize(results)


def test_generated_manifest_with_the_three_layers_comes_up_with_every_invariant_passing(make_lab):
    """The generator (``ani.scenario.generate``) stacks the three layers on the default
    topology (tests/data/manifest-shared-state.yaml): the scenario comes up and every baseline
    invariant (each class's, plus the layers' emitted ones) passes on FRR."""
    from ani.scenario.generate import generate_scenario

    scenario = generate_scenario("tests/data/manifest-shared-state.yaml", seed=1)
    services = {(c.service or "").split("/")[0] for c in scenario.invariants}
    assert {"tenant-policy", "shared-service", "ebgp-peering"} <= services
    lab = make_lab(scenario.topology, netconf=False)
    results = Observer(lab).evaluate(scenario.invariants, bound_s=20.0)
    assert all(r.passed for r in results), summarize(results)
    print(f"{scenario.name}: {len(results)} invariants pass")
