"""Mistake kind ``delete-recreate`` on the generated default brownfield and real variants'
tasks: an edge's shared tenant prefix-list recreated with only the task's entries."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from ani.agents.mistakes import DEVICE_LEVELS, carry_out, get_mistake
from tests.mistake_cases import Case

KIND = get_mistake("delete-recreate")


@pytest.fixture(scope="module")
def onboard():
    return Case.of(7, "onboard-site", 1)


def test_levels_exclude_a3t():
    assert KIND.layer == "device" and KIND.levels == DEVICE_LEVELS and "a3t" not in KIND.levels


def test_the_list_keeps_only_the_tasks_entry_and_the_footprint_says_what_went(onboard):
    m = carry_out(KIND, onboard.again())
    t = m.made.target
    edge = onboard.ctx.changes[0]["edge"]
    assert m.made.expressed and t["router"] == edge and t["object"] == "ip prefix-list PL-TENANTS"
    assert t["kept"] == [onboard.ctx.changes[0]["prefix"]]
    before = [str(e.prefix) for e in onboard.configs[edge].prefix_lists["PL-TENANTS"].entries]
    assert t["dropped"] == before and len(before) >= 2
    assert [str(e.prefix) for e in m.configs[edge].prefix_lists["PL-TENANTS"].entries] == t["kept"]
    fp = m.made.footprint
    assert set(fp) == {edge}
    assert sorted(ln.rsplit(" ", 1)[1] for ln in fp[edge]) == sorted(before)
    assert all(ln.startswith("- ip prefix-list PL-TENANTS seq ") for ln in fp[edge])
    assert set(t["tenants"]) == {"blue", "green"}  # several tenants' entries lived in it


def test_not_expressed_at_a3t(onboard):
    m = carry_out(KIND, onboard.again(level="a3t"))
    assert not m.made.expressed and m.configs == onboard.ctx.after and m.made.footprint == {}
    assert KIND.expected_breaks(m.made, onboard.scenario.invariants, onboard.configs) == []


def test_expected_breaks_need_the_dropped_announcements(onboard):
    made = carry_out(KIND, onboard.again()).made
    inv = onboard.scenario.invariants
    breaks = KIND.expected_breaks(made, inv, onboard.configs)
    assert breaks and set(breaks) <= onboard.names
    dropped = [IPv4Network(p) for p in made.target["dropped"]]
    by_name = {c.name: c for c in inv}
    for n in breaks:
        c = by_name[n]
        assert c.expect, n
        if c.kind == "route":
            assert any(c.prefix.subnet_of(p) for p in dropped) and c.router != made.target["router"], n
        else:
            assert c.kind == "reach", n
    # each dropped site's route at the reflector breaks; the task tenant (no site there) keeps its own
    assert {f"route c1 {p}" for p in dropped} <= set(breaks)
    assert not set(breaks) & onboard.tenant_checks("red")


def test_a_reach_between_two_hosts_of_the_edge_holds():
    """Seed 1, change-set 2: e1's list loses blue2's and blue3's entries; their reach stays on e1."""
    case = Case.of(1, "change-set", 2)
    made = carry_out(KIND, case.again()).made
    assert made.target["router"] == "e1" and {"198.18.41.0/24", "198.18.77.0/24"} <= set(made.target["dropped"])
    breaks = KIND.expected_breaks(made, case.scenario.invariants, case.configs)
    assert "reach blue2 -> blue3 (198.18.77.10)" in case.names
    assert "reach blue2 -> blue3 (198.18.77.10)" not in breaks
    assert {"reach blue1 -> blue2 (198.18.41.10)", "route c1 198.18.41.0/24"} <= set(breaks)


def test_not_applicable_to_a_removal_only():
    case = Case.of(7, "decommission", 2)
    assert not KIND.applicable(case.ctx)
    assert not carry_out(KIND, case.again()).made.expressed


def test_a_route_a_static_route_holds_does_not_break():
    """Seed 7, change-set 2: e1's list loses red1's entry, but e6 holds a static discard route to
    red1's prefix (the brownfield's trap), so e6's route check of it still passes; c1's breaks."""
    case = Case.of(7, "change-set", 2)
    made = carry_out(KIND, case.again()).made
    assert "198.18.142.0/24" in made.target["dropped"]
    breaks = KIND.expected_breaks(made, case.scenario.invariants, case.configs)
    assert "route e6 198.18.142.0/24" in case.names and "route e6 198.18.142.0/24" not in breaks
    assert "route c1 198.18.142.0/24" in breaks
