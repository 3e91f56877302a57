"""Baseline invariants computed from brownfield-small."""

from __future__ import annotations

from collections import Counter
from ipaddress import IPv4Address

from ani.observer import BgpSessionCheck, LoopbackCheck, ReachCheck, parse_checks, dump_checks
from ani.scenario import load_scenario


def _inv():
    return load_scenario("scenarios/brownfield-small.yaml").invariants


def test_counts_by_kind():
    c = Counter((x.kind, getattr(x, "expect", None)) for x in _inv())
    # 4 sites per tenant: C(4,2)=6 pairs x 2 tenants; 4x4 cross pairs; 8 sessions x 2 sides; 6x5 loopbacks;
    # each of the 8 sites' prefixes on a route reflector
    assert c == {("reach", True): 12, ("reach", False): 16, ("bgp_session", None): 16, ("loopback", None): 30,
                 ("route", True): 8}


def test_every_site_announcement_is_an_invariant_on_a_reflector():
    """A site's prefix on a route reflector other than its edge, one check per site: this is
    what protects the announcement of a tenant whose sites all sit on one edge (no reach pair
    leaves that edge). Generated default, seed 7: red's two sites are both on e1."""
    from ani.observer.checks import RouteCheck
    from ani.scenario.generate import generate_scenario

    inv = _inv()
    routes = [x for x in inv if isinstance(x, RouteCheck)]
    assert len(routes) == len({x.prefix for x in routes}) == 8
    assert {x.router for x in routes} == {"c1"} and all(x.expect and x.service.startswith("tenant:") for x in routes)

    s = generate_scenario("scenarios/default.yaml", seed=7)
    red = [site for t, site in s.sites if t == "red"]
    assert len({site.edge for site in red}) == 1  # the case: every red site on one edge
    got = {(x.prefix, x.router) for x in s.invariants if isinstance(x, RouteCheck) and x.service == "tenant:red"}
    assert {p for p, _r in got} == {site.prefix for site in red} and all(r != red[0].edge for _p, r in got)


def test_names_unique():
    names = [x.name for x in _inv()]
    assert len(names) == len(set(names))


def test_same_tenant_reach_and_cross_tenant_isolation():
    inv = _inv()
    reach = {(x.src, x.dst_node): x for x in inv if isinstance(x, ReachCheck)}
    assert reach[("blue1", "blue4")].expect is True
    assert reach[("blue1", "blue4")].dst == IPv4Address("198.18.14.10")
    assert reach[("blue1", "blue4")].service == "tenant:blue"
    assert reach[("red2", "red3")].expect is True
    assert reach[("blue3", "red3")].expect is False and reach[("blue3", "red3")].service == "isolation"
    assert reach[("blue1", "red4")].expect is False


def test_bgp_sessions_each_edge_to_each_rr_both_sides():
    inv = [x for x in _inv() if isinstance(x, BgpSessionCheck)]
    pairs = {(x.router, str(x.neighbor)) for x in inv}
    assert ("e3", "100.64.255.2") in pairs and ("c1", "100.64.255.14") in pairs
    assert ("c1", "100.64.255.2") not in pairs  # no RR-RR session configured
    assert ("e1", "100.64.255.12") not in pairs  # no edge-edge session


def test_loopbacks_sourced_from_own_loopback():
    inv = [x for x in _inv() if isinstance(x, LoopbackCheck)]
    x = next(i for i in inv if i.router == "e2" and str(i.address) == "100.64.255.1")
    assert str(x.source) == "100.64.255.12"
    assert not any(i.router == "c1" and str(i.address) == "100.64.255.1" for i in inv)


def test_round_trip_through_json():
    inv = _inv()
    assert parse_checks(dump_checks(inv)) == inv
