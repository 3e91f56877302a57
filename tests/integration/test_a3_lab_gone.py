"""``ani lab down`` under attached A3-T, A3-R and A4 adapters: their tools say ``lab <id> is not
running`` (code device_unreachable), not a dead-daemon report (A3-T read ``FRR daemon bgpd, ...
is not running``) nor an uncaught git error (A3-R / A4 raised ``BadName: Ref 'HEAD'``: the
source of truth lives in the lab's dir) (issue 5 pass). A real lab of tests/data/a1_pair.yaml
with NETCONF, downed by the real CLI in another process."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from ani.lab.lab import Lab
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
PAIR = ROOT / "tests" / "data" / "a1_pair.yaml"
PLAN = {"changes": [{"type": "static-route", "action": "add", "router": "r1", "prefix": "10.9.9.0/24",
                     "next_hop": "10.0.12.2"}]}
CALLS = {
    "a3t": [("get_state", {"device": "r1", "what": "bgp"}), ("list_services", {}), ("plan", PLAN)],
    "a3r": [("drift", {}), ("sot_list", {}), ("reconcile", {})],
    "a4": [("drift", {}), ("list_services", {}), ("sot_read", {"path": "devices/r1.json"})],
}


def test_service_and_sot_tools_after_the_lab_is_downed_say_it_is_not_running(make_lab):
    lab = make_lab(PAIR, lab_id="a3gone" + secrets.token_hex(2), netconf=True)
    adapters = {}
    try:
        for level in CALLS:
            adapters[level] = create_adapter(level, Lab.attach(lab.id, own=False))
            adapters[level].open()
        assert adapters["a3r"].call("drift", {}).ok  # all is well before
        down = subprocess.run([sys.executable, "-m", "ani.cli", "lab", "down", lab.id], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        for level, calls in CALLS.items():
            for tool, args in calls:
                res = adapters[level].call(tool, args)  # never raises
                what = f"{level} {tool}"
                assert not res.ok and res.error.code.value == "device_unreachable", (what, res.error)
                assert f"lab {lab.id} is not running" in res.error.message, (what, res.error.message)
                assert res.error.retriable is False, what  # the lab is gone: a retry cannot succeed
                assert "daemon" not in res.error.message, (what, res.error.message)
    finally:
        for a in adapters.values():
            a.close()
