"""A4 (``ani.adapters.a4``) on real FRR and a real git repository: service files committed to
the source of truth are applied as transactions with active validation; revert and delete
remove them; failed transactions roll back; invalid service files are refused.

Each test has its own lab of the onboard-site variant topology of scenarios/brownfield-small.yaml
(the brownfield plus the new site's host ``nsite`` cabled to the variant's edge, unconfigured).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
SCENARIO = ROOT / "scenarios" / "brownfield-small.yaml"
SEED = 2  # tenant red, edge e2, site nsite


@pytest.fixture(scope="module")
def scenario():
    from ani.scenario.manifest import load_scenario

    return load_scenario(SCENARIO)


@pytest.fixture(scope="module")
def variant(scenario):
    from ani.scenario import get_task_class

    return get_task_class("onboard-site").variant(scenario, SEED)


@pytest.fixture
def lab(make_lab, scenario, variant):
    import secrets

    return make_lab(variant.lab_topology(scenario), lab_id="a4s" + secrets.token_hex(3))


@pytest.fixture
def a4(lab, open_adapter):
    from ani.adapters.a4 import A4Adapter

    return open_adapter(A4Adapter(lab, options={"check_bound_s": 10.0}))


def snapshot(lab: Any) -> dict[str, tuple[str, str]]:
    """FRR running config text and nft ruleset text of every router (out of band)."""
    return {r: (lab.running_config(r), lab.exec(r, ["nft", "list", "ruleset"]).stdout) for r in lab.routers}


def head(a4: Any) -> str:
    res = a4.call("sot_list", {})
    assert res.ok, res.text
    return res.data["revision"]


def add_ops(change: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"op": "add", "path": f"/{k}", "value": v} for k, v in change.items()]


def write_service(a4: Any, path: str, change: dict[str, Any]) -> Any:
    return a4.call("sot_patch", {"path": path, "patch": add_ops(change), "base_revision": head(a4)})


def site_change(variant: Any) -> dict[str, Any]:
    p = variant.params
    return {"type": "tenant-site", "action": "onboard", "tenant": p["tenant"], "site": p["site"],
            "edge": p["edge"], "prefix": p["prefix"], "gateway": p["gateway"]}


def site_on_routers(lab: Any, variant: Any) -> dict[str, bool]:
    """Per router: does it run any part of the variant's site (entry, address, set element)?"""
    p = variant.params
    return {r: p["prefix"] in lab.running_config(r) or p["gateway"] in lab.running_config(r)
            or p["prefix"] in lab.exec(r, ["nft", "list", "ruleset"]).stdout for r in lab.routers}


