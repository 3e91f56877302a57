"""A3-R with a frozen FRR daemon (SIGSTOP of bgpd): reading the router runs into the read bound,
and the tools say so with code ``timeout`` (retriable) and ``timeout after N s (reading the
running config)``, as A1 does, not ``device_unreachable`` with an empty "(timed out): " detail
(issue 5 second new-user pass). One real lab of tests/data/a1_pair.yaml (no NETCONF needed)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from ani.lab import frr
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "a3rfz", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def test_drift_and_commit_on_a_frozen_router_are_timeouts(lab, open_adapter):
    adapter = open_adapter(create_adapter("a3r", lab))
    head = adapter.call("sot_log", {"n": 1}).data["log"][0]["revision"]
    doc = adapter.call("sot_read", {"path": "devices/r2.json"}).data["document"]
    route = {"next_hop": "10.0.12.1", "distance": 1}
    op = ({"op": "add", "path": "/static_routes/10.77.0.0~124", "value": route} if "static_routes" in doc
          else {"op": "add", "path": "/static_routes", "value": {"10.77.0.0/24": route}})
    patched = adapter.call("sot_patch", {"path": "devices/r2.json", "base_revision": head, "patch": [op]})
    assert patched.ok, patched.text
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    os.kill(pid, signal.SIGSTOP)
    try:
        drift = adapter.call("drift", {})
        commit = adapter.call("sot_commit", {"message": "a static route on r2"})
    finally:
        os.kill(pid, signal.SIGCONT)
    assert drift.ok is False and drift.error.code.value == "timeout" and drift.error.retriable
    assert "r2: timeout after 10 s (reading the running config)" in drift.error.message
    assert commit.ok is False and commit.error.code.value == "timeout" and commit.error.retriable, commit.text
    assert "r2: timeout after 10 s (reading the running config)" in commit.error.message
    # bgpd runs again: the committed change is reconciled onto r2
    again = adapter.call("reconcile", {})
    assert again.ok, again.text
    assert "ip route 10.77.0.0/24 10.0.12.1" in lab.running_config("r2")
