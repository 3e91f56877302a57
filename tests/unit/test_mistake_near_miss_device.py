"""Mistake kind ``near-miss-device`` on the generated default brownfield (scenario seed 7) and
real variants' tasks: the site change names a router one character away from the right one."""

from __future__ import annotations

import pytest

from ani.agents.mistakes import LEVELS, carry_out, get_mistake
from ani.agents.mistakes.near_miss_device import near_misses
from ani.intents import validate_changes
from tests.mistake_cases import Case

KIND = get_mistake("near-miss-device")


@pytest.fixture(scope="module")
def onboard():
    return Case.of(7, "onboard-site", 1)


def _moved(case):
    """A context whose draw moves a site to a near-miss router (searched over rng seeds)."""
    for seed in range(1, 40):
        ctx = case.again(rng_seed=seed)
        changes, made = KIND.mistaken_changes(ctx)
        if made.target["action"] == "move":
            return case.again(rng_seed=seed), changes, made
    raise AssertionError("no rng seed draws a move")


def test_near_misses_differ_by_one_character():
    routers = ["c1", "c2", "e1", "e2", "e10", "x1"]
    assert near_misses("e1", routers) == ["c1", "e2", "x1"]
    assert near_misses("e10", routers) == []
    assert near_misses("e2", ["e2"]) == []


def test_levels_are_every_level_as_data():
    assert KIND.layer == "intent" and KIND.levels == frozenset(LEVELS) and KIND.summary


def test_onboard_lands_on_a_near_miss_router_every_level_the_same(onboard):
    right = onboard.ctx.changes[0]["edge"]
    by_level = {}
    for level in LEVELS:
        m = carry_out(KIND, onboard.again(level=level, rng_seed=3))
        assert m.made.expressed, level
        by_level[level] = m.changes
    assert len({repr(v) for v in by_level.values()}) == 1  # the same draw at every level
    wrong = by_level["a1"][0]["edge"]
    assert wrong != right and wrong in near_misses(right, sorted(onboard.configs))
    assert validate_changes(by_level["a3t"], onboard.configs) == []  # nothing refuses it
    m = carry_out(KIND, onboard.again(rng_seed=3))
    assert m.made.target["router"] == wrong and m.made.target["intended"] == right
    # the site's interface is on the wrong router, and not on the right one
    assert any(ln.startswith("+ interface to-nsite / ip address") for ln in m.made.footprint[wrong])
    assert any(ln.startswith("- interface to-nsite / ip address") for ln in m.made.footprint[right])


def test_onboard_breaks_no_baseline_invariant(onboard):
    """A new site's prefix is in no baseline invariant: the damage is the unrequested change
    on the wrong router (and the task's own hidden tests)."""
    _changes, made = KIND.mistaken_changes(onboard.again())
    assert KIND.expected_breaks(made, onboard.scenario.invariants, onboard.configs) == []


def test_a_move_to_a_near_miss_router_breaks_what_needs_the_site():
    case = Case.of(7, "change-set", 3)
    ctx, changes, made = _moved(case)
    assert validate_changes(changes, case.configs) == []
    breaks = KIND.expected_breaks(made, case.scenario.invariants, case.configs)
    assert breaks and set(breaks) <= case.names
    site, tenant = made.target["site"], made.target["tenant"]
    prefix = made.target["prefix"]
    by_name = {c.name: c for c in case.scenario.invariants}
    for n in breaks:
        c = by_name[n]
        assert c.expect, n
        assert (c.kind == "route" and str(c.prefix) == prefix) or (c.kind == "reach" and site in (c.src, c.dst_node)), n
    # its route at the reflector is among them; no other tenant's own invariant is
    assert any(by_name[n].kind == "route" and str(by_name[n].prefix) == prefix for n in breaks)
    others = {t for t in ("blue", "red", "green") if t != tenant}
    assert not set(breaks) & set().union(*(case.tenant_checks(t) for t in others))


def test_not_applicable_when_no_site_change_compiles_on_a_near_miss():
    """A decommission only removes: a removal on the wrong edge is refused (invalid)."""
    case = Case.of(7, "decommission", 2)
    assert not KIND.applicable(case.ctx)
    changes, made = KIND.mistaken_changes(case.again())
    assert not made.expressed and changes == case.ctx.changes
    assert KIND.expected_breaks(made, case.scenario.invariants, case.configs) == []
