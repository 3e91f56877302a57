"""A1 against a frozen router daemon (kill -STOP of bgpd): the call says ``timeout after N s
(opening vtysh on r2)`` and nothing else reaches stderr: libscrapli's own log lines (``session.
Session readTimeout: operation timeout exceeded...``) go to ``ani.adapters.cli_session`` at DEBUG
(issue 5 pass). The discarded session's vtysh does not outlive the call (over SSH: the lab's SSH
server ends it once the client went away). No timing asserted. Both transports of A1's CLI session.
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
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

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


def _opening(transport: str, lab) -> str:  # noqa: ANN001
    """What a call that timed out opening r2's CLI names."""
    if transport == "local":
        return "opening vtysh on r2"
    return f"opening the CLI over SSH (ani@127.0.0.1:{lab.ssh_endpoint('r2').port}) on r2"


def _vtysh_gone(netns: str, bound_s: float) -> list[int]:
    """vtysh pids left in ``netns`` after waiting up to ``bound_s`` seconds for them to end."""
    import time

    end = time.monotonic() + bound_s
    while (left := vtysh_pids(netns)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("transport", ["local", "ssh"])
def test_a_frozen_daemon_times_out_without_library_lines_on_stderr(lab, capfd, caplog, transport):
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    adapter = A1Adapter(lab, options={"command_timeout_s": 2, "transport": transport})
    adapter.open()
    try:
        capfd.readouterr()
        with caplog.at_level(logging.DEBUG, logger="ani.adapters.cli_session"):
            os.kill(pid, signal.SIGSTOP)
            try:
                frozen = adapter.call("execute_validation", {"device": "r2", "command": "show bgp summary"})
                # while bgpd is still frozen (over SSH the server ends it when the client left)
                left = _vtysh_gone(lab.netns("r2"), 0 if transport == "local" else 10)
            finally:
                os.kill(pid, signal.SIGCONT)
        err = capfd.readouterr().err
        again = adapter.call("execute_validation", {"device": "r2", "command": "show bgp summary"})
    finally:
        adapter.close()
    assert not frozen.ok and frozen.error.code.value == "timeout" and frozen.error.retriable
    assert f"timeout after 2 s ({_opening(transport, lab)})" in frozen.error.message
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
adapter = A1Adapter(lab, options={"command_timeout_s": 2, "transport": sys.argv[2]})
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


@pytest.mark.parametrize("transport", ["local", "ssh"])
def test_a_process_without_logging_setup_prints_nothing_of_the_library(lab, transport):
    """As ``ani mcp serve`` / ``ani run`` would: no test harness handler on the root logger, so
    a library warning would reach stderr through logging's last-resort handler."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, lab.id, transport], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["ok"] is False and res["code"] == "timeout"
    assert f"timeout after 2 s ({_opening(transport, lab)})" in res["message"]
    assert proc.stderr == "", proc.stderr
