"""ani.mcp.refusal: a stdio server that cannot start answers the client's requests with the reason
(logic, over real pipes; with real MCP clients: tests/integration/test_mcp_refusal.py and
tests/integration/test_mcp_sdk1.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REFUSE = ("import sys\nfrom ani.mcp import refusal\n"
          "n = refusal.refuse('no level (test)', bound_s=float(sys.argv[1]), after_init_s=float(sys.argv[2]))\n"
          "print(f'answered {n}', file=sys.stderr)\n")


def start(bound_s: float = 30, after_init_s: float = 5) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", REFUSE, str(bound_s), str(after_init_s)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_every_request_gets_the_reason_notifications_and_junk_get_nothing():
    proc = start()
    lines = [
        {"jsonrpc": "2.0", "id": "d1", "method": "server/discover", "params": {}},   # mcp 2.x's probe
        {"jsonrpc": "2.0", "method": "notifications/initialized"},                  # no id: no answer
        "this is not json",
        {"jsonrpc": "2.0", "id": 1, "result": {}},                                  # a response: none
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
    ]
    out, err = proc.communicate("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
                                timeout=60)
    replies = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in replies] == ["d1", 0]
    for r in replies:
        assert r["jsonrpc"] == "2.0" and r["error"]["code"] == -32603
        assert r["error"]["message"] == "ani mcp serve cannot start: no level (test)"
    assert "answered 2" in err and proc.returncode == 0


def test_after_initialize_it_waits_only_briefly_for_the_client_to_close():
    proc = start(bound_s=600, after_init_s=0.5)
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize"}) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    proc.wait(timeout=120)  # stdin still open, the overall bound far away: the after-initialize bound ends it
    proc.stdin.close()


def test_a_client_that_never_writes_is_not_waited_for_past_the_bound():
    proc = start(bound_s=0.5, after_init_s=600)
    proc.wait(timeout=120)  # stdin open and silent: only the overall bound ends it
    assert proc.stdout.read() == ""
    proc.stdin.close()


def test_only_where_a_client_can_listen():
    """Not at a terminal, not on a test runner's replaced stdin; yes on a pipe."""
    code = "from ani.mcp import refusal; print(refusal.client_may_listen())"
    piped = subprocess.run([sys.executable, "-c", code], cwd=ROOT, input="", capture_output=True, text=True)
    assert piped.stdout.strip() == "True"
    replaced = subprocess.run([sys.executable, "-c", "import io, sys; sys.stdin = io.StringIO(''); " + code],
                              cwd=ROOT, input="", capture_output=True, text=True)
    assert replaced.stdout.strip() == "False"
