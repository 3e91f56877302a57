"""The four kinds aimed at the task (frozen_router, held_lock, concurrent_writer,
pool_exhaustion): their draws pick the task's router from the variant, deterministically, and
never from the level; bad specs are FaultErrors naming the kind and what is wrong. No lab."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ani.errors import FaultError
from ani.faults import FaultSpec, get_fault_kind
from ani.faults.task_targets import pick_router, primary_edge, task_routers
from ani.scenario.manifest import load_scenario
from ani.scenario.tasks import get_task_class
from ani.testing import FakeLab

ROOT = Path(__file__).parent.parent.parent
SCENARIO = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")
KINDS = ("frozen_router", "held_lock", "concurrent_writer", "pool_exhaustion")


class NoParams:
    params: dict = {}


def test_task_routers_of_each_class():
    onboard = get_task_class("onboard-site").variant(SCENARIO, 3)
    assert task_routers(SCENARIO, onboard) == [onboard.params["edge"]]
    cs = get_task_class("change-set").variant(SCENARIO, 1)
    edges = {e[k] for sec in ("add", "move", "remove") for e in cs.params[sec]
             for k in ("edge", "from_edge", "to_edge") if k in e}
    assert set(task_routers(SCENARIO, cs)) == edges and len(edges) >= 2
    assert primary_edge(SCENARIO, cs) == cs.params["add"][0]["edge"]
    # a variant naming no router: any router of the scenario
    assert task_routers(SCENARIO, NoParams()) == []
    picks = {pick_router(random.Random(s), SCENARIO, NoParams()) for s in range(40)}
    assert picks == set(SCENARIO.topology.routers)


def test_a_netconfbench_task_is_aimed_at_the_routers_its_solution_configures():
    """A tasks: campaign with faults: the kinds aimed at the task draw the routers of the
    task's first solution (in the lab's names), not any router of its network."""
    from ani.netconfbench.variant import TaskCatalogue

    cat = TaskCatalogue.load(ROOT / "intents" / "netconfbench" / "bgp-prefix-list-filter.json")
    variant = cat.variant(cat, 0)
    scenario = cat.scenario_of(variant)
    configured = [r for r, lines in variant.params["lab_solutions"][0]["configs"].items() if lines]
    assert len(scenario.topology.routers) > len(configured) >= 1  # the task changes some routers only
    assert task_routers(scenario, variant) == sorted(configured)
    assert primary_edge(scenario, variant) == configured[0]
    assert {pick_router(random.Random(s), scenario, variant) for s in range(40)} == set(configured)
    writer = get_fault_kind("concurrent_writer").draw(random.Random(1), scenario, variant)
    assert writer is not None and writer[0] == {"router": configured[0]}


@pytest.mark.parametrize("kind", KINDS)
def test_draw_is_deterministic_and_aims_at_the_task(kind):
    variant = get_task_class("decommission").variant(SCENARIO, 2)
    k = get_fault_kind(kind)
    a = [k.draw(random.Random(s), SCENARIO, variant) for s in range(8)]
    b = [get_fault_kind(kind).draw(random.Random(s), SCENARIO, variant) for s in range(8)]
    assert a == b
    assert {t["router"] for t, _ in a} == {variant.params["edge"]}


def test_pool_exhaustion_draws_the_sites_pool_and_nothing_without_pools():
    variant = get_task_class("onboard-site").variant(SCENARIO, 0)
    k = get_fault_kind("pool_exhaustion")
    assert k.draw(random.Random(0), SCENARIO, variant)[1] == {"pool": "sites", "network": "198.19.0.0/16", "prefixlen": 24}
    bare = SCENARIO.model_copy(update={"pools": {}})
    assert k.draw(random.Random(0), bare, variant) is None


def test_concurrent_writer_conflicting_prefix_is_unused_by_the_scenario():
    variant = get_task_class("onboard-site").variant(SCENARIO, 0)
    k = get_fault_kind("concurrent_writer")
    from ipaddress import IPv4Network

    used = SCENARIO.used_networks()
    for s in range(20):
        _t, p = k.draw(random.Random(s), SCENARIO, variant)
        if p["variant"] == "conflicting":
            assert not any(IPv4Network(p["prefix"]).overlaps(u) for u in used)


@pytest.mark.parametrize("kind", KINDS)
def test_a_target_without_router_is_a_fault_error(kind):
    with pytest.raises(FaultError, match=kind):
        get_fault_kind(kind).inject(FakeLab(netconf=True), FaultSpec(kind, 0, 1.0, {"link": ["a", "b"]},
                                                     {"variant": "unrelated", "network": "10.0.0.0/8"}))


def test_bad_params_are_fault_errors():
    lab = FakeLab(netconf=True)
    with pytest.raises(FaultError, match="params.variant must be one of unrelated, conflicting"):
        get_fault_kind("concurrent_writer").inject(lab, FaultSpec("concurrent_writer", 0, None, {"router": "e1"}, {}))
    with pytest.raises(FaultError, match="params.datastores must name running and/or candidate"):
        get_fault_kind("held_lock").inject(lab, FaultSpec("held_lock", 0, 1.0, {"router": "e1"}, {"datastores": ["startup"]}))


def test_held_lock_is_unavailable_without_a_netconf_server():
    k = get_fault_kind("held_lock")
    assert "needs the lab's NETCONF server" in k.unavailable(FakeLab(netconf=False))
    assert k.unavailable(None) is None  # the host-level check: this host can


def test_concurrent_writes_are_never_merged():
    k = get_fault_kind("concurrent_writer")
    a = FaultSpec("concurrent_writer", 2, None, {"router": "e1"}, {"variant": "unrelated"})
    b = FaultSpec("concurrent_writer", 2, None, {"router": "e1"}, {"variant": "unrelated"})
    assert k.overlap_key(a) != k.overlap_key(b)
    f = get_fault_kind("frozen_router")
    assert f.overlap_key(FaultSpec("frozen_router", 1, 1.0, {"router": "e1"}, {})) == \
        f.overlap_key(FaultSpec("frozen_router", 3, 1.0, {"router": "e1"}, {}))
