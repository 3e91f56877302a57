"""The A3-T adapter (``ani.adapters.a3t``) on a real FRR lab over real NETCONF.

One lab for the module: the brownfield of scenarios/brownfield-small.yaml with the onboard-site
task's new host ``nsite`` linked to edge e1 (variant seed 0). Every test leaves the routers as
it found them (checked: running configs and nftables rulesets compared out of band).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ani.errors import ErrorCode

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
SCENARIO_PATH = ROOT / "scenarios" / "brownfield-small.yaml"


def _variant():
    from ani.scenario import get_task_class
    from ani.scenario.manifest import load_scenario

    scenario = load_scenario(SCENARIO_PATH)
    return scenario, get_task_class("onboard-site").variant(scenario, 0)


SCENARIO, VARIANT = _variant()
LAB_TOPOLOGY, LAB_PREFIX = VARIANT.lab_topology(SCENARIO), "a3ta"
P = VARIANT.params  # tenant blue, edge e1, site nsite, prefix 198.19.195.0/24, gateway 198.19.195.1
ONBOARD = {"type": "tenant-site", "action": "onboard", "tenant": P["tenant"], "site": P["site"], "edge": P["edge"],
           "prefix": P["prefix"], "gateway": P["gateway"]}
REMOVE = {"type": "tenant-site", "action": "remove", "tenant": P["tenant"], "site": P["site"]}


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture
def adapter(lab, open_adapter):
    from ani.adapters.a3t import A3TAdapter

    return open_adapter(A3TAdapter(lab, options={"check_bound_s": 20}))


def snapshot(lab: Any) -> dict[str, tuple[str, str]]:
    """FRR running config text and nft ruleset text of every router (out of band)."""
    return {r: (lab.running_config(r), lab.exec(r, ["nft", "list", "ruleset"]).stdout) for r in lab.routers}


def restore(lab: Any, before: dict[str, Any]) -> None:
    """Put every router back to ``before`` (DeviceConfigs) with a plain transaction."""
    from ani.device.apply import read
    from ani.intents.transaction import run_transaction

    differ = {r: c for r, c in before.items() if read(lab, r) != c}
    if differ:
        res = run_transaction(lab, differ, confirm_timeout_s=60)
        assert res.ok, res.to_dict()


@pytest.fixture
def configs(lab):
    """The routers' configs before the test; put back after it if the test left them changed."""
    from ani.device.apply import read

    before = {r: read(lab, r) for r in lab.routers}
    yield before
    restore(lab, before)


def test_plan_is_a_dry_run(lab, adapter, configs):
    before = snapshot(lab)
    res = adapter.call("plan", {"changes": [ONBOARD]})
    assert res.ok and not res.changed, res.text
    assert res.data["routers"] == ["e1", "e2", "e3", "e4"]
    assert res.data["allocations"] == {"changes.0.seq/e1/PL-TENANTS": 30}
    assert f"+ip prefix-list PL-TENANTS seq 30 permit {P['prefix']}" in res.data["diff"]["e1"]
    assert f"+ ip address {P['gateway']}/24" in res.data["diff"]["e1"]
    assert "reach nsite -> blue2 (198.18.12.10)" in res.data["checks"]
    assert "isolated nsite -/-> red1 (198.18.21.10)" in res.data["checks"]
    assert "reach e4 -> e1 (198.19.195.1)" in res.data["checks"]  # the other edges ping the gateway
    assert res.data["warnings"] == []  # to-nsite is cabled in the variant's topology
    assert snapshot(lab) == before


