"""``ani mcp serve`` on a real lab, driven by the official MCP client (issue 5 §2 and case 1).

One lab of tests/data/a1_pair.yaml for the module (r1: ospfd + bgpd, r2: bgpd). The server is
reached three ways: in-process (``mcp.Client`` on the server object, JSON-RPC over memory
streams), over stdio (the client spawns ``python -m ani.cli mcp serve --lab ID --level a1``,
which attaches to the lab by id), and over streamable HTTP on 127.0.0.1. Device state is read
out of band through the lab, never through the server. After each test no server process that
names the lab is left.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from ani.adapters.a1 import A1Adapter
from ani.lab import frr
from ani.mcp.server import build_server
from procs import interrupt

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_mcp_server_left")]

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "mcp", False

NETCONFBENCH = {"get_topology", "get_running_config", "update_config", "execute_validation"}
A1_TOOLS = NETCONFBENCH | {"snapshot", "rollback", "list_snapshots"}
REJECTED = "neighbor 10.0.12.9 peer-group PG-NOPE"  # passes the allowlist, FRR refuses it
UPDATE = ["router bgp 64501", "neighbor 10.0.12.9 remote-as 64509", REJECTED]


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def running(lab, router: str = "r1") -> str:
    text = lab.running_config(router)
    return text[text.index("Current configuration:"):] if "Current configuration:" in text else text


def text_of(res: types.CallToolResult) -> str:
    return "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))


def serve_argv(lab, *extra: str) -> list[str]:
    return ["-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1", *extra]


def check_session_calls(out: dict[str, Any], lab, before: str) -> None:
    """The assertions shared by every transport (see ``session_calls``)."""
    names = {t.name for t in out["tools"]}
    assert names == A1_TOOLS and NETCONFBENCH <= names
    by = {t.name: t for t in out["tools"]}
    assert by["get_running_config"].annotations.read_only_hint is True
    assert by["execute_validation"].annotations.read_only_hint is True
    assert by["update_config"].annotations.read_only_hint is False
    assert by["update_config"].input_schema["required"] == ["device", "commands"]
    assert by["update_config"].input_schema["properties"]["commands"]["type"] == "array"
    assert by["get_topology"].input_schema["properties"]["devices"]["type"] == "array"

    ok = out["running"]
    assert ok.is_error is False and "router bgp 64501" in text_of(ok)
    assert ok.structured_content["ok"] is True

    rej = out["rejected"]
    assert rej.is_error is True
    assert REJECTED in text_of(rej)
    assert rej.structured_content["error"]["code"] == "rolled_back"
    assert rej.structured_content["changed"] is False
    assert running(lab) == before  # nothing left applied

    unk = out["unknown"]
    assert unk.is_error is True and "'r9'" in text_of(unk)
    assert unk.structured_content["error"]["code"] == "unknown_device"


async def session_calls(client: Client) -> dict[str, Any]:
    return {
        "tools": (await client.list_tools()).tools,
        "running": await client.call_tool("get_running_config", {"device": "r1"}),
        "rejected": await client.call_tool("update_config", {"device": "r1", "commands": UPDATE}),
        "unknown": await client.call_tool("get_running_config", {"device": "r9"}),
    }


# -- in-process ---------------------------------------------------------------------------------


def test_in_process_a1_tools_success_rejected_line_unknown_router(lab):
    before = running(lab)
    adapter = A1Adapter(lab)
    adapter.open()
    try:
        async def main() -> dict[str, Any]:
            async with Client(build_server(adapter), mode="legacy") as client:  # memory streams
                return await session_calls(client)

        out = anyio.run(main)
    finally:
        adapter.close()
    check_session_calls(out, lab, before)
    assert [e["tool"] for e in adapter.trajectory.events] == ["get_running_config", "update_config",
                                                              "get_running_config"]


# -- stdio ------------------------------------------------------------------------------------


def test_stdio_subprocess_attached_by_lab_id(lab, tmp_path):
    before = running(lab)
    traj = tmp_path / "traj.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_argv(lab, "--trajectory", str(traj)),
        cwd=str(ROOT),
        env={**os.environ},
    )

    async def main() -> dict[str, Any]:
        async with Client(params) as client:
            out = await session_calls(client)
            assert client.server_info is None or client.server_info.name == "ani"
            return out

    out = anyio.run(main)
    check_session_calls(out, lab, before)
    tools = [line for line in traj.read_text().splitlines() if '"tool_call"' in line]
    assert len(tools) == 3  # the server logged its calls; it has exited (see the fixture)


def doc_client_config() -> dict[str, Any]:
    """The ``mcpServers`` JSON snippet of docs/mcp.md (the ```json block after its marker)."""
    doc = (ROOT / "docs" / "mcp.md").read_text()
    m = re.search(r"<!-- snippet:mcp-client-config -->\s*```json\n(.*?)\n```", doc, re.S)
    assert m, "docs/mcp.md lost its client configuration snippet"
    return json.loads(m.group(1))


def test_docs_client_config_snippet_works_as_written(lab, tmp_path):
    """The snippet, with only the repository path and the lab id put in: the stdio client starts
    exactly its command and args (the client's default environment, an unrelated working
    directory) and gets the A1 tools; the calls behave as over any transport."""
    servers = doc_client_config()["mcpServers"]
    assert list(servers) == ["ani-a1"]
    entry = servers["ani-a1"]
    assert set(entry) == {"command", "args"}
    command = entry["command"].replace("/path/to/ani-sdk", str(ROOT))
    args = [lab.id if a == "demo" else a for a in entry["args"]]
    assert command == str(ROOT / ".venv" / "bin" / "ani")  # a root client: the ani path, no sudo
    assert args == ["mcp", "serve", "--lab", lab.id, "--level", "a1"]
    assert os.geteuid() == 0
    before = running(lab)

    async def main() -> dict[str, Any]:
        async with Client(StdioServerParameters(command=command, args=args, cwd=str(tmp_path))) as client:
            return await session_calls(client)

    out = anyio.run(main)
    check_session_calls(out, lab, before)


def test_stdio_timeout_is_is_error_naming_the_bound(lab):
    """bgpd of r2 is frozen (SIGSTOP) once r2's vtysh session is open: a show command then waits
    for it until the 2 s bound. (Frozen before the session opens: see the next test.)"""
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_argv(lab, "--option", "command_timeout_s=2"),
        cwd=str(ROOT),
        env={**os.environ},
    )

    async def main() -> types.CallToolResult:
        async with Client(params) as client:
            first = await client.call_tool("execute_validation", {"device": "r2", "command": "show bgp summary"})
            assert first.is_error is False, text_of(first)
            os.kill(pid, signal.SIGSTOP)
            try:
                return await client.call_tool("execute_validation", {"device": "r2", "command": "show bgp summary"})
            finally:
                os.kill(pid, signal.SIGCONT)

    res = anyio.run(main)
    assert res.is_error is True
    assert "timeout after 2 s" in text_of(res)
    assert res.structured_content["error"]["code"] == "timeout"
    assert res.structured_content["error"]["retriable"] is True


def test_in_process_frozen_daemon_before_the_session_opens_is_a_timeout(lab):
    """bgpd of r2 is frozen before A1 ever opened r2's vtysh session: vtysh waits for it and
    the open runs into the 2 s bound. The call says so (``timeout after 2 s (opening vtysh on
    r2)``, code timeout, retriable), not device_unreachable; once bgpd runs again the next call
    opens the session and succeeds."""
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    adapter = A1Adapter(lab, options={"command_timeout_s": 2})
    adapter.open()
    try:
        async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
            async with Client(build_server(adapter), mode="legacy") as client:
                os.kill(pid, signal.SIGSTOP)
                try:
                    frozen = await client.call_tool("execute_validation", {"device": "r2", "command": "show bgp summary"})
                finally:
                    os.kill(pid, signal.SIGCONT)
                again = await client.call_tool("execute_validation", {"device": "r2", "command": "show bgp summary"})
                return frozen, again

        frozen, again = anyio.run(main)
    finally:
        adapter.close()
    assert frozen.is_error is True
    assert "timeout after 2 s (opening vtysh on r2)" in text_of(frozen)
    assert frozen.structured_content["error"]["code"] == "timeout"
    assert frozen.structured_content["error"]["retriable"] is True
    assert again.is_error is False, text_of(again)
    assert "64502" in text_of(again)  # r2's own AS in its BGP summary


def test_in_process_update_config_on_a_frozen_router_is_a_timeout_and_sends_nothing(lab):
    """bgpd of r2 frozen: update_config first reads r2's state (its snapshot for rollback), and
    that read runs into the 2 s bound. The result names the bound and what was waiting
    (``r2: timeout after 2 s (reading the running config)``, once the device name), code
    timeout, retriable; no line was sent, so r2's config is what it was once bgpd runs again."""
    pid = frr.read_pids(lab.pathspace("r2"), ["bgpd"])["bgpd"]
    before = running(lab, "r2")
    adapter = A1Adapter(lab, options={"command_timeout_s": 2})
    adapter.open()
    try:
        async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
            async with Client(build_server(adapter), mode="legacy") as client:
                os.kill(pid, signal.SIGSTOP)
                try:
                    upd = await client.call_tool("update_config", {"device": "r2", "commands": [
                        "router bgp 64502", "neighbor 10.0.12.77 remote-as 64577"]})
                    snap = await client.call_tool("snapshot", {"device": "r2"})
                finally:
                    os.kill(pid, signal.SIGCONT)
                return upd, snap

        upd, snap = anyio.run(main)
    finally:
        adapter.close()
    for res in (upd, snap):
        assert res.is_error is True
        assert json.loads(text_of(res)) == {"ok": False, "code": "timeout", "retriable": True, "changed": False,
                                            "message": "r2: timeout after 2 s (reading the running config)"}
        assert res.structured_content["error"]["code"] == "timeout"
        assert res.structured_content["error"]["retriable"] is True
    assert upd.structured_content["changed"] is False
    assert running(lab, "r2") == before


def test_stdio_malformed_request_is_a_protocol_error_and_the_server_keeps_serving(lab):
    """Raw JSON-RPC lines on the server's stdin: only malformed requests get JSON-RPC errors."""
    proc = subprocess.Popen([sys.executable, *serve_argv(lab)], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        def ask(msg: str) -> str:
            proc.stdin.write(msg + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "no reply from the server"
            return proc.stdout.readline()

        init = ask('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                   '"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}')
        assert '"result"' in init
        proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        bad = ask('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}')
        assert re.search(r'"error":\{"code":-32602', bad), bad
        unknown_tool = ask('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}')
        assert '"code":-32602' in unknown_tool and "rm_rf" in unknown_tool
        good = ask('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_topology","arguments":{}}}')
        assert '"isError":false' in good and "r1 eth-r2 <-> r2 eth-r1" in good
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0


# -- streamable HTTP ---------------------------------------------------------------------------


def test_http_on_loopback(lab):
    before = running(lab)
    proc = subprocess.Popen([sys.executable, *serve_argv(lab, "--http", "--port", "0")], cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                line = proc.stderr.readline()
                assert line, f"server exited: rc={proc.poll()}"
                m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
                url = m.group(1) if m else None
        assert url, "the server did not print its URL"

        async def main() -> dict[str, Any]:
            async with Client(url) as client:
                return await session_calls(client)

        out = anyio.run(main)
    finally:
        interrupt(proc)
    check_session_calls(out, lab, before)
    assert proc.returncode == 0


# -- the page's own client example -------------------------------------------------------------


def test_docs_python_client_example_runs(make_lab, run_doc_example):
    """docs/mcp.md ``<!-- example:mcp-client -->`` runs as written (its own lab, downed by the
    example) and prints what the page says: the A1 tools, a read, the refused line named."""
    del make_lab  # only for its capability check
    lines = run_doc_example("mcp.md", "mcp-client", timeout=300).splitlines()
    assert lines[0] == str(sorted(A1_TOOLS)), lines
    assert lines[1] == "False True", lines
    assert lines[2] == "True rolled_back", lines
    assert REJECTED in lines[3], lines