def test_service_file_applied_as_a_transaction_then_reverted_and_deleted(lab, a4, scenario, variant):
    from ani.observer import Observer, summarize

    p = variant.params
    before = snapshot(lab)
    path = f"services/tenant-site-{p['tenant']}-{p['site']}.json"
    res = write_service(a4, path, site_change(variant))
    assert res.ok and res.data["changed"] and "pinned" not in res.data, res.text
    assert site_on_routers(lab, variant) == {r: False for r in lab.routers}  # nothing sent before the commit

    res = a4.call("sot_commit", {"message": "onboard red/nsite"})
    assert res.ok and res.changed, res.text
    rec = res.data["reconcile"]
    assert rec["status"] == "converged" and rec["tries"] == 1, rec
    assert rec["applied"] == ["e1", "e2", "e3", "e4"]  # the edge + every router with set tenant_red
    tx = rec["detail"]["transaction"]
    assert tx["ok"] and tx["phase"] is None
    assert {r: d["steps"] for r, d in tx["routers"].items()} == {
        r: ["lock", "edit", "validate", "commit", "confirm", "unlock"] for r in ("e1", "e2", "e3", "e4")}
    # active validation ran the site's own checks and the tenant's baseline, and they passed
    names = [c["name"] for c in tx["checks"]]
    assert tx["checks"] and all(c["passed"] for c in tx["checks"]), tx["checks"]
    assert any("nsite" in n and "red1" in n for n in names), names
    assert any(n.startswith("isolated") and "nsite" in n and "blue" in n for n in names), names
    assert f"tenant-site/{p['tenant']}/{p['site']}" in rec["detail"]["services"]

    # the routers run it
    cfg = lab.running_config("e2")
    assert f"ip prefix-list PL-TENANTS seq 30 permit {p['prefix']}" in cfg
    assert f"interface to-nsite\n ip address {p['gateway']}/24" in cfg
    for e in ("e1", "e2", "e3", "e4"):
        assert p["prefix"] in lab.exec(e, ["nft", "list", "set", "inet", "fw", "tenant_red"]).stdout, e
    for r in ("c1", "c2"):
        assert snapshot(lab)[r] == before[r]  # no set there: nothing sent
    hidden = Observer(lab).evaluate(variant.hidden_tests, bound_s=20.0)
    assert all(r.passed for r in hidden), summarize(hidden)
    assert a4.call("drift", {}).data["drift"] == {}
    # the service tools see it in the desired state; the history names the file
    svc = a4.call("get_service", {"id": f"tenant-site/{p['tenant']}/{p['site']}"})
    assert svc.ok and svc.data["service"]["spec"]["edge"] == "e2", svc.text
    log = a4.call("sot_log", {"n": 2}).data["log"]
    assert log[0]["files"] == [path] and log[0]["message"] == "onboard red/nsite"
    commit = log[0]["revision"]

    # revert: a new commit without the file; reconciled: the site is gone from every router
    res = a4.call("sot_revert", {"revision": commit})
    assert res.ok and res.changed, res.text
    rec = res.data["reconcile"]
    assert rec["status"] == "converged" and rec["applied"] == ["e1", "e2", "e3", "e4"], rec
    assert f"-tenant-site/{p['tenant']}/{p['site']}" in rec["detail"]["services"]
    assert site_on_routers(lab, variant) == {r: False for r in lab.routers}
    assert snapshot(lab) == before
    assert a4.call("get_service", {"id": f"tenant-site/{p['tenant']}/{p['site']}"}).error.code == "not_found"

    # again, and this time removed with sot_delete + commit
    assert write_service(a4, path, site_change(variant)).ok
    assert a4.call("sot_commit", {"message": "onboard again"}).ok
    assert site_on_routers(lab, variant)["e2"]
    res = a4.call("sot_delete", {"path": path, "base_revision": head(a4)})
    assert res.ok and res.data["changed"], res.text
    assert [f["status"] for f in a4.call("sot_diff", {}).data["files"]] == ["deleted"]
    res = a4.call("sot_commit", {"message": "offboard red/nsite"})
    assert res.ok and res.data["reconcile"]["status"] == "converged", res.text
    assert snapshot(lab) == before
    # a third reconcile has nothing to do
    res = a4.call("reconcile", {})
    assert res.ok and not res.changed and res.data["reconcile"]["tries"] == 0


def test_failing_active_validation_rolls_back_every_router(lab, a4):
    """A static route on e1 that blackholes blue2's site: FRR takes it, but the tenant's
    baseline (blue1 reaches blue2) fails during active validation: rolled back, verified."""
    before = snapshot(lab)
    start = head(a4)
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "198.18.12.0/24", "next_hop": "Null0"}
    assert write_service(a4, "services/blackhole.json", route).ok
    res = a4.call("sot_commit", {"message": "blackhole blue2 on e1"})
    assert not res.ok and res.error.code == "rolled_back", res.text
    rec = res.data["reconcile"]
    assert rec["status"] == "failed" and rec["phase"] == "active-validation", rec
    assert rec["detail"]["restored_verified"] is True
    failed = [c["name"] for c in rec["detail"]["transaction"]["checks"] if not c["passed"]]
    assert any("blue1" in n and "blue2" in n for n in failed), failed
    assert "cancel-commit" in rec["detail"]["transaction"]["routers"]["e1"]["steps"]
    assert snapshot(lab) == before  # exactly as before
    # the commit stays in the history; the drift shows what it wanted
    log = a4.call("sot_log", {"n": 2}).data["log"]
    assert log[1]["revision"] == start and log[0]["files"] == ["services/blackhole.json"]
    drift = a4.call("drift", {}).data["drift"]
    assert list(drift) == ["e1"] and drift["e1"][0]["pointer"].startswith("/static_routes/198.18.12.0~124")
    assert a4.call("reconcile_status", {}).data["reconcile"]["status"] == "failed"
    # reverting it: the routers already run the result, nothing is sent
    res = a4.call("sot_revert", {"revision": log[0]["revision"]})
    assert res.ok and not res.changed and res.data["reconcile"]["tries"] == 0, res.text
    assert snapshot(lab) == before