def test_apply_onboards_a_site_then_remove_takes_it_away(lab, adapter, configs):
    before = snapshot(lab)
    res = adapter.call("apply", {"changes": [ONBOARD]})
    assert res.ok and res.changed, res.text
    tx = res.data["transaction"]
    assert tx["ok"] and tx["phase"] is None
    assert res.data["services"] == ["tenant-site/blue/nsite"]
    names = [c["name"] for c in tx["checks"]]
    assert "reach nsite -> blue4 (198.18.14.10)" in names and "reach blue1 -> blue2 (198.18.12.10)" in names
    assert all(c["passed"] for c in tx["checks"]) and len(tx["checks"]) > 60
    assert f"ip prefix-list PL-TENANTS seq 30 permit {P['prefix']}" in lab.running_config("e1")
    # the route is on another edge (BGP carried it), seen through get_state and out of band
    state = adapter.call("get_state", {"device": "e3", "what": "routes"})
    assert state.ok and P["prefix"] in state.data["state"], sorted(state.data["state"])
    assert P["prefix"] in lab.vtysh("e3", "show ip route").stdout
    assert adapter.call("get_service", {"id": "tenant-site/blue/nsite"}).data["service"]["spec"]["edge"] == "e1"
    for r in ("e1", "e2", "e3", "e4"):
        assert P["prefix"] in lab.exec(r, ["nft", "list", "set", "inet", "fw", "tenant_blue"]).stdout, r

    gone = adapter.call("apply", {"changes": [REMOVE]})
    assert gone.ok and gone.changed, gone.text
    assert snapshot(lab) == before
    assert adapter.call("get_service", {"id": "tenant-site/blue/nsite"}).error.code == ErrorCode.NOT_FOUND


def test_case2_route_map_undefined_is_refused_before_frr(lab, adapter, configs):
    """Issue 4 case 2 through the tools: a neighbor with route-map RM-UNDEF (FRR would warn and
    keep the line) is refused by plan and apply, naming RM-UNDEF; nothing reached FRR."""
    before = snapshot(lab)
    change = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9",
              "remote_as": 65001, "route_map_in": "RM-UNDEF"}
    for tool in ("plan", "apply"):
        res = adapter.call(tool, {"changes": [change]})
        assert not res.ok and res.error.code == ErrorCode.INVALID_INTENT, (tool, res.text)
        assert "RM-UNDEF" in res.error.message and not res.changed
        assert res.data["errors"][0]["path"] == "changes.0.route_map_in"
    assert snapshot(lab) == before
    assert "192.0.2.9" not in lab.running_config("e1")


def test_case2_netconf_validate_refuses_route_map_undefined(lab, configs):
    """Issue 4 case 2 at A2: the same neighbor written into e1's candidate over NETCONF; the
    server's validation (edit-config with rollback-on-error, else validate) refuses it naming
    RM-UNDEF, and e1's running config never gets it."""
    from ani.registry import create_adapter

    ns = "urn:ani:yang:ani-frr"
    change = (f'<frr xmlns="{ns}"><bgp><neighbor><address>192.0.2.9</address><remote-as>65001</remote-as>'
              "</neighbor><ipv4-unicast><neighbor><address>192.0.2.9</address><route-map-in>RM-UNDEF"
              "</route-map-in></neighbor></ipv4-unicast></bgp></frr>")
    before = snapshot(lab)
    with create_adapter("a2", lab) as a2:
        assert a2.call("lock", {"device": "e1"}).ok
        try:
            res = a2.call("edit_config", {"device": "e1", "config": change})
            if res.ok:  # accepted into the candidate: validate must refuse it
                res = a2.call("validate", {"device": "e1"})
            assert not res.ok and res.error.code == ErrorCode.COMMAND_FAILED, res.text
            assert "RM-UNDEF" in res.error.message
        finally:
            a2.call("discard_changes", {"device": "e1"})
            a2.call("unlock", {"device": "e1"})
    assert snapshot(lab) == before
    assert "192.0.2.9" not in lab.running_config("e1")


def test_seq_pool_exhausted(lab, open_adapter, configs):
    from ani.adapters.a3t import A3TAdapter

    small = open_adapter(A3TAdapter(lab, options={"seq_limit": 20}))  # e1's PL-TENANTS holds 10 and 20
    before = snapshot(lab)
    res = small.call("apply", {"changes": [ONBOARD]})
    assert not res.ok and res.error.code == ErrorCode.RESOURCE_EXHAUSTED, res.text
    assert "seq/e1/PL-TENANTS" in res.error.message and res.data["pool"] == "seq/e1/PL-TENANTS"
    assert snapshot(lab) == before


