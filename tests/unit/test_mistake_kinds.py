"""The first mistake kinds (near-miss-object, shared-entry-collision, partial-application,
double-application) and the static reading of their effects (ani.agents.mistakes.effects), on
the generated default brownfield (scenarios/default.yaml, scenario seed 7): no lab."""

from __future__ import annotations

import random

import pytest

from ani.agents.mistakes import MistakeContext, carry_out, footprint, get_mistake
from ani.agents.mistakes.effects import _passes, apply_footprint, footprint_breaks, node_addresses, predicted_breaks


@pytest.fixture(scope="module")
def brownfield():
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario

    s = generate_scenario("scenarios/default.yaml", seed=7)
    return s, network_configs(s)


class Pick(random.Random):
    """A generator whose ``choice`` takes the first item ``want`` accepts."""

    def __init__(self, want):
        super().__init__(0)
        self.want = want

    def choice(self, seq):
        return next(x for x in seq if self.want(x))


def ctx_of(brownfield, task_class, seed, level="a1", rng=None):
    from ani.agents.scripted_tasks import changes_for
    from ani.intents import compile_changes
    from ani.scenario import get_task_class

    s, before = brownfield
    task = get_task_class(task_class).variant(s, seed).agent_view()
    changes = changes_for(task, before)
    return MistakeContext(task=task, level=level, changes=changes, before=before,
                          after=compile_changes(changes, before).configs, rng=rng or random.Random(seed))


# -- effects ------------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario_seed", [7, 1, 2])
def test_every_judged_invariant_passes_on_the_generated_baseline(scenario_seed):
    """The static reading agrees with the baseline: each route / reach invariant it can judge
    passes on the brownfield's own configurations (those are checked on a converged lab)."""
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario

    s = generate_scenario("scenarios/default.yaml", seed=scenario_seed)
    c = network_configs(s)
    addrs = node_addresses(s.invariants, c)
    got = [(x.name, _passes(x, c, addrs)) for x in s.invariants if x.kind in ("route", "reach")]
    assert [n for n, p in got if p is not True] == []
    assert predicted_breaks(s.invariants, c, c) == []


@pytest.mark.parametrize("task_class,seed", [("onboard-site", 1), ("change-set", 1), ("decommission", 2)])
def test_applying_a_footprint_gives_the_configuration_it_was_taken_from(brownfield, task_class, seed):
    ctx = ctx_of(brownfield, task_class, seed)
    fp = footprint(ctx.before, ctx.before, ctx.after)
    got = apply_footprint(ctx.before, fp)
    assert {r: got[r] for r in ctx.after} == {r: c.canonical() for r, c in ctx.after.items()}


def test_a_site_prefix_out_of_its_tenant_set_breaks_isolation_through_the_edges_that_lost_it(brownfield):
    """red2 (198.18.119.0/24, on e1) out of tenant_red on e1 only: its isolation from the sites
    also on e1 breaks (e1 is their whole path), not from blue1 on e4 (e4 still drops it); its
    shared services (reached through e1's accept rules for tenant_red) are lost."""
    s, c = brownfield
    fp = {"e1": ["- nft / table inet fw / set tenant_red / element 198.18.119.0/24"]}
    assert footprint_breaks(s.invariants, c, fp) == [
        "isolated blue2 -/-> red2 (198.18.119.10)", "isolated red2 -/-> green12 (198.18.143.10)",
        "isolated red2 -/-> blue3 (198.18.72.10)", "reach red2 -> dns1 (198.18.243.130)",
        "reach red2 -> ntp1 (198.18.248.178)"]


# -- shared-entry-collision ---------------------------------------------------------------------


def test_collision_replaces_another_tenants_entry_and_breaks_its_announcement(brownfield):
    """onboard-site 1 onboards red on e4; written at seq 10 of e4's PL-TENANTS, the new entry
    replaces blue1's (198.18.43.0/24): blue1 is no longer announced, so its reach to blue's
    sites on other edges, its route on the reflector and its export to the external AS break."""
    s, before = brownfield
    k = get_mistake("shared-entry-collision")
    ctx = ctx_of(brownfield, "onboard-site", 1, rng=Pick(lambda c: c[4] == 10))
    new = ctx.changes[0]["prefix"]
    m = carry_out(k, ctx)
    assert m.made.expressed and m.made.target["tenant"] == "blue" and m.made.target["prefix"] == "198.18.43.0/24"
    assert sorted(m.made.footprint["e4"]) == sorted([
        "- ip prefix-list PL-TENANTS seq 10 permit 198.18.43.0/24",
        f"- ip prefix-list PL-TENANTS seq 30 permit {new}", f"+ ip prefix-list PL-TENANTS seq 10 permit {new}"])
    assert set(m.made.footprint) == {"e4"} and m.changes == ctx.changes
    assert k.expected_breaks(m.made, s.invariants, before) == [
        "reach blue1 -> blue2 (198.18.62.10)", "reach blue1 -> blue3 (198.18.72.10)",
        "reach blue1 -> blue4 (198.18.75.10)", "route c1 198.18.43.0/24", "route x1 198.18.43.0/24"]


