"""A3-T cross-device transactions (``ani.intents.transaction``) on the real brownfield lab.

One lab of scenarios/brownfield-small.yaml for the module; every test that changes it puts it
back (a second transaction) or checks that the transaction did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
SCENARIO = ROOT / "scenarios" / "brownfield-small.yaml"
LAB_TOPOLOGY, LAB_PREFIX = SCENARIO, "a3tx"


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(scope="module")
def scenario():
    from ani.scenario.manifest import load_scenario

    return load_scenario(SCENARIO)


def live(lab: Any) -> dict[str, Any]:
    from ani.device.apply import read

    return {r: read(lab, r) for r in lab.routers}


def snapshot(lab: Any, routers: list[str]) -> dict[str, tuple[str, str]]:
    """FRR running config text and nft ruleset text of each router (out of band)."""
    return {r: (lab.running_config(r), lab.exec(r, ["nft", "list", "ruleset"]).stdout) for r in routers}


def restore(lab: Any, configs: dict[str, Any]) -> None:
    from ani.intents.transaction import run_transaction

    res = run_transaction(lab, configs, confirm_timeout_s=60)
    assert res.ok, res.to_dict()


def with_blackhole(configs: dict[str, Any], routers: list[str]) -> dict[str, Any]:
    """``routers``' configs plus ``ip route 203.0.113.0/24 blackhole`` (copies; input untouched)."""
    from ani.device.model import StaticRoute

    out = {}
    for r in routers:
        c = configs[r].model_copy(deep=True)
        c.static_routes.append(StaticRoute(prefix="203.0.113.0/24", nexthop="blackhole"))
        out[r] = c
    return out


def test_onboard_site_across_four_edges(lab, scenario):
    from ani.intents import Pools, plan
    from ani.intents.transaction import run_transaction
    from ani.scenario.invariants import baseline_invariants

    configs = live(lab)
    change = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2"}
    result = plan([change], configs, pools=Pools.for_scenario(scenario, configs))
    assert result.routers == ["e1", "e2", "e3", "e4"]
    prefix = result.allocations["changes.0.prefix"]
    res = run_transaction(lab, result.configs, checks=baseline_invariants(scenario), confirm_timeout_s=60)
    try:
        assert res.ok and res.phase is None, res.to_dict()
        assert all(c["passed"] for c in res.checks) and res.checks, res.checks
        seq = result.allocations["changes.0.seq/e2/PL-TENANTS"]
        assert f"ip prefix-list PL-TENANTS seq {seq} permit {prefix}" in lab.running_config("e2")
        for r in ("e1", "e2", "e3", "e4"):
            assert prefix in lab.exec(r, ["nft", "list", "ruleset"]).stdout, r
            assert res.routers[r].steps == ["lock", "edit", "validate", "commit", "confirm", "unlock"]
    finally:
        restore(lab, {r: configs[r] for r in result.routers})
    for r in ("e1", "e2", "e3", "e4"):
        assert prefix not in lab.exec(r, ["nft", "list", "ruleset"]).stdout, r


def test_second_edge_refuses_its_part(lab):
    """e1's part is fine; e2's (a BGP neighbor with e2's own loopback address) passes YANG but
    FRR refuses it at commit: both end exactly as before."""
    from ani.device.model import Peer, StaticRoute
    from ani.intents.transaction import run_transaction

    configs = live(lab)
    before = snapshot(lab, ["e1", "e2"])
    e1 = configs["e1"].model_copy(deep=True)
    e1.static_routes.append(StaticRoute(prefix="203.0.113.0/24", nexthop="blackhole"))
    e2 = configs["e2"].model_copy(deep=True)
    e2.bgp.neighbors["100.64.255.12"] = Peer(remote_as=64999)
    res = run_transaction(lab, {"e1": e1, "e2": e2}, confirm_timeout_s=60)
    assert not res.ok and res.phase == "commit", res.to_dict()
    assert "commit" in res.routers["e1"].steps and "cancel-commit" in res.routers["e1"].steps
    assert "100.64.255.12" in (res.routers["e2"].error or ""), res.to_dict()
    assert res.restored_verified is True, res.to_dict()
    assert snapshot(lab, ["e1", "e2"]) == before


