"""A1 against a frozen router daemon (kill -STOP of bgpd): the call says ``timeout after N s
(opening vtysh on r2)`` and nothing else reaches stderr: libscrapli's own log lines (``session.
Session readTimeout: operation timeout exceeded...``) go to ``ani.adapters.cli_session`` at DEBUG
(issue 5 pass). The discarded session's vtysh does not outlive the call. No timing asserted.
One lab of tests/data/a1_pair.yaml (r2 runs bgpd only)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ani.adapters.a1 import A1Adapter
from ani.lab import frr

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "a1q", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def vtysh_pids(netns: str) -> list[int]:
    """Pids of vtysh processes running in network namespace ``netns``."""
    target = os.stat(f"/run/netns/{netns}").st_ino
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if os.stat(d / "ns" / "net").st_ino != target:
                continue
            if (d / "comm").read_text().strip() == "vtysh":
                out.append(int(d.name))
        except OSError:
            continue
    return out


def test_a_frozen_daemon_times_out_without_library_lines_on_stderr(lab, capfd, caplog):
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    adapter = A1Adapter(lab, options={"command_timeout_s": 2})
    adapter.open()
    try:
        capfd.readouterr()
        with caplog.at_level(logging.DEBUG, logger="ani.adapters.cli_session"):
            os.kill(pid, signal.SIGSTOP)
            try:
                frozen = adapter.call("execute_validation", {"device": "r2", "command": "show bgp summary"})
                left = vtysh_pids(lab.netns("r2"))  # while bgpd is still frozen
            finally:
                os.kill(pid, signal.SIGCONT)
        err = capfd.readouterr().err
        again = adapter.call("execute_validation", {"device": "r2", "command": "show bgp summary"})
    finally:
        adapter.close()
    assert not frozen.ok and frozen.error.code.value == "timeout" and frozen.error.retriable
    assert "timeout after 2 s (opening vtysh on r2)" in frozen.error.message
    # the library's lines are not on stderr (fd 2, written by anyone in this process) ...
    assert "readTimeout" not in err and "operation timeout exceeded" not in err, err
    assert "session.Session" not in err, err
    # ... they are on the adapter's logger, at DEBUG, for whoever configures logging
    lib = [r for r in caplog.records if r.name == "ani.adapters.cli_session"]
    assert lib and all(r.levelno == logging.DEBUG for r in lib)
    assert any("timeout" in r.getMessage().lower() for r in lib)
    assert left == [], f"the discarded session's vtysh is still running: {left}"
    assert again.ok, again.text  # bgpd runs again: a fresh session opens
    assert "64502" in again.text


SCRIPT = """
import json, os, signal, sys
from ani.adapters.a1 import A1Adapter
from ani.lab import frr
from ani.lab.lab import Lab
lab = Lab.attach(sys.argv[1], own=False)
pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
adapter = A1Adapter(lab, options={"command_timeout_s": 2})
adapter.open()
os.kill(pid, signal.SIGSTOP)
try:
    r = adapter.call("get_running_config", {"device": "r2"})
finally:
    os.kill(pid, signal.SIGCONT)
adapter.close()
print(json.dumps({"ok": r.ok, "code": r.error.code.value if r.error else None,
                  "message": r.error.message if r.error else None}))
"""


def test_a_process_without_logging_setup_prints_nothing_of_the_library(lab):
    """As ``ani mcp serve`` / ``ani run`` would: no test harness handler on the root logger, so
    a library warning would reach stderr through logging's last-resort handler."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, lab.id], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["ok"] is False and res["code"] == "timeout"
    assert "timeout after 2 s (opening vtysh on r2)" in res["message"]
    assert proc.stderr == "", proc.stderr
