"""``ani mcp serve`` on a real lab under hostile use (adversarial pass of issue 5): option values
the adapter cannot use, an HTTP port in use, a client that disconnects mid-call, two servers on
one lab. One lab of tests/data/a1_pair.yaml for the module; device state is read out of band.
The rule: bad input exits 2 with one line naming it and nothing is left running; the lab stays up.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from procs import interrupt, mcp_server_pids, vtysh_below

from ani.lab import frr

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_mcp_server_left")]

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "madv", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def serve(lab, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ani.cli", "mcp", "serve", "--lab", lab.id, *extra],
                          cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


def lab_is_up(lab) -> bool:
    return "router bgp 64502" in lab.running_config("r2") and "router bgp 64501" in lab.running_config("r1")


@pytest.mark.parametrize("args, says", [
    (["--level", "a1", "--option", "command_timeout_s=abc"], "a1 options: command_timeout_s: Input should be a valid number"),
    (["--level", "a1", "--option", "platform=nope"], "a1 options: platform: adapters/nope.yaml not found"),
    (["--level", "a1", "--option", "max_output_bytes=[1]"], "a1 options: max_output_bytes: Input should be a valid integer"),
    (["--level", "a2", "--option", "rpc_timeout_s=abc"], "a2 options: rpc_timeout_s: Input should be a valid number"),
    (["--level", "a0", "--option", "timeout_s=0"], "a0 options: timeout_s: Input should be greater than 0"),
    (["--level", "a1", "--trajectory", "/tmp"], "--trajectory /tmp: cannot write it (Is a directory)"),
])
def test_an_option_value_the_adapter_cannot_use_exits_2_naming_it(lab, args, says):
    """These used to exit 1 with a Python traceback (then 2 naming the Python exception type);
    every level parses its options with a strict model that names the option and the known ones."""
    res = serve(lab, *args)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: ") and says in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""  # the MCP wire stays clean
    assert lab_is_up(lab)


def test_an_http_port_in_use_exits_2_naming_it_before_anything_opens(lab):
    """Used to open the adapter, then exit 1 with uvicorn's BaseExceptionGroup traceback."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        res = serve(lab, "--level", "a1", "--http", "--port", str(port))
    finally:
        busy.close()
    assert res.returncode == 2, res.stderr
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in res.stderr
    assert "in use" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    res = serve(lab, "--level", "a1", "--http", "--port", "70000")
    assert res.returncode == 2 and "--port" in res.stderr
    assert lab_is_up(lab)


def test_a_client_that_disconnects_mid_call_closes_the_adapter_and_leaves_the_lab_up(lab):
    """bgpd of r2 frozen: a read of r2 waits for its 3 s bound; the client closes both pipes while
    it waits. The server finishes the call, closes the adapter (its vtysh sessions end) and exits 0."""
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1",
         "--option", "command_timeout_s=3"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def send(msg: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}})
        assert json.loads(proc.stdout.readline())["id"] == 0
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "get_running_config", "arguments": {"device": "r2"}}})
        first = json.loads(proc.stdout.readline())
        assert first["result"]["isError"] is False  # r2's session is open now
        serving = [p for p in mcp_server_pids(lab.id)]
        assert serving and any(vtysh_below(p, direct=True) for p in serving)
        os.kill(pid, signal.SIGSTOP)
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "get_running_config", "arguments": {"device": "r2"}}})
        proc.stdin.close()
        proc.stdout.close()
        proc.wait(timeout=90)
    finally:
        os.kill(pid, signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, proc.stderr.read()[-2000:]
    assert not any(vtysh_below(p, direct=True) for p in serving)
    assert lab_is_up(lab)


def test_two_servers_on_one_lab_both_apply_their_changes(lab):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1"],
                                   cwd=str(ROOT), env={**os.environ})
    results: dict[str, list[types.CallToolResult]] = {"A": [], "B": []}

    async def one(tag: str) -> None:
        async with Client(params) as client:
            for i in range(3):
                line = f"ip prefix-list PL-TWO-{tag} seq {5 + 5 * i} permit 10.{i}.0.0/24"
                results[tag].append(await client.call_tool("update_config", {"device": "r1", "commands": [line]}))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "A")
            tg.start_soon(one, "B")

    anyio.run(main)
    assert [r.is_error for r in results["A"] + results["B"]] == [False] * 6
    cfg = lab.running_config("r1")
    for tag in "AB":
        for i in range(3):
            assert f"ip prefix-list PL-TWO-{tag} seq {5 + 5 * i} permit 10.{i}.0.0/24" in cfg


