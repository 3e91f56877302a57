"""Fault kind ``concurrent_writer`` on real routers (issue 14 must-show: effect, verification,
removal). Lab: scenarios/brownfield-small.yaml (4 edges with the shared tenant prefix-list
PL-TENANTS). The conflicting writer adds the next entry of e2's tenant prefix-list, the
unrelated one describes e2's loopback; both are verified in running; their removal undoes
nothing and says what became of the change (it survived, or a later write at the same
sequence number replaced it)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ani.device.apply import read
from ani.errors import FaultError
from ani.faults import FaultSpec, get_fault_kind
from ani.scenario.manifest import load_scenario
from ani.scenario.tasks import get_task_class

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
SCENARIO = ROOT / "scenarios" / "brownfield-small.yaml"
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = SCENARIO, "fcw", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def entries(lab, router: str, plist: str) -> dict[int, str]:
    return {e.seq: str(e.prefix) for e in read(lab, router).prefix_lists[plist].entries}


def test_draw_aims_at_the_task_edge_and_is_deterministic():
    scenario = load_scenario(SCENARIO)
    variant = get_task_class("onboard-site").variant(scenario, 3)
    kind = get_fault_kind("concurrent_writer")
    draws = [kind.draw(random.Random(s), scenario, variant) for s in range(12)]
    assert draws == [kind.draw(random.Random(s), scenario, variant) for s in range(12)]
    assert {t["router"] for t, _p in draws} == {variant.params["edge"]}
    kinds = {p["variant"] for _t, p in draws}
    assert kinds == {"unrelated", "conflicting"}
    conflicting = [p for _t, p in draws if p["variant"] == "conflicting"]
    assert all(p["prefix_list"] == "PL-TENANTS" for p in conflicting)


def test_conflicting_writer_then_a_write_at_the_same_seq(lab):
    kind = get_fault_kind("concurrent_writer")
    spec = FaultSpec("concurrent_writer", 2, None, {"router": "e2"},
                     {"variant": "conflicting", "prefix_list": "PL-TENANTS", "prefix": "192.0.2.0/24"})
    before = entries(lab, "e2", "PL-TENANTS")
    seq = (max(before) // 10 + 1) * 10  # what a reader of `before` picks next
    handle = kind.inject(lab, spec)
    assert handle["seq"] == seq
    ok, detail = kind.verify(lab, spec, handle)
    assert ok, detail
    assert entries(lab, "e2", "PL-TENANTS") == {**before, seq: "192.0.2.0/24"}
    assert kind.outcome(lab, spec, handle) == {"writer_survived": True, "now": f"seq {seq} permit 192.0.2.0/24"}
    # someone who read `before` now writes its own entry at the same number: FRR replaces it
    assert lab.vtysh("e2", ["configure terminal", f"ip prefix-list PL-TENANTS seq {seq} permit 198.19.200.0/24"]).ok
    ok, detail = kind.present(lab, spec, handle)
    assert ok  # an event: still "present" (the run stays valid), whatever became of the change
    kind.remove(lab, spec, handle)
    ok, detail = kind.removed(lab, spec, handle)
    assert ok
    assert f"was replaced: PL-TENANTS seq {seq} permit 198.19.200.0/24" in detail, detail
    assert kind.outcome(lab, spec, handle) == {"writer_survived": False, "now": f"seq {seq} permit 198.19.200.0/24"}
    assert lab.vtysh("e2", ["configure terminal", f"no ip prefix-list PL-TENANTS seq {seq}"]).ok
    assert entries(lab, "e2", "PL-TENANTS") == before


def test_unrelated_writer_survives_and_stays(lab):
    kind = get_fault_kind("concurrent_writer")
    spec = FaultSpec("concurrent_writer", 0, None, {"router": "e3"}, {"variant": "unrelated"})
    assert read(lab, "e3").interfaces["lo"].description is None
    handle = kind.inject(lab, spec)
    ok, detail = kind.verify(lab, spec, handle)
    assert ok, detail
    kind.remove(lab, spec, handle)
    ok, detail = kind.removed(lab, spec, handle)
    assert ok and "survived: it is still in running" in detail, detail
    # nothing was undone: the change is the stimulus
    assert read(lab, "e3").interfaces["lo"].description == handle["description"]
    assert lab.vtysh("e3", ["configure terminal", "interface lo", "no description"]).ok


def test_conflicting_writer_on_a_router_without_the_list_is_a_fault_error(lab):
    kind = get_fault_kind("concurrent_writer")
    spec = FaultSpec("concurrent_writer", 0, None, {"router": "c1"},
                     {"variant": "conflicting", "prefix_list": "PL-TENANTS", "prefix": "192.0.2.0/24"})
    with pytest.raises(FaultError, match="c1 has no prefix-list PL-TENANTS"):
        kind.inject(lab, spec)