def test_collision_candidates_are_other_tenants_entries_only(brownfield):
    k = get_mistake("shared-entry-collision")
    ctx = ctx_of(brownfield, "onboard-site", 1)
    cands = k.candidates(ctx)
    assert cands and {c[0] for c in cands} == {"e4"} and all(c[5] != "red" for c in cands)
    assert not k.applicable(ctx_of(brownfield, "decommission", 1))  # it adds no entry


def test_collision_is_not_expressed_at_a3t(brownfield):
    ctx = ctx_of(brownfield, "onboard-site", 1, level="a3t")
    m = carry_out(get_mistake("shared-entry-collision"), ctx)
    assert not m.made.expressed and m.made.footprint == {} and m.configs == ctx.after
    assert get_mistake("shared-entry-collision").expected_breaks(m.made, brownfield[0].invariants, ctx.before) == []


# -- near-miss-object ---------------------------------------------------------------------------


def test_near_miss_object_candidates_are_similar_names(brownfield):
    """PL-TENANTS has no similar name (PL-EXT-IN is 6 edits away, more than half of 10);
    tenant_red's nearest set is tenant_green (3)."""
    k = get_mistake("near-miss-object")
    got = {(c[0], c[1]): (c[2], c[3]) for c in k.candidates(ctx_of(brownfield, "onboard-site", 1))}
    assert got == {("set", "tenant_red"): ("tenant_green", 3)}
    dec = {(c[0], c[1]): c[2] for c in k.candidates(ctx_of(brownfield, "decommission", 2))}
    assert dec[("prefix-list", "PL-EXT-OUT")] == "PL-EXT-IN"


def test_near_miss_object_puts_the_element_in_the_other_tenants_set(brownfield):
    s, before = brownfield
    k = get_mistake("near-miss-object")
    ctx = ctx_of(brownfield, "onboard-site", 1)
    new = ctx.changes[0]["prefix"]
    m = carry_out(k, ctx)
    assert m.made.target["near_miss"] == "tenant_green" and m.made.target["routers"] == ["e1", "e2", "e3", "e4", "e5", "e6"]
    for r in m.made.target["routers"]:
        assert sorted(m.made.footprint[r]) == sorted([f"- nft / table inet fw / set tenant_red / element {new}",
                                                      f"+ nft / table inet fw / set tenant_green / element {new}"])
    # a new site has no baseline invariant: the mistake harms the task, not the baseline
    assert k.expected_breaks(m.made, s.invariants, before) == []


# -- partial-application / double-application ---------------------------------------------------


def test_partial_application_stops_at_the_first_change_beyond_the_first_router(brownfield):
    k = get_mistake("partial-application")
    ctx = ctx_of(brownfield, "change-set", 1, level="a3t")
    assert [c.get("edge") for c in ctx.changes] == ["e1", "e1", "e1", "e4", "e1"]
    m = carry_out(k, ctx)
    assert m.made.expressed and m.changes == ctx.changes[:3] and m.made.changes == ctx.changes[:3]
    assert m.made.target["left_out"] == ctx.changes[3:] and "e4" in m.made.footprint  # bule2 never onboarded on e4
    assert not k.applicable(ctx_of(brownfield, "onboard-site", 1))  # one change: nothing to stop before


def test_double_application_carries_the_change_out_twice_with_no_footprint(brownfield):
    k = get_mistake("double-application")
    for level in ("a1", "a3t"):
        m = carry_out(k, ctx_of(brownfield, "onboard-site", 1, level=level))
        assert m.made.expressed and m.times == 2 and m.made.footprint == {}
        assert k.expected_breaks(m.made, brownfield[0].invariants, brownfield[1]) == []