#: the 8 malformed forms of issue 12 §3 that used to get no reply, with the answer each calls for
#: (JSON-RPC 2.0 §5.1: -32700 parse error with id null; -32600 invalid request, its id if readable)
MALFORMED = [
    ("not JSON", "this is not json", -32700, None),
    ("truncated", '{"jsonrpc":"2.0","id":3,"method":"tools/list"', -32700, None),
    ("batch", '[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]', -32600, None),
    ("deep, with id", '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_topology",'
     '"arguments":{"x":' + "[" * 5000 + "]" * 5000 + "}}}", -32600, 5),
    ("deep, no id", "[" * 100000 + "]" * 100000, -32600, None),
    ("100,000-digit integer", '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":'
     '"get_topology","arguments":{"n":' + "9" * 100000 + "}}}", -32600, 6),
    ("no jsonrpc", '{"id":7,"method":"tools/list"}', -32600, 7),
    ("lone surrogate", '{"jsonrpc":"2.0","id":"s8","method":"tools/call","params":{"name":"\\ud800",'
     '"arguments":{}}}', -32600, "s8"),
]
#: requests whose id is not a string or an integer (issue 23 §1): the SDK took them for
#: notifications (no reply over stdio, 202 over HTTP); JSON-RPC 2.0 §5 wants -32600, id null
BAD_IDS = [
    (f"id {kind}", '{"jsonrpc":"2.0","id":%s,"method":"tools/list"}' % value, -32600, None)
    for kind, value in [("null", "null"), ("object", '{"a":1}'), ("true", "true"), ("false", "false"),
                        ("float", "1.5"), ("1.0", "1.0"), ("array", "[9]")]
]


def test_every_malformed_line_gets_its_json_rpc_error_and_the_server_keeps_serving(lab):
    """The SDK's stdio transport handed each of these to the session as an exception, which logged
    it and answered nothing (a client with an id waited for its own timeout). ani.mcp.stdio answers
    each on the wire; a valid request afterwards is still answered."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import threading

    watchdog = threading.Timer(120, proc.kill)  # a missing reply fails the test, never hangs it
    watchdog.start()

    def send(line: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "raw", "version": "0"}}}))
        assert json.loads(proc.stdout.readline())["id"] == 0
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for what, line, code, rid in MALFORMED + BAD_IDS:
            send(line)
            reply = proc.stdout.readline()
            assert reply, f"{what}: no reply (server exited: {proc.poll()})"
            answer = json.loads(reply)
            assert answer["jsonrpc"] == "2.0" and "result" not in answer, what
            assert (answer["error"]["code"], answer["id"]) == (code, rid), (what, answer)
        send(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 99
        assert "update_config" in [t["name"] for t in answer["result"]["tools"]]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert lab_is_up(lab)


def test_every_malformed_http_body_gets_its_json_rpc_error_and_the_server_keeps_serving(lab):
    """Over streamable HTTP the SDK answered a request with id null by 202 Accepted (no reply)
    and an envelope that is not JSON-RPC by -32602; each gets what stdio answers now (HTTP 400,
    -32700 / -32600), and the session goes on."""
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1", "--http", "--port", "0"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = _served_url(proc)
        accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        with httpx.Client(timeout=60) as http:
            init = http.post(url, headers=accept, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}})
            assert init.status_code == 200, init.text
            session = {**accept, "mcp-session-id": init.headers["mcp-session-id"],
                       "mcp-protocol-version": "2025-06-18"}
            http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            for what, line, code, rid in MALFORMED + BAD_IDS:
                res = http.post(url, headers=session, content=line.encode())
                assert res.status_code == 400, (what, res.status_code, res.text[:200])
                answer = res.json()
                assert answer["jsonrpc"] == "2.0" and "result" not in answer, what
                assert (answer["error"]["code"], answer["id"]) == (code, rid), (what, answer)
            res = http.post(url, headers=session, json={"jsonrpc": "2.0", "id": 99, "method": "tools/list"})
            assert res.status_code == 200, res.text
            data = [json.loads(ln[5:]) for ln in res.text.splitlines() if ln.startswith("data:") and ln[5:].strip()]
            assert [d["id"] for d in data] == [99]
            assert "update_config" in [t["name"] for t in data[0]["result"]["tools"]]
    finally:
        interrupt(proc)
    assert proc.returncode == 0
    assert lab_is_up(lab)


def _served_url(proc: subprocess.Popen[str]) -> str:
    """The URL ``ani mcp serve --http --port 0`` prints on stderr (within 60 s)."""
    import re
    import select
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 1)
        if ready:
            line = proc.stderr.readline()
            assert line, f"server exited: rc={proc.poll()}"
            m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            if m:
                return m.group(1)
    raise AssertionError("the server did not print its URL")


def test_mcp_serve_blocklist_at_a1_refuses_a_blocklisted_line_and_serves_the_rest(lab):
    """issue 23 §6: ``ani mcp serve --blocklist`` (the spelling of ``ani run``) wraps the level in
    the blocklist ablation; the agent's blocklisted line is an isError result, code blocked, and
    the router keeps its BGP process."""
    async def main() -> tuple[Any, Any, str]:
        params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), args=[
            "-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1", "--blocklist"])
        async with Client(params) as client:
            blocked = await client.call_tool("update_config", {"device": "r1", "commands": ["no router bgp 64501"]})
            read = await client.call_tool("get_running_config", {"device": "r1"})
            return blocked, read, client.instructions or ""

    blocked, read, instructions = anyio.run(main)
    assert blocked.is_error and blocked.structured_content["error"]["code"] == "blocked"
    assert read.is_error is False
    assert instructions.startswith("ANI level a1 with the blocklist ablation on lab ")
    assert lab_is_up(lab)
