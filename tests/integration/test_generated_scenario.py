"""A generated scenario on real FRR: default.yaml at seed 7 comes up and every invariant passes."""

from __future__ import annotations

import time

import pytest

from ani.observer import Observer, summarize
from ani.scenario.generate import generate_scenario

pytestmark = pytest.mark.integration


def test_default_seed_7_comes_up_with_every_invariant_passing(make_lab):
    scenario = generate_scenario("scenarios/default.yaml", seed=7)
    assert scenario.generated is not None and scenario.generated.seed == 7
    kinds = {c.kind for c in scenario.invariants}
    assert kinds == {"reach", "bgp_session", "loopback", "route"}
    t0 = time.monotonic()
    lab = make_lab(scenario.topology, netconf=False)
    up_s = time.monotonic() - t0
    t1 = time.monotonic()
    results = Observer(lab).evaluate(scenario.invariants, bound_s=20.0)
    assert all(r.passed for r in results), summarize(results)
    assert len(results) == len(scenario.invariants)
    print(f"{scenario.name}: up {up_s:.2f} s, {len(results)} invariants in {time.monotonic() - t1:.2f} s")

    # the checks can fail: a floating address removed from its edge fails its own invariants
    fl = next(c for c in scenario.invariants if c.service and c.service.startswith("floating-address/"))
    ip = fl.service.split("/", 1)[1]
    owner = next(r for r, cfg in lab.topology.routers.items() if f" ip address {ip}/32" in cfg.config)
    res = lab.vtysh(owner, ["configure terminal", "interface lo", f"no ip address {ip}/32"])
    assert res.rc == 0, res.stderr
    mine = [c for c in scenario.invariants if c.service == fl.service]
    after = Observer(lab).evaluate(mine, bound_s=3.0)
    assert not any(r.passed for r in after), summarize(after)
