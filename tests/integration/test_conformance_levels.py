"""Every built-in adapter passes the conformance suite (ani.testing.AdapterConformance) on a real
lab: a0, a1 (with the NetConfBench draft's optional tools), a2, a3t, a3r, a4, and the blocklist
ablation over a0 and over a1.

One lab of scenarios/brownfield-small.yaml (with NETCONF) for the whole module: each check opens
its own adapter and leaves the routers as it found them (the suite reads them out of band before
and after; the one change that is not undone by its level, A0's, is undone by the test). Each
level's failing change is one its devices refuse, not one the adapter refuses before sending:

| level | failing change | promise |
|---|---|---|
| a0 | a shell line that configures a prefix-list, then exits 3 | `changed` exact (the line stays: undone by the test) |
| a1 | `update_config` whose third line FRR refuses (a peer-group that does not exist) | rolled back |
| a2 | `edit_config` + `commit` of a BGP neighbor at e1's own address (bgpd refuses it) | running unchanged |
| a3t | `apply` of a blackhole route that cuts red1 off red2 (active validation fails) | rolled back |
| a3r | `sot_patch` + `sot_commit` of that neighbor (the reconcile cannot reach it) | non-convergent, routers unchanged |
| a4 | the same neighbor on e2 through the source of truth (the transaction's commit fails) | rolled back |
| blocklist | a command the blocklist refuses (`no router bgp`) | blocked, nothing sent |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from ani.registry import create_adapter
from ani.testing import AdapterConformance, FailingChange, lab_state

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "conf"  # conftest's module_lab
NS = "urn:ani:yang:ani-frr"
LINE = "ip prefix-list PL-CONFORMANCE seq 5 permit 192.0.2.0/24"
E1_LO, E2_LO = "100.64.255.11", "100.64.255.12"  # e1's and e2's loopbacks (their BGP router ids)


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


class LevelChecks(AdapterConformance):
    """A built-in level on the module's lab; a subclass names the level and its calls."""

    level: ClassVar[str]
    options: ClassVar[dict[str, Any]] = {}
    blocklist: ClassVar[bool] = False

    @pytest.fixture
    def make_adapter(self, lab):
        return lambda: create_adapter(self.level, lab, blocklist=self.blocklist, options=dict(self.options))

    @pytest.fixture
    def read_device(self, lab):
        return lambda: lab_state(lab)


def _sot_head(adapter: Any) -> str:
    res = adapter.call("sot_list", {})
    assert res.ok, res.text
    return res.data["revision"]


def _neighbor_patch(path: str, address: str) -> Any:
    return lambda a: {"path": path, "base_revision": _sot_head(a),
                      "patch": [{"op": "add", "path": f"/bgp/neighbors/{address}", "value": {"remote_as": 64999}}]}


A1_READS = {"get_running_config": {"device": "e1"}, "execute_validation": {"device": "e1", "command": "show ip route"},
            "list_snapshots": {"device": "e1"}, "check_device_status": {"devices": ["e1"], "metrics": ["interface"]},
            "update_config": {"device": "e1", "commands": [LINE]}, "snapshot": {"device": "e1"},
            "rollback": {"device": "e1", "snapshot_id": "e1-s1"},
            "batch_configure_devices": {"devices": ["e1"], "commands": [LINE]}}
SOT_READS = {"sot_read": {"path": "devices/e1.json"}, "sot_log": {"n": 2}, "drift": {"devices": ["e1"]},
             "sot_commit": {"message": "m"}, "sot_revert": {"revision": "HEAD"}}
SERVICE_READS = {"get_service_schema": {"type": "static-route"}, "get_service": {"id": "bgp-peering/c1/100.64.255.11"},
                 "get_state": {"device": "e1", "what": "routes"},
                 "plan": {"changes": [{"type": "static-route", "action": "add", "router": "e1",
                                       "prefix": "203.0.113.0/24", "next_hop": "blackhole"}]}}


class TestA0Conformance(LevelChecks):
    level = "a0"

    def sample_calls(self, adapter):
        return {"shell": {"device": "e1", "command": "true"}}

    def failing_change(self, adapter):
        def undo(a: Any) -> None:
            a.lab.vtysh("e1", ["configure terminal", f"no {LINE}"])
            assert LINE not in a.lab.running_config("e1")

        return FailingChange("shell", {"device": "e1", "command": f"vtysh -c 'configure terminal' -c '{LINE}'; exit 3"},
                             restores=False, code="command_failed", undo=undo)


class TestA1Conformance(LevelChecks):
    level = "a1"
    options = {"extra_tools": ["batch_configure_devices", "check_device_status"]}

    def sample_calls(self, adapter):
        return A1_READS

    def failing_change(self, adapter):
        return FailingChange("update_config", {"device": "e1", "commands": [
            LINE, "router bgp 64500", "neighbor 10.0.12.9 peer-group PG-NOPE"]}, code="rolled_back")


class TestA2Conformance(LevelChecks):
    level = "a2"

    def sample_calls(self, adapter):
        return {d: {"device": "e1"} for d in ("get_config", "get_state", "compare", "validate", "discard_changes")} | {
            "get_schema": {}, "commit": {"devices": ["e1"]}, "edit_config": {"device": "e1", "config": f'<frr xmlns="{NS}"/>'}}

    def failing_change(self, adapter):
        neighbor = (f'<frr xmlns="{NS}"><bgp><neighbor><address>{E1_LO}</address>'
                    "<remote-as>64999</remote-as></neighbor></bgp></frr>")
        return FailingChange("commit", {"devices": ["e1"]}, before=[("edit_config", {"device": "e1", "config": neighbor})],
                             code="command_failed",
                             undo=lambda a: a.call("discard_changes", {"device": "e1"}))


class TestA3TConformance(LevelChecks):
    level = "a3t"
    options = {"check_bound_s": 4}

    def sample_calls(self, adapter):
        return SERVICE_READS | {"apply": SERVICE_READS["plan"]}

    def failing_change(self, adapter):
        blackhole = {"type": "static-route", "action": "add", "router": "e1", "prefix": "198.18.22.0/24",
                     "next_hop": "blackhole"}
        return FailingChange("apply", {"changes": [blackhole]}, code="rolled_back")


class TestA3RConformance(LevelChecks):
    level = "a3r"

    def sample_calls(self, adapter):
        return SOT_READS

    def failing_change(self, adapter):
        return FailingChange("sot_commit", {"message": "a neighbor at e1's own address"},
                             before=[("sot_patch", _neighbor_patch("devices/e1.json", E1_LO))], code="non_convergent")


class TestA4Conformance(LevelChecks):
    level = "a4"
    options = {"check_bound_s": 10.0}

    def sample_calls(self, adapter):
        return SOT_READS | {k: v for k, v in SERVICE_READS.items()}

    def failing_change(self, adapter):
        return FailingChange("sot_commit", {"message": "a neighbor at e2's own address"},
                             before=[("sot_patch", _neighbor_patch("devices/e2.json", E2_LO))], code="rolled_back")


class TestA0BlocklistConformance(TestA0Conformance):
    blocklist = True

    def failing_change(self, adapter):
        return FailingChange("shell", {"device": "e1", "command": "vtysh -c 'configure terminal' -c 'no router bgp 64500'"},
                             code="blocked")


class TestA1BlocklistConformance(TestA1Conformance):
    blocklist = True

    def failing_change(self, adapter):
        return FailingChange("update_config", {"device": "e1", "commands": ["no router bgp 64500"]}, code="blocked")
