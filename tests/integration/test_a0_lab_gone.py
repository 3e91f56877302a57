"""``ani lab down`` under an attached A0 adapter: ``shell`` says ``lab <id> is not running
(network namespace ... is gone)``, code device_unreachable, like A1 and A2 (issue 5 pass). A real
lab of tests/data/a1_pair.yaml downed by the real CLI in another process."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from ani.adapters.a0 import A0Adapter
from ani.lab.lab import Lab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
PAIR = ROOT / "tests" / "data" / "a1_pair.yaml"


def test_shell_after_the_lab_is_downed_says_it_is_not_running(make_lab):
    lab = make_lab(PAIR, lab_id="a0gone" + secrets.token_hex(2), netconf=False)
    adapter = A0Adapter(Lab.attach(lab.id, own=False))
    adapter.open()
    try:
        first = adapter.call("shell", {"device": "r1", "command": "vtysh -c 'show running-config'"})
        assert first.ok and "hostname r1" in first.text, first.text
        down = subprocess.run([sys.executable, "-m", "ani.cli", "lab", "down", lab.id], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        res = adapter.call("shell", {"device": "r2", "command": "true"})
        assert not res.ok and res.error.code.value == "device_unreachable"
        assert res.error.message.startswith(f"r2: lab {lab.id} is not running (network namespace "), res.error.message
    finally:
        adapter.close()
