"""ani.adapters.a4 without a lab: tools, options, service validation on patch / delete / commit /
revert, pinned allocations, the transaction applier's outcomes (with the transaction replaced
by a fake acting on in-memory routers), service_delta. The real-FRR side is
tests/integration/test_a4_services.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import ani.device.apply as device_apply
import ani.intents.transaction as transaction
from ani.adapters.a4 import A4Adapter, service_delta
from ani.errors import ConfigError
from ani.intents import network_configs
from ani.intents.transaction import RouterDetail, TransactionResult
from ani.protocol import Level
from ani.scenario.manifest import load_scenario

ROOT = Path(__file__).parent.parent.parent
RM = {"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-PEER-IN", "seq": 10,
      "set_local_preference": 200}
PEER = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65001,
        "route_map_in": "RM-PEER-IN"}


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch, scenario) -> dict[str, Any]:
    """The fake routers (the brownfield's configs); read() and the transaction act on them.
    ``running["_tx"]`` lists the transactions: (routers, check names); ``running["_fail"]``
    makes the next one fail: (phase, restored_verified)."""
    cfgs: dict[str, Any] = {r: c.canonical() for r, c in network_configs(scenario).items()}
    state: dict[str, Any] = {"_tx": [], "_fail": None}

    def fake_tx(lab, intended, checks=(), confirm_timeout_s=60, **kw):  # type: ignore[no-untyped-def]
        state["_tx"].append((sorted(intended), [c.name for c in checks]))
        details = {r: RouterDetail(steps=["lock", "edit", "validate", "commit"]) for r in sorted(intended)}
        if state["_fail"] is not None:
            phase, verified = state.pop("_fail")
            state["_fail"] = None
            if not verified:
                for r in intended:
                    cfgs[r] = intended[r].canonical()
            return TransactionResult(False, phase, details, [], verified, f"{phase} failed (fake)")
        for r in intended:
            cfgs[r] = intended[r].canonical()
        return TransactionResult(True, None, details, [], None, None)

    monkeypatch.setattr(device_apply, "read", lambda lab, r, *a, **kw: cfgs[r])
    monkeypatch.setattr(transaction, "run_transaction", fake_tx)
    return {"cfgs": cfgs, "state": state}


def _lab(tmp_path: Path, scenario) -> SimpleNamespace:
    (tmp_path / "lab").mkdir(exist_ok=True)
    return SimpleNamespace(dir=tmp_path / "lab", topology=scenario.topology)


@pytest.fixture
def a4(tmp_path: Path, running, scenario):  # type: ignore[no-untyped-def]
    a = A4Adapter(_lab(tmp_path, scenario), options={"site_network": "198.19.0.0/16"})
    a.open()
    yield a
    a.close()


def head(a: A4Adapter) -> str:
    return a.call("sot_list", {}).data["revision"]


def write(a: A4Adapter, path: str, change: dict) -> Any:
    return a.call("sot_patch", {"path": path, "base_revision": head(a),
                                "patch": [{"op": "add", "path": f"/{k}", "value": v} for k, v in change.items()]})


def test_level_and_tools(tmp_path: Path, scenario) -> None:
    a = A4Adapter(_lab(tmp_path, scenario))
    assert a.level is Level.A4
    specs = {t.name: t for t in a.tools()}
    assert set(specs) == {"get_topology", "sot_list", "sot_read", "sot_patch", "sot_diff", "sot_discard",
                          "sot_commit", "sot_log", "sot_revert", "drift", "reconcile_status", "reconcile",
                          "list_service_types", "get_service_schema", "list_services", "get_service", "plan",
                          "get_state", "sot_delete"}
    assert "apply" not in specs
    assert not specs["sot_delete"].read_only and specs["plan"].read_only
    assert specs["sot_delete"].input_schema["required"] == ["path", "base_revision"]
    assert "services/<name>.json" in specs["sot_patch"].description


@pytest.mark.parametrize("options,words", [
    ({"bogus": 1}, "bogus: unknown option (known: apply_bound_s, busy_timeout_s, check_bound_s, confirm_timeout_s, "
                   "keep_repo, max_changes, max_router_lines, max_tries, plan_bound_s, seq_limit, site_network, "
                   "site_prefixlen)"),
    ({"check_bound_s": 0}, "check_bound_s: Input should be greater than 0"),
    ({"check_bound_s": True}, "check_bound_s: Input should be a valid number"),
    ({"site_network": "198.19.0.0/33"}, "site_network: Input is not a valid IPv4 network"),
    ({"site_network": 5}, "site_network: must be a prefix string such as 198.19.0.0/16, got 5"),
    ({"confirm_timeout_s": 0}, "confirm_timeout_s: Input should be greater than or equal to 1"),
    ({"max_tries": 0}, "max_tries: Input should be greater than or equal to 1"),
    ({"site_network": "198.19.0.0/16", "site_prefixlen": 12}, "site_prefixlen 12 is shorter than site_network"),
])
def test_options_checked(tmp_path: Path, scenario, options: dict, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        A4Adapter(_lab(tmp_path, scenario), options=options)
    assert words in str(e.value)


def test_options_defaults_and_conversion(tmp_path: Path, scenario) -> None:
    a = A4Adapter(_lab(tmp_path, scenario), options={"site_network": "198.19.0.0/16", "check_bound_s": 5})
    assert (a.confirm_timeout_s, str(a.site_network), a.site_prefixlen, a.seq_limit, a.check_bound_s, a.max_tries) \
        == (60, "198.19.0.0/16", 24, None, 5.0, 2)


def test_commit_goes_through_one_transaction_with_the_site_checks(a4, running) -> None:
    site = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2"}
    res = write(a4, "services/site.json", site)
    assert res.ok, res.text
    # the pools chose prefix and gateway; they are now in the file
    assert res.data["pinned"] == {"prefix": "198.19.0.0/24", "gateway": "198.19.0.1"}
    doc = a4.call("sot_read", {"path": "services/site.json"}).data["document"]
    assert (doc["prefix"], doc["gateway"]) == ("198.19.0.0/24", "198.19.0.1")
    res = a4.call("sot_commit", {"message": "site"})
    assert res.ok and res.changed, res.text
    [(routers, checks)] = running["state"]["_tx"]
    assert routers == ["e1", "e2", "e3", "e4"]
    assert any(n.startswith("bgp e2 ->") for n in checks) and any("blue1" in n for n in checks), checks
    rec = res.data["reconcile"]
    assert rec["status"] == "converged" and rec["applied"] == routers
    assert rec["detail"]["services"] == ["prefix-list-entry/PL-TENANTS/198.19.0.0/24", "tenant-site/blue/nsite"]
    assert running["cfgs"]["e2"].interfaces["to-nsite"].addresses[0].ip.exploded == "198.19.0.1"
    # nothing left to do: no second transaction
    assert a4.call("reconcile", {}).data["reconcile"]["tries"] == 0
    assert len(running["state"]["_tx"]) == 1
    # list_services / plan work on the desired state at HEAD
    assert a4.call("get_service", {"id": "tenant-site/blue/nsite"}).ok
    again = a4.call("plan", {"changes": [site]})
    assert again.error.code.value == "invalid_intent" and "already exists" in again.error.message


@pytest.mark.parametrize("verified,code,changed", [(True, "rolled_back", False), (False, "rollback_failed", True)])
def test_failed_transaction_outcomes(a4, running, verified: bool, code: str, changed: bool) -> None:
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "203.0.113.0/24", "next_hop": "Null0"}
    assert write(a4, "services/route.json", route).ok
    running["state"]["_fail"] = ("active-validation", verified)
    res = a4.call("sot_commit", {"message": "route"})
    assert not res.ok and res.error.code.value == code and res.changed is changed, res.text
    rec = res.data["reconcile"]
    assert (rec["status"], rec["phase"], rec["applied"]) == ("failed", "active-validation", [])
    assert rec["detail"]["restored_verified"] is verified and rec["detail"]["committed"] == ["e1"]
    assert "transaction failed in phase active-validation" in rec["error"]
    assert a4.call("sot_log", {"n": 1}).data["log"][0]["files"] == ["services/route.json"]  # stays committed


def test_invalid_service_patch_leaves_nothing(a4) -> None:
    bad = {**PEER, "route_map_in": "RM-UNDEF"}
    res = write(a4, "services/peer.json", bad)
    assert res.error.code.value == "invalid_intent"
    assert res.data["errors"][0]["path"] == "services/peer.json:route_map_in"
    assert a4.call("sot_diff", {}).data["files"] == []
    # an existing file patched into an invalid one is put back byte for byte
    assert write(a4, "services/rm.json", RM).ok
    path = a4.repo.path / "services" / "rm.json"
    text = path.read_text()
    res = a4.call("sot_patch", {"path": "services/rm.json", "base_revision": head(a4),
                                "patch": [{"op": "replace", "path": "/routers", "value": ["e9"]}]})
    assert res.error.code.value == "invalid_intent" and res.data["errors"][0]["code"] == "unknown-router"
    assert path.read_text() == text
    # a prefix-list entry with its seq given: nothing to pin
    res = write(a4, "services/pl.json", {"type": "prefix-list-entry", "action": "add", "routers": ["e1"],
                                         "name": "PL-X", "prefix": "192.0.2.0/24", "seq": 5})
    assert res.ok and "pinned" not in res.data


def test_sot_delete(a4) -> None:
    assert write(a4, "services/a-rm.json", RM).ok
    assert write(a4, "services/b-peer.json", PEER).ok
    assert a4.call("sot_commit", {"message": "peer"}).ok
    base = head(a4)
    r = a4.call("sot_delete", {"path": "devices/e1.json", "base_revision": base})
    assert r.error.code.value == "invalid_arguments"
    r = a4.call("sot_delete", {"path": "services/nope.json", "base_revision": base})
    assert r.error.code.value == "not_found"
    r = a4.call("sot_delete", {"path": "services/b-peer.json", "base_revision": "0000000"})
    assert r.error.code.value == "conflict" and r.data["actual"] == base
    r = a4.call("sot_delete", {"path": "../x.json", "base_revision": base})
    assert r.error.code.value == "not_found"
    # the peering needs the route-map: refused, the file stays
    r = a4.call("sot_delete", {"path": "services/a-rm.json", "base_revision": base})
    assert r.error.code.value == "invalid_intent"
    assert r.data["errors"][0]["file"] == "services/b-peer.json" and "RM-PEER-IN" in r.error.message
    assert (a4.repo.path / "services" / "a-rm.json").is_file()
    assert a4.call("sot_diff", {}).data["files"] == []
    # the peering first, then the route-map
    assert a4.call("sot_delete", {"path": "services/b-peer.json", "base_revision": base}).ok
    assert a4.call("sot_delete", {"path": "services/a-rm.json", "base_revision": base}).ok
    res = a4.call("sot_commit", {"message": "no peer"})
    assert res.ok and res.data["reconcile"]["status"] == "converged"
    assert "192.0.2.9" not in a4._service_configs()["e1"].bgp.neighbors


def test_revert_that_breaks_a_service_is_undone(a4) -> None:
    assert write(a4, "services/a-rm.json", RM).ok
    assert a4.call("sot_commit", {"message": "route-map"}).ok
    first = head(a4)
    assert write(a4, "services/b-peer.json", PEER).ok
    assert a4.call("sot_commit", {"message": "peer"}).ok
    top = head(a4)
    res = a4.call("sot_revert", {"revision": first})
    assert res.error.code.value == "invalid_intent", res.text
    assert res.data["errors"][0]["file"] == "services/b-peer.json"
    assert head(a4) == top and a4.call("sot_diff", {}).data["files"] == []
    assert len(a4.call("sot_log", {"n": 10}).data["log"]) == 3


def test_service_delta(scenario) -> None:
    from ani.intents import plan

    before = network_configs(scenario)
    site = {"type": "tenant-site", "action": "onboard", "tenant": "red", "site": "nsite", "edge": "e2",
            "prefix": "198.19.65.0/24", "gateway": "198.19.65.1"}
    after = {**before, **plan([site], before).configs}
    added = service_delta(before, after)
    assert [c.service_id() for c in added] == ["prefix-list-entry/PL-TENANTS/198.19.65.0/24", "tenant-site/red/nsite"]
    assert {c.action for c in added} == {"onboard", "add"}
    removed = service_delta(after, before)
    assert [(c.service_id(), c.action) for c in removed] == [
        ("prefix-list-entry/PL-TENANTS/198.19.65.0/24", "remove"), ("tenant-site/red/nsite", "remove")]
    assert service_delta(before, before) == []
    # a changed distance is the new spec
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "Null0"}
    one = {**before, **plan([route], before).configs}
    two = {**one, **plan([{**route, "distance": 200}], one).configs}
    [ch] = service_delta(one, two)
    assert (ch.service_id(), ch.distance) == ("static-route/e1/192.0.2.0/24/Null0", 200)


def test_a_service_path_written_another_way_is_still_validated_and_pinned(a4) -> None:
    site = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2"}
    for path in ("./services/site.json", "services//site.json"):
        res = write(a4, path, {**site, "action": "remove"})
        assert (res.ok, res.error.code.value) == (False, "invalid_intent"), path
        assert res.data["errors"][0]["file"] == "services/site.json"
        assert a4.call("sot_list", {}).data["uncommitted"] == []
    res = write(a4, "./services/site.json", site)
    assert res.ok and res.data["pinned"] == {"prefix": "198.19.0.0/24", "gateway": "198.19.0.1"}, res.data
