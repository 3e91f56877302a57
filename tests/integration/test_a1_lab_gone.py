"""``ani lab down`` under an attached A1 adapter: every tool says ``lab <id> is not running``
(code device_unreachable), as update_config already did, instead of the session library's
``OperationException: EOF`` (issue 5 pass). A real lab of tests/data/a1_pair.yaml, downed by the
real CLI in another process while the adapter holds an open vtysh session to r1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ani.adapters.a1 import A1Adapter
from ani.lab.lab import Lab

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

ROOT = Path(__file__).parent.parent.parent
PAIR = ROOT / "tests" / "data" / "a1_pair.yaml"


@pytest.mark.parametrize("transport", ["local", "ssh"])
def test_tools_after_the_lab_is_downed_under_the_adapter_say_it_is_not_running(make_lab, transport):
    lab = make_lab(PAIR, lab_id="a1gone" + __import__("secrets").token_hex(2), netconf=False)
    adapter = A1Adapter(Lab.attach(lab.id, own=False), options={"command_timeout_s": 5, "transport": transport})
    adapter.open()
    try:
        first = adapter.call("get_running_config", {"device": "r1"})
        assert first.ok and "hostname r1" in first.text
        assert adapter.session("r1").is_open  # a live vtysh session, about to lose its lab

        down = subprocess.run([sys.executable, "-m", "ani.cli", "lab", "down", lab.id], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr

        calls = {
            "get_running_config r1 (open session)": ("r1", "get_running_config", {"device": "r1"}),
            "execute_validation r1": ("r1", "execute_validation", {"device": "r1", "command": "show bgp summary"}),
            "get_running_config r2 (never opened)": ("r2", "get_running_config", {"device": "r2"}),
            "update_config r1": ("r1", "update_config", {"device": "r1", "commands": ["router bgp 64501"]}),
            "snapshot r2": ("r2", "snapshot", {"device": "r2"}),
        }
        for what, (dev, tool, args) in calls.items():
            res = adapter.call(tool, args)
            assert not res.ok, what
            assert res.error.code.value == "device_unreachable", (what, res.error)
            assert res.error.retriable is False, what  # the lab is gone: a retry cannot succeed
            assert res.error.message.startswith(f"{dev}: lab {lab.id} is not running"), (what, res.error.message)
            assert "EOF" not in res.error.message and "Exception" not in res.error.message, (what, res.error.message)
    finally:
        adapter.close()