def test_failing_active_validation_rolls_back(lab, open_adapter, configs):
    """A blackhole route for red2's prefix on e1 passes validation (a static route may cover any
    prefix) but cuts red1 (on e1) off red2: the active validation's baseline check
    'reach red1 -> red2' fails, the transaction rolls back, every router verified back."""
    from ani.adapters.a3t import A3TAdapter

    a = open_adapter(A3TAdapter(lab, options={"check_bound_s": 4}))
    change = {"type": "static-route", "action": "add", "router": "e1", "prefix": "198.18.22.0/24",
              "next_hop": "blackhole"}
    planned = a.call("plan", {"changes": [change]})
    assert planned.ok and planned.data["routers"] == ["e1"], planned.text
    assert "reach red1 -> red2 (198.18.22.10)" in planned.data["checks"]
    before = snapshot(lab)
    res = a.call("apply", {"changes": [change]})
    assert not res.ok and res.error.code == ErrorCode.ROLLED_BACK, res.text
    tx = res.data["transaction"]
    assert tx["phase"] == "active-validation" and tx["restored_verified"] is True
    assert "active-validation" in res.error.message and "reach red1 -> red2" in res.error.message
    assert "reach red1 -> red2 (198.18.22.10)" in res.data["failed_checks"]
    assert "reach blue1 -> blue2 (198.18.12.10)" not in res.data["failed_checks"]
    assert "cancel-commit" in tx["routers"]["e1"]["steps"] and "confirm" not in tx["routers"]["e1"]["steps"]
    assert not res.changed
    assert snapshot(lab) == before


def test_onboarding_onto_a_missing_interface_is_caught_by_active_validation(lab, open_adapter, configs):
    """e2 has no interface to-ghost: the config is valid (FRR keeps the address for an interface
    that may appear) but the prefix is never connected, so never advertised. Validation cannot
    know; the site's own check (the tenant's other edges ping its gateway) fails, all rolled back."""
    from ani.adapters.a3t import A3TAdapter

    a = open_adapter(A3TAdapter(lab, options={"check_bound_s": 4}))
    ghost = {"type": "tenant-site", "action": "onboard", "tenant": "red", "site": "ghost", "edge": "e2",
             "prefix": "198.19.9.0/24"}
    before = snapshot(lab)
    # plan cannot refuse it, but the topology tells why it will fail
    warning = "e2 has no interface to-ghost in the topology (nothing is cabled there)"
    planned = a.call("plan", {"changes": [ghost]})
    assert planned.ok and len(planned.data["warnings"]) == 1 and warning in planned.data["warnings"][0]
    res = a.call("apply", {"changes": [ghost]})
    assert not res.ok and res.error.code == ErrorCode.ROLLED_BACK, res.text
    assert res.data["transaction"]["restored_verified"] is True
    assert res.data["transaction"]["phase"] == "active-validation"
    assert set(res.data["failed_checks"]) == {f"reach {e} -> e2 (198.19.9.1)" for e in ("e1", "e3", "e4")}
    assert warning in res.error.message  # the failure names the likely cause
    assert snapshot(lab) == before


def test_malformed_arguments_are_structured_errors(lab, adapter, configs):
    before = snapshot(lab)
    cases = [
        ("apply", {"changes": "tenant-site"}, ErrorCode.INVALID_ARGUMENTS, "changes"),
        ("apply", {"changes": [ONBOARD], "colour": 1}, ErrorCode.INVALID_ARGUMENTS, "colour"),
        ("apply", {"changes": [{"type": "vpn", "action": "add"}]}, ErrorCode.INVALID_INTENT, "vpn/add"),
        ("apply", {"changes": [{**ONBOARD, "edge": "e9"}]}, ErrorCode.INVALID_INTENT, "e9"),
        ("get_state", {"device": "e9", "what": "routes"}, ErrorCode.UNKNOWN_DEVICE, "e9"),
        ("get_state", {"device": "e1", "what": "mpls"}, ErrorCode.INVALID_ARGUMENTS, "what"),
        ("get_service_schema", {"type": "vpn"}, ErrorCode.NOT_FOUND, "vpn"),
    ]
    for tool, args, code, word in cases:
        res = adapter.call(tool, args)
        assert not res.ok and res.error.code == code and word in res.error.message, (tool, args, res.text)
    assert snapshot(lab) == before