def test_failing_active_validation_rolls_back_all(lab):
    from ani.intents.transaction import run_transaction

    routers = ["e1", "e3"]
    before = snapshot(lab, routers)
    intended = with_blackhole(live(lab), routers)
    seen: list[bool] = []

    def route_present(lab: Any) -> tuple[bool, str]:
        seen.append(all("ip route 203.0.113.0/24 blackhole" in lab.running_config(r) for r in routers))
        return True, "route present"

    def service_check(lab: Any) -> tuple[bool, str]:
        return False, "tenant unreachable (injected)"

    res = run_transaction(lab, intended, checks=[route_present, service_check], confirm_timeout_s=60)
    assert not res.ok and res.phase == "active-validation", res.to_dict()
    assert seen == [True]  # the checks ran while the new config was committed
    assert [c["passed"] for c in res.checks] == [True, False]
    assert res.restored_verified is True, res.to_dict()
    for r in routers:
        assert "cancel-commit" in res.routers[r].steps and "confirm" not in res.routers[r].steps
    assert snapshot(lab, routers) == before


def test_static_route_distance_change(lab):
    """Issue 4 case 1: only the distance changes; the router ends with exactly that route at 200."""
    from ani.intents import plan
    from ani.intents.transaction import run_transaction

    configs = live(lab)
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
             "next_hop": "198.51.100.1"}
    try:
        first = plan([route], configs)
        res = run_transaction(lab, first.configs, confirm_timeout_s=60)
        assert res.ok, res.to_dict()
        lines = [ln.strip() for ln in lab.running_config("e1").splitlines() if "192.0.2.0/24" in ln]
        assert lines == ["ip route 192.0.2.0/24 198.51.100.1"]

        second = plan([{**route, "distance": 200}], live(lab))

        def intent_matches(lab: Any) -> tuple[bool, str]:
            got = [ln.strip() for ln in lab.running_config("e1").splitlines() if "192.0.2.0/24" in ln]
            return got == ["ip route 192.0.2.0/24 198.51.100.1 200"], f"running has {got}"

        res = run_transaction(lab, second.configs, checks=[intent_matches], confirm_timeout_s=60)
        assert res.ok, res.to_dict()
        lines = [ln.strip() for ln in lab.running_config("e1").splitlines() if "192.0.2.0/24" in ln]
        assert lines == ["ip route 192.0.2.0/24 198.51.100.1 200"]
    finally:
        restore(lab, {"e1": configs["e1"]})
    assert "192.0.2.0/24" not in lab.running_config("e1")


class Killed(BaseException):
    """Stands for the process dying between commit and confirm."""


def test_interrupted_between_commit_and_confirm_leaves_nothing(lab):
    """The transaction dies during active validation: no cancel-commit is sent, its sessions
    just close; the servers roll the unconfirmed (non-persistent) commits back."""
    import time

    from ani.intents.transaction import run_transaction

    routers = ["e2", "e4"]
    before = snapshot(lab, routers)
    intended = with_blackhole(live(lab), routers)
    seen: list[bool] = []

    def die(lab: Any) -> bool:
        seen.append(all("ip route 203.0.113.0/24 blackhole" in lab.running_config(r) for r in routers))
        raise Killed()

    with pytest.raises(Killed):
        run_transaction(lab, intended, checks=[die], confirm_timeout_s=30)
    assert seen == [True]
    deadline = time.monotonic() + 45  # the confirm timeout at the latest (not a timing assertion)
    while snapshot(lab, routers) != before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert snapshot(lab, routers) == before


def test_confirm_timeout_running_out_during_active_validation_is_a_failure(make_lab):
    """The confirm timeout expires while the checks run: each server rolls its router back by
    itself, and a confirming commit then has nothing to confirm (a plain commit of nothing, which
    succeeds). The transaction must not report success for a change no router holds."""
    import time

    from ani.intents.transaction import run_transaction

    tri = make_lab(Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml")
    routers = ["r2", "r3"]
    before = snapshot(tri, routers)
    intended = with_blackhole(live(tri), routers)

    def slow(lab: Any) -> bool:
        time.sleep(3)
        return True

    res = run_transaction(tri, intended, checks=[slow], confirm_timeout_s=1)
    assert (res.ok, res.phase) == (False, "confirm"), res.to_dict()
    assert "confirm timeout (1 s) ran out" in res.error
    assert res.restored_verified is True
    assert snapshot(tri, routers) == before
