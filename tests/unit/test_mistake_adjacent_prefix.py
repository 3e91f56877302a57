"""Mistake kind ``adjacent-prefix`` on the generated default brownfield and real variants'
tasks: a new site takes the more specific half of another tenant's neighbouring site."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from ani.agents.mistakes import LEVELS, footprint, get_mistake
from ani.intents import validate_changes
from tests.mistake_cases import Case

KIND = get_mistake("adjacent-prefix")


@pytest.fixture(scope="module", params=[(7, "onboard-site", 1), (1, "onboard-site", 2), (7, "change-set", 2)])
def case(request):
    return Case.of(*request.param)


def test_levels_are_every_level_as_data():
    assert KIND.layer == "intent" and KIND.levels == frozenset(LEVELS) and "prefix-overlap" in KIND.summary


def test_the_prefix_is_inside_another_tenants_site_and_the_compiler_refuses_it(case):
    changes, made = KIND.mistaken_changes(case.again())
    assert made.expressed
    i = made.target["change"]
    wrong, right = changes[i], case.ctx.changes[i]
    half, victim = IPv4Network(wrong["prefix"]), IPv4Network(made.target["victim_prefix"])
    assert half.subnet_of(victim) and half.prefixlen == victim.prefixlen + 1
    assert made.target["victim_tenant"] != right["tenant"]
    assert wrong["gateway"] == str(next(half.hosts())) and wrong["prefix"] != right["prefix"]
    assert [c for j, c in enumerate(changes) if j != i] == [c for j, c in enumerate(case.ctx.changes) if j != i]
    # A3-T's plan / apply compile the same way: refused, naming the other tenant's site
    errors = validate_changes(changes, case.configs)
    assert [e.code for e in errors] == ["prefix-overlap"] and made.target["victim"] in str(errors[0])


def test_the_device_form_swaps_the_prefix_everywhere_it_goes(case):
    configs, made = KIND.mistaken_configs(case.again())
    i = made.target["change"]
    right = case.ctx.changes[i]
    fp = footprint(case.configs, case.ctx.after, configs)
    edge, half = right["edge"], made.target["prefix"]
    assert f"+ interface {right['interface']} / ip address {made.target['gateway']}/{IPv4Network(half).prefixlen}" in fp[edge]
    assert any(ln.startswith("+ ip prefix-list PL-TENANTS seq ") and ln.endswith(f"permit {half}") for ln in fp[edge])
    assert any(ln.startswith("- ip prefix-list PL-TENANTS seq ") and ln.endswith(f"permit {right['prefix']}") for ln in fp[edge])
    tset = f"tenant_{right['tenant']}"
    for r, lines in fp.items():
        assert f"+ nft / table inet fw / set {tset} / element {half}" in lines, r
    # the same draw as the typed form
    assert KIND.mistaken_changes(case.again())[1].target == made.target


def test_expected_breaks_are_the_reaches_of_the_shadowed_hosts(case):
    _changes, made = KIND.mistaken_changes(case.again())
    inv = case.scenario.invariants
    breaks = KIND.expected_breaks(made, inv, case.configs)
    assert breaks and set(breaks) <= case.names
    half = IPv4Network(made.target["prefix"])
    victim_host = made.target["victim"].rsplit("/", 1)[1]
    by_name = {c.name: c for c in inv}
    for n in breaks:
        c = by_name[n]
        assert c.kind == "reach" and c.expect and (c.dst in half or c.src == victim_host), n
    # every expected reach of the victim's host is there; its route and its isolation are not
    mine = [c.name for c in inv if c.kind == "reach" and c.expect and victim_host in (c.src, c.dst_node)]
    assert set(mine) == set(breaks)
    assert not [n for n in breaks if by_name[n].kind == "route" or by_name[n].service == "isolation"]
    # a tenant that is neither the victim's nor the task's: none of its own invariants
    t = {"blue", "red", "green"} - {made.target["victim_tenant"], made.target["tenant"]}
    assert t and not set(breaks) & set().union(*(case.tenant_checks(x) for x in t))


def test_not_applicable_without_an_onboard():
    case = Case.of(7, "decommission", 2)
    assert not KIND.applicable(case.ctx)
    assert not KIND.mistaken_changes(case.again())[1].expressed
    assert not KIND.mistaken_configs(case.again())[1].expressed
