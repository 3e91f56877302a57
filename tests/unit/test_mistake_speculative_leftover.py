"""Mistake kind ``speculative-leftover`` on the generated default brownfield and real
variants' tasks: a static discard route for another site's prefix, left on the changed edge."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from ani.agents.mistakes import DEVICE_LEVELS, carry_out, get_mistake
from ani.observer.checks import RouteCheck
from tests.mistake_cases import Case

KIND = get_mistake("speculative-leftover")


@pytest.fixture(scope="module", params=[(7, "onboard-site", 1), (1, "onboard-site", 2), (1, "change-set", 1)])
def case(request):
    return Case.of(*request.param)


def test_levels_exclude_a3t():
    assert KIND.layer == "device" and KIND.levels == DEVICE_LEVELS


def test_one_discard_route_for_another_sites_prefix_on_the_changed_edge(case):
    m = carry_out(KIND, case.again())
    t = m.made.target
    change = case.ctx.changes[t["change"]]
    assert m.made.expressed and t["router"] == change["edge"]
    assert m.made.footprint == {t["router"]: [f"+ ip route {t['prefix']} Null0"]}
    # the victim is a site of another router, none the task names
    sites = {f"tenant-site/{c['tenant']}/{c['site']}" for c in case.ctx.changes}
    assert t["victim"] not in sites
    assert not any(a.network == IPv4Network(t["prefix"]) for i in case.configs[t["router"]].interfaces.values()
                   for a in i.addresses)


def test_expected_breaks_are_reaches_between_the_prefix_and_the_edge(case):
    made = carry_out(KIND, case.again()).made
    inv = case.scenario.invariants
    breaks = KIND.expected_breaks(made, inv, case.configs)
    assert breaks and set(breaks) <= case.names
    prefix = IPv4Network(made.target["prefix"])
    victim_host = made.target["victim"].rsplit("/", 1)[1]
    edge_hosts = {i[3:] for i in case.configs[made.target["router"]].interfaces if i.startswith("to-")}
    by_name = {c.name: c for c in inv}
    for n in breaks:
        c = by_name[n]
        assert c.kind == "reach" and c.expect, n
        ends = {c.src, c.dst_node}
        assert victim_host in ends and ends & edge_hosts, n
        assert c.dst in prefix or c.src == victim_host
    # the victim's own route (announced by its edge) is not affected; nor is any other tenant
    assert f"route c1 {prefix}" not in breaks
    others = {"blue", "red", "green"} - {made.target["tenant"]}
    assert not set(breaks) & set().union(*(case.tenant_checks(x) for x in others))


def test_a_check_that_the_prefix_is_absent_from_the_edge_breaks(case):
    made = carry_out(KIND, case.again()).made
    absent = RouteCheck(router=made.target["router"], prefix=made.target["prefix"], expect=False)
    elsewhere = RouteCheck(router="c1", prefix=made.target["prefix"], expect=False)
    breaks = KIND.expected_breaks(made, [*case.scenario.invariants, absent, elsewhere], case.configs)
    assert absent.name in breaks and elsewhere.name not in breaks


def test_not_applicable_without_a_site_change():
    case = Case.of(7, "decommission", 2)
    assert not KIND.applicable(case.ctx)
    assert not carry_out(KIND, case.again()).made.expressed
    assert not carry_out(KIND, Case.of(7, "onboard-site", 1).again(level="a3t")).made.expressed


def test_a_prefix_the_edge_already_routes_statically_is_not_a_block():
    """Scenario seed 7: e6 already has ip route 198.18.142.0/24 Null0 (red1's prefix, the
    brownfield's harmless discard): a leftover on e6 never covers it (it would change nothing)."""
    from ani.agents.mistakes.speculative_leftover import _ranked

    case = Case.of(7, "onboard-site", 1)
    assert any(str(r.prefix) == "198.18.142.0/24" for r in case.configs["e6"].static_routes)
    change = {**case.ctx.changes[0], "edge": "e6"}
    blocks, _key = _ranked(case.ctx, change)
    assert blocks and "198.18.142.0/24" not in {str(b.spec.prefix) for b in blocks}
    change = {**case.ctx.changes[0], "edge": "e5"}  # another edge: red1's prefix is a block there
    assert "198.18.142.0/24" in {str(b.spec.prefix) for b in _ranked(case.ctx, change)[0]}
