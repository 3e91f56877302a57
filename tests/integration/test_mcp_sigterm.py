"""``ani mcp serve`` stopped by SIGTERM (issue 5, adversarial pass: SIGTERM ended the server
without closing the adapter, exit -15): like SIGINT, the adapter is closed (its vtysh sessions
end), the lab stays up, exit 0. Real subprocesses on one real lab of tests/data/a1_pair.yaml,
over stdio (raw JSON-RPC) and streamable HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from procs import alive, vtysh_below

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "mterm", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def lab_is_up(lab) -> bool:
    return "router bgp 64502" in lab.running_config("r2") and "router bgp 64501" in lab.running_config("r1")


def start(lab, *extra: str, new_session: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1", *extra],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=new_session)


def stdio_call(proc: subprocess.Popen[str]) -> dict[str, Any]:
    def send(msg: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "raw", "version": "0"}}})
    assert json.loads(proc.stdout.readline())["id"] == 0
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {"name": "get_running_config", "arguments": {"device": "r2"}}})
    return json.loads(proc.stdout.readline())


def stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, proc.stderr.read()


@pytest.mark.parametrize("new_session", [False, True], ids=["child", "session-leader"])
def test_sigterm_on_stdio_closes_the_adapter_and_exits_0(lab, new_session):
    """``session-leader``: started with setsid as desktop clients do, so the server forks
    (leave_session_leadership) and the parent forwards the signal."""
    proc = start(lab, new_session=new_session)
    try:
        assert stdio_call(proc)["result"]["isError"] is False  # r2's vtysh session is open now
        sessions = vtysh_below(proc.pid)
        assert sessions, "the adapter holds no vtysh session"
        os.kill(proc.pid, signal.SIGTERM)
    finally:
        code, err = stop(proc)
    assert code == 0, err[-2000:]
    assert "ani mcp: SIGTERM: closing the adapter (the lab stays up)" in err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10  # reaped by init if reparented; they end with the close
    while any(alive(p) for p in sessions) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in sessions)
    assert lab_is_up(lab)


def test_sigterm_on_http_closes_the_adapter_and_exits_0(lab):
    proc = start(lab, "--http", "--port", "0")
    try:
        line = proc.stderr.readline()
        m = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", line)
        assert m, line
        os.kill(proc.pid, signal.SIGTERM)
    finally:
        code, err = stop(proc)
    assert code == 0, err[-2000:]
    assert "closing the adapter" in err and "Traceback" not in err
    assert lab_is_up(lab)
