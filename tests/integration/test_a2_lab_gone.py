"""``ani lab down`` under an attached A2 adapter: NETCONF tools say ``lab <id> is not running``
(code device_unreachable), not ``has no NETCONF server (started with netconf=False?)`` (issue 5
pass, same kind as A1's EOF). A real lab of tests/data/a1_pair.yaml with its NETCONF server,
downed by the real CLI in another process while the adapter holds a session to r1."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from ani.adapters.a2 import A2Adapter
from ani.lab.lab import Lab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
PAIR = ROOT / "tests" / "data" / "a1_pair.yaml"


def test_netconf_tools_after_the_lab_is_downed_say_it_is_not_running(make_lab):
    lab = make_lab(PAIR, lab_id="a2gone" + secrets.token_hex(2), netconf=True)
    adapter = A2Adapter(Lab.attach(lab.id, own=False))
    adapter.open()
    try:
        first = adapter.call("get_config", {"device": "r1"})
        assert first.ok, first.text
        down = subprocess.run([sys.executable, "-m", "ani.cli", "lab", "down", lab.id], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        for dev, tool, args in (
            ("r1", "get_config", {"device": "r1"}),
            ("r2", "get_state", {"device": "r2"}),
            ("r1", "validate", {"device": "r1"}),
        ):
            res = adapter.call(tool, args)
            assert not res.ok and res.error.code.value == "device_unreachable", (tool, res.error)
            assert res.error.message.startswith(f"{dev}: lab {lab.id} is not running"), res.error.message
            assert "netconf=False" not in res.error.message
    finally:
        adapter.close()
