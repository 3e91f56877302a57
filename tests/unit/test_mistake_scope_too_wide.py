"""Mistake kind ``scope-too-wide`` on the generated default brownfield and real variants'
tasks: a site's onboard applied on every edge that can take it."""

from __future__ import annotations

import pytest

from ani.agents.mistakes import LEVELS, footprint, get_mistake
from ani.agents.mistakes.scope_too_wide import other_edges
from ani.intents import validate_changes
from tests.mistake_cases import Case

KIND = get_mistake("scope-too-wide")


@pytest.fixture(scope="module", params=[(7, "onboard-site", 1), (1, "change-set", 1)])
def case(request):
    return Case.of(*request.param)


def test_levels_and_summary_say_the_damage_is_unrequested_changes():
    assert KIND.layer == "intent" and KIND.levels == frozenset(LEVELS)
    assert "unrequested" in KIND.summary and "service-exists" in KIND.summary


def test_other_edges_are_the_routers_that_can_take_a_site_of_the_tenant(case):
    ch = next(c for c in case.ctx.changes if c["action"] == "onboard")
    edges = other_edges(ch, case.configs)
    assert ch["edge"] not in edges and edges == sorted(edges)
    assert not {"c1", "c2", "x1"} & set(edges)  # no tenant prefix-list on the cores / the external router
    assert set(edges) == {r for r in case.configs if r.startswith("e")} - {ch["edge"]}


def test_the_onboard_is_repeated_per_edge_and_the_compiler_refuses_it(case):
    changes, made = KIND.mistaken_changes(case.again())
    i = made.target["change"]
    site = case.ctx.changes[i]
    repeats = changes[i + 1 : i + 1 + len(made.target["routers"])]
    assert [c["edge"] for c in repeats] == made.target["routers"]
    assert all({**c, "edge": site["edge"]} == site for c in repeats)
    assert len(changes) == len(case.ctx.changes) + len(repeats)
    errors = validate_changes(changes, case.configs)
    assert [e.code for e in errors] == ["service-exists"] and errors[0].path == f"changes.{i + 1}"


def test_the_device_form_puts_the_site_on_every_other_edge(case):
    configs, made = KIND.mistaken_configs(case.again())
    site = case.ctx.changes[made.target["change"]]
    fp = footprint(case.configs, case.ctx.after, configs)
    assert set(fp) == set(made.target["routers"])
    plen = site["prefix"].split("/")[1]
    for r, lines in fp.items():
        assert f"+ interface {site['interface']} / ip address {site['gateway']}/{plen}" in lines, r
        assert any(ln.startswith("+ ip prefix-list PL-TENANTS seq ") and ln.endswith(f"permit {site['prefix']}")
                   for ln in lines), r
        assert not [ln for ln in lines if ln.startswith("- ")], r  # nothing of the correct change is lost
        # the entry takes a free seq: no other site's entry is replaced
        seqs = [e.seq for e in configs[r].prefix_lists["PL-TENANTS"].entries]
        assert len(seqs) == len(set(seqs))


def test_expected_breaks_is_empty_the_observer_must_see_unrequested_changes(case):
    _changes, made = KIND.mistaken_changes(case.again())
    assert made.expressed and KIND.expected_breaks(made, case.scenario.invariants, case.configs) == []


def test_not_applicable_without_an_onboard():
    case = Case.of(7, "decommission", 2)
    assert not KIND.applicable(case.ctx)
    assert not KIND.mistaken_changes(case.again())[1].expressed