def test_router_refusing_its_part_leaves_both_as_before(lab, a4):
    """One commit: a service on e1 (a blackhole route, fine) and e2's own file given a BGP
    neighbor at e2's own loopback (valid as a document; FRR refuses it at commit)."""
    before = snapshot(lab)
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "203.0.113.0/24", "next_hop": "blackhole"}
    assert write_service(a4, "services/route.json", route).ok
    res = a4.call("sot_patch", {"path": "devices/e2.json", "base_revision": head(a4), "patch": [
        {"op": "add", "path": "/bgp/neighbors/100.64.255.12", "value": {"remote_as": 64999}}]})
    assert res.ok, res.text
    res = a4.call("sot_commit", {"message": "route on e1, bad neighbor on e2"})
    assert not res.ok and res.error.code == "rolled_back", res.text
    rec = res.data["reconcile"]
    assert rec["status"] == "failed" and rec["phase"] == "commit", rec
    tx = rec["detail"]["transaction"]
    assert sorted(tx["routers"]) == ["e1", "e2"] and tx["restored_verified"] is True
    assert "cancel-commit" in tx["routers"]["e1"]["steps"]
    assert "100.64.255.12" in (tx["routers"]["e2"]["error"] or ""), tx
    assert snapshot(lab) == before
    assert sorted(a4.call("drift", {}).data["drift"]) == ["e1", "e2"]


def test_invalid_service_refused_at_patch_and_at_commit(lab, a4, variant):
    before = snapshot(lab)
    start = head(a4)
    bad = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9",
           "remote_as": 65001, "route_map_in": "RM-UNDEF"}
    res = write_service(a4, "services/peer.json", bad)
    assert not res.ok and res.error.code == "invalid_intent", res.text
    assert "services/peer.json" in res.error.message and "RM-UNDEF" in res.error.message
    [err] = res.data["errors"]
    assert (err["code"], err["path"], err["file"], err["field"]) == (
        "unknown-reference", "services/peer.json:route_map_in", "services/peer.json", "route_map_in")
    assert "services/peer.json" not in a4.call("sot_list", {}).data["files"]
    assert a4.call("sot_diff", {}).data["files"] == []

    # a removing action is not a service file
    res = write_service(a4, "services/x.json", {**site_change(variant), "action": "remove"})
    assert not res.ok and res.error.code == "invalid_intent"
    assert res.data["errors"][0]["field"] == "action" and "delete its file" in res.error.message

    # a valid site file, then e1's own file takes an address inside the site's prefix: the
    # device patch is a valid document, the commit is refused naming the service file
    p = variant.params
    assert write_service(a4, "services/site.json", site_change(variant)).ok
    inside = p["prefix"].replace(".0/24", ".77/24")
    res = a4.call("sot_patch", {"path": "devices/e1.json", "base_revision": start, "patch": [
        {"op": "add", "path": "/interfaces/to-blue1/addresses/-", "value": inside}]})
    assert res.ok, res.text
    res = a4.call("sot_commit", {"message": "should not commit"})
    assert not res.ok and res.error.code == "invalid_intent", res.text
    [err] = res.data["errors"]
    assert (err["file"], err["field"], err["code"]) == ("services/site.json", "prefix", "prefix-overlap"), err
    assert "e1 interface to-blue1" in err["message"]
    assert head(a4) == start and len(a4.call("sot_log", {"n": 5}).data["log"]) == 1  # nothing committed
    assert sorted(f["path"] for f in a4.call("sot_diff", {}).data["files"]) == ["devices/e1.json", "services/site.json"]
    assert a4.call("reconcile_status", {}).data["reconcile"]["status"] == "pending"
    assert snapshot(lab) == before