def test_get_state_views(lab, adapter):
    views = {w: adapter.call("get_state", {"device": "e2", "what": w}) for w in
             ("interfaces", "routes", "bgp", "ospf", "firewall", "config")}
    assert all(v.ok for v in views.values()), {w: v.text for w, v in views.items() if not v.ok}
    ifs = {i["name"]: i for i in views["interfaces"].data["state"]}
    assert "198.18.12.1/24" in ifs["to-blue2"]["addresses"] and "100.64.255.12/32" in ifs["lo"]["addresses"]
    routes = views["routes"].data["state"]
    for _ in range(40):  # blue1's prefix, from e1 through BGP (a fresh lab may still be learning it)
        if "198.18.11.0/24" in routes:
            break
        time.sleep(0.5)
        routes = adapter.call("get_state", {"device": "e2", "what": "routes"}).data["state"]
    assert [r["protocol"] for r in routes["198.18.11.0/24"]] == ["bgp"]
    assert [r["protocol"] for r in routes["100.64.255.11/32"]] == ["ospf"]
    peers = views["bgp"].data["state"]["peers"]
    assert {"100.64.255.1", "100.64.255.2"} <= set(peers)
    assert all(p["state"] == "Established" for p in peers.values())
    assert views["ospf"].data["state"]["neighbors"]
    assert "set tenant_blue" in views["firewall"].data["state"]
    assert "ip prefix-list PL-TENANTS seq 10 permit 198.18.12.0/24" in views["config"].data["state"]


def test_issue23_change_set_bounds_refuse_and_roll_back(lab, open_adapter, configs):
    """Issue 23 §1 (2,000 prefix-list entries on 4 routers in one change set), at test size: over
    ``max_changes`` or ``max_router_lines`` the change set is refused before anything is sent;
    past ``apply_bound_s`` the transaction starts no step and every router is verified back."""
    from ani.adapters.a3t import A3TAdapter

    before = snapshot(lab)
    changes = [{"type": "prefix-list-entry", "action": "add", "routers": ["c1", "c2", "e1", "e2"],
                "name": "PL-BIG", "prefix": f"10.99.{i}.0/24"} for i in range(12)]
    small = open_adapter(A3TAdapter(lab, options={"max_changes": 10, "max_router_lines": 11}))
    res = small.call("apply", {"changes": changes})
    assert res.error is not None and res.error.code == ErrorCode.INVALID_INTENT and "at most 10" in res.text
    res = small.call("apply", {"changes": changes[:10]})
    assert res.ok, res.text  # 10 changes, 10 lines per router: within both bounds
    res = small.call("apply", {"changes": [
        {**c, "prefix": f"10.98.{i}.0/24"} for i, c in enumerate(changes[:10])]})
    assert res.ok, res.text  # 20 lines on each router in all, 10 in this call
    restore(lab, configs)
    assert snapshot(lab) == before
    res = open_adapter(A3TAdapter(lab, options={"max_router_lines": 11})).call(
        "apply", {"changes": changes})
    assert res.error is not None and res.error.code == ErrorCode.INVALID_INTENT
    assert "c1: the change set would change 12 configuration lines; at most 11" in res.text
    assert snapshot(lab) == before  # nothing sent
    t0 = time.monotonic()
    res = open_adapter(A3TAdapter(lab, options={"apply_bound_s": 0.001})).call("apply", {"changes": changes})
    assert res.error is not None and res.error.code == ErrorCode.ROLLED_BACK, res.text
    assert "bound of 0.001 s ran out" in res.text and res.data["transaction"]["restored_verified"] is True
    assert time.monotonic() - t0 < 60
    assert snapshot(lab) == before
