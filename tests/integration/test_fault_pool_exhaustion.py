"""Fault kind ``pool_exhaustion`` on real routers (issue 14 must-show: effect, verification,
removal). Lab: scenarios/brownfield-small.yaml with the onboard-site variant's new site (seed 0).
The scenario's ``sites`` pool (198.19.0.0/16 in /24 blocks) is exhausted by a reservation on
the task's edge: the A3-T level, asked to onboard a site without a prefix, answers
``resource_exhausted`` naming the pool (its ``plan`` dry run); after removal the same plan
allocates a block again, and the reservation is gone from the router."""

from __future__ import annotations

import ipaddress

import random
from pathlib import Path

import pytest

from ani.device.apply import read
from ani.errors import FaultError
from ani.faults import FaultSpec, get_fault_kind
from ani.faults.kinds.pool_exhaustion import HOLD_LIST
from ani.scenario.manifest import load_scenario
from ani.scenario.tasks import get_task_class

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
SCENARIO = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")
VARIANT = get_task_class("onboard-site").variant(SCENARIO, 0)
LAB_TOPOLOGY, LAB_PREFIX = VARIANT.lab_topology(SCENARIO), "fpe"
P = VARIANT.params
ONBOARD_NO_PREFIX = {"type": "tenant-site", "action": "onboard", "tenant": P["tenant"], "site": P["site"],
                     "edge": P["edge"]}


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def test_pool_exhaustion_effect_verification_removal(lab, open_adapter):
    from ani.adapters.a3t import A3TAdapter

    kind = get_fault_kind("pool_exhaustion")
    target, params = kind.draw(random.Random(1), SCENARIO, VARIANT)
    assert target == {"router": P["edge"]}
    assert params == {"pool": "sites", "network": "198.19.0.0/16", "prefixlen": 24}
    spec = FaultSpec("pool_exhaustion", 0, 5.0, target, params)
    adapter = open_adapter(A3TAdapter(lab, options={"site_network": "198.19.0.0/16", "check_bound_s": 20}))
    free = adapter.call("plan", {"changes": [ONBOARD_NO_PREFIX]})
    assert free.ok, free.text

    routes = sorted(lab.vtysh_json(P["edge"], "show ip route"))
    handle = kind.inject(lab, spec)
    try:
        ok, detail = kind.verify(lab, spec, handle)
        assert ok, detail
        assert "pool sites (198.19.0.0/16, /24 blocks) exhausted" in detail
        assert HOLD_LIST in read(lab, P["edge"]).prefix_lists
        exhausted = adapter.call("plan", {"changes": [ONBOARD_NO_PREFIX]})
        assert not exhausted.ok and exhausted.error.code.value == "resource_exhausted", exhausted.text
        assert "site-prefix" in exhausted.error.message
        # the reservation changes no route (nothing references the list): none lost, none in
        # the pool added (BGP may still be bringing in others on a loaded machine)
        now = sorted(lab.vtysh_json(P["edge"], "show ip route"))
        assert set(routes) - set(now) == set(), sorted(set(routes) - set(now))
        pool = ipaddress.ip_network(params["network"])
        assert [r for r in set(now) - set(routes) if ipaddress.ip_network(r).subnet_of(pool)] == []
        ok, detail = kind.present(lab, spec, handle)
        assert ok, detail
    finally:
        kind.remove(lab, spec, handle)
    kind.remove(lab, spec, handle)  # idempotent
    ok, detail = kind.removed(lab, spec, handle)
    assert ok and "allocates" in detail, detail
    assert HOLD_LIST not in read(lab, P["edge"]).prefix_lists
    again = adapter.call("plan", {"changes": [ONBOARD_NO_PREFIX]})
    assert again.ok, again.text
    ok, detail = kind.verify(lab, spec, handle)
    assert not ok and "is not on" in detail


def test_an_existing_list_of_that_name_is_never_overwritten(lab):
    kind = get_fault_kind("pool_exhaustion")
    spec = FaultSpec("pool_exhaustion", 0, 5.0, {"router": "e3"},
                     {"pool": "sites", "network": "198.19.0.0/16", "prefixlen": 24})
    assert lab.vtysh("e3", ["configure terminal", f"ip prefix-list {HOLD_LIST} seq 5 deny any"]).ok
    try:
        with pytest.raises(FaultError, match=f"already has a prefix-list {HOLD_LIST}"):
            kind.inject(lab, spec)
        assert [e.seq for e in read(lab, "e3").prefix_lists[HOLD_LIST].entries] == [5]
    finally:
        assert lab.vtysh("e3", ["configure terminal", f"no ip prefix-list {HOLD_LIST}"]).ok
