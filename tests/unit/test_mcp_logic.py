"""The MCP server's logic with the official MCP client in-process, on a fake adapter (no lab).

The adapter is a real :class:`BaseAdapter` subclass (real argument validation and device checks)
over a stand-in lab that only names two routers. The client is ``mcp.Client`` connected to the
server object: in the default mode (direct dispatch) and in legacy mode (JSON-RPC over memory
streams, the initialize handshake). Raw JSON-RPC messages check what is a protocol error.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from pydantic import Field

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, tool
from ani.errors import AniTimeout, ConfigError, ErrorCode
from ani.integrations._common import error_payload
from ani.mcp.cli import parse_options
from ani.mcp.server import build_server, harness_fault, result_text, to_call_result
from ani.testing import FakeLab
from ani.protocol import Level, ToolResult


class EchoArgs(Args):
    device: str = Field(description="router")
    text: str = Field(description="what to echo")


class FakeAdapter(BaseAdapter):
    level = Level.A1

    @tool(args=EchoArgs, read_only=True, description="Echo text from a router.")
    def echo(self, args: EchoArgs) -> ToolResult:
        return ToolResult.success(f"{args.device}: {args.text}", {"echo": args.text})

    @tool(args=DeviceArgs, destructive=True, description="Erase a router (slowly).")
    def erase(self, args: DeviceArgs) -> ToolResult:
        raise AniTimeout(2, "erase")

    @tool(args=DeviceArgs, description="Reject a line.")
    def reject(self, args: DeviceArgs) -> ToolResult:
        return ToolResult.failure(ErrorCode.ROLLED_BACK, "command 2 'bogus line' failed: % Unknown command",
                                  text="rolled back")

    @tool(args=DeviceArgs, description="A harness fault.")
    def boom(self, args: DeviceArgs) -> ToolResult:
        raise RuntimeError("disk on fire")


def fake_adapter() -> FakeAdapter:
    return FakeAdapter(FakeLab())  # routers r1, r2


def run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


def text_of(res: types.CallToolResult) -> str:
    return "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))


# -- pure mapping ---------------------------------------------------------------------------


def test_success_maps_to_not_is_error_with_structured_content():
    r = ToolResult.success("hello", {"x": 1}, changed=True)
    r.elapsed_s = 0.25
    out = to_call_result(r)
    assert out.is_error is False
    assert text_of(out) == "hello"
    assert out.structured_content == {"ok": True, "error": None, "changed": True, "elapsed_s": 0.25,
                                      "data": {"x": 1}}


def test_failure_text_always_names_the_cause():
    r = ToolResult.failure(ErrorCode.ROLLED_BACK, "command 2 'x y' failed", text="rolled back")
    # the JSON error payload the framework integrations and the LLM agent give (one observation)
    assert json.loads(result_text(r)) == {"ok": False, "code": "rolled_back", "message": "command 2 'x y' failed",
                                          "retriable": False, "changed": False, "text": "rolled back"}
    assert result_text(r) == error_payload(r) == r.observation()
    out = to_call_result(r)
    assert out.content[0].text == result_text(r)
    assert out.is_error is True
    assert out.structured_content["error"] == {"code": "rolled_back", "message": "command 2 'x y' failed",
                                               "retriable": False}
    plain = ToolResult.failure(ErrorCode.UNKNOWN_DEVICE, "unknown device 'r9'")
    assert json.loads(result_text(plain)) == {"ok": False, "code": "unknown_device",  # no "text": not doubled
                                              "message": "unknown device 'r9'", "retriable": False, "changed": False}


def test_a_raising_adapters_harness_fault_reads_as_an_error_payload():
    """An adapter that raises (not a BaseAdapter, which never does): the text is the same JSON
    shape as every failure's observation, with code harness_fault."""
    out = harness_fault("erase", RuntimeError("disk on fire"))
    assert out.is_error is True
    assert json.loads(text_of(out)) == {"ok": False, "code": "harness_fault", "retriable": False, "changed": False,
                                        "message": "harness fault in erase: RuntimeError: disk on fire"}
    assert out.structured_content["error"]["code"] == "harness_fault"


def test_parse_options():
    assert parse_options(["command_timeout_s=1.5", "platform=frr", "flag=true"]) == {
        "command_timeout_s": 1.5, "platform": "frr", "flag": True}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_options(["novalue"])


# -- the official client, in-process ---------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_list_tools_is_exactly_the_adapters_with_schemas_and_hints(mode):
    adapter = fake_adapter()

    async def main() -> list[types.Tool]:
        async with Client(build_server(adapter), mode=mode) as client:
            return (await client.list_tools()).tools

    tools = run(main)
    specs = {s.name: s for s in adapter.tools()}
    assert [t.name for t in tools] == list(specs)
    assert set(specs) == {"get_topology", "echo", "erase", "reject", "boom"}
    for t in tools:
        assert t.input_schema == specs[t.name].input_schema
        assert t.description == specs[t.name].description
        assert t.annotations.read_only_hint is specs[t.name].read_only
        assert t.annotations.destructive_hint is specs[t.name].destructive
    by = {t.name: t for t in tools}
    assert by["echo"].annotations.read_only_hint is True
    assert by["erase"].annotations.destructive_hint is True
    assert by["echo"].input_schema["required"] == ["device", "text"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_calls_success_and_failures_are_results_with_is_error(mode):
    adapter = fake_adapter()

    async def main() -> dict[str, types.CallToolResult]:
        out = {}
        async with Client(build_server(adapter), mode=mode) as client:
            out["ok"] = await client.call_tool("echo", {"device": "r1", "text": "hi"})
            out["device"] = await client.call_tool("echo", {"device": "r9", "text": "hi"})
            out["args"] = await client.call_tool("echo", {"device": "r1", "txt": "hi"})
            out["timeout"] = await client.call_tool("erase", {"device": "r2"})
            out["reject"] = await client.call_tool("reject", {"device": "r1"})
            out["boom"] = await client.call_tool("boom", {"device": "r1"})
            out["after"] = await client.call_tool("echo", {"device": "r2", "text": "still here"})
        return out

    out = run(main)
    assert out["ok"].is_error is False and text_of(out["ok"]) == "r1: hi"
    assert out["ok"].structured_content["data"] == {"echo": "hi"}
    assert out["device"].is_error is True and "unknown device 'r9'" in text_of(out["device"])
    assert out["device"].structured_content["error"]["code"] == "unknown_device"
    assert out["args"].is_error is True and "txt" in text_of(out["args"])
    assert out["args"].structured_content["error"]["code"] == "invalid_arguments"
    assert out["timeout"].is_error is True and "timeout after 2 s" in text_of(out["timeout"])
    assert out["timeout"].structured_content["error"]["retriable"] is True
    assert out["reject"].is_error is True and "'bogus line'" in text_of(out["reject"])
    assert out["boom"].is_error is True and "RuntimeError: disk on fire" in text_of(out["boom"])
    for name in ("device", "args", "timeout", "reject", "boom"):  # one observation: the error payload
        assert json.loads(text_of(out[name]))["code"] == out[name].structured_content["error"]["code"]
    assert out["after"].is_error is False
    assert out["boom"].structured_content["error"]["code"] == "internal"
    # every call reached the adapter's trajectory, the unknown-tool one below does not; the
    # adapter's own crash is logged there as a harness fault (BaseAdapter.call never raises)
    events = adapter.trajectory.events
    assert [e["tool"] for e in events if e["event"] == "tool_call"] == [
        "echo", "echo", "echo", "erase", "reject", "boom", "echo"]
    assert [(e["tool"], e["kind"], e["cause"]) for e in events if e["event"] == "harness_fault"] == [
        ("boom", "harness", "RuntimeError: disk on fire")]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_unknown_tool_is_a_protocol_error_naming_it(mode):
    adapter = fake_adapter()

    async def main() -> MCPError:
        async with Client(build_server(adapter), mode=mode) as client:
            with pytest.raises(MCPError) as ei:
                await client.call_tool("format_disk", {})
            return ei.value

    err = run(main)
    assert err.code == types.INVALID_PARAMS
    assert "unknown tool 'format_disk'" in err.message and "echo" in err.message
    assert adapter.trajectory.events == []


# -- raw JSON-RPC over memory streams: what is a protocol error ------------------------------


def raw_exchange(server: Any, messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Send JSON-RPC ``messages`` (dicts) to ``server`` over memory streams, one at a time;
    returns ``{id: response dict}`` for the requests."""

    async def main() -> dict[Any, dict[str, Any]]:
        replies: dict[Any, dict[str, Any]] = {}
        async with create_client_server_memory_streams() as ((c_read, c_write), (s_read, s_write)):
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.run, s_read, s_write, server.create_initialization_options())
                for m in messages:
                    msg = types.jsonrpc_message_adapter.validate_python(m)
                    await c_write.send(SessionMessage(msg))
                    if "id" in m:
                        got = await c_read.receive()
                        d = got.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                        replies[d["id"]] = d
                await c_write.aclose()
                tg.cancel_scope.cancel()
        return replies

    return anyio.run(main)


def test_malformed_requests_are_protocol_errors_tool_failures_are_not():
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}
    replies = raw_exchange(build_server(fake_adapter()), [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}},  # no name
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": [1]}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/frobnicate", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"device": "r1", "text": 5}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"device": "r1", "text": "x"}}},
    ])
    assert "result" in replies[0]
    assert replies[1]["error"]["code"] == types.INVALID_PARAMS
    assert replies[2]["error"]["code"] == types.INVALID_PARAMS
    assert replies[3]["error"]["code"] == types.METHOD_NOT_FOUND
    # well-formed calls: a wrong argument type is a tool failure the model can correct
    assert replies[4]["result"]["isError"] is True
    assert "text" in replies[4]["result"]["content"][0]["text"]
    assert replies[5]["result"]["isError"] is False
    assert replies[5]["result"]["structuredContent"]["ok"] is True


# -- the command's bad input ------------------------------------------------------------------


def test_serve_bad_input_exits_2_naming_it():
    from typer.testing import CliRunner

    from ani.cli import app

    def serve(*argv: str) -> tuple[int, str]:
        res = CliRunner().invoke(app, ["mcp", "serve", *argv])
        return res.exit_code, res.output

    code, out = serve("--lab", "nosuchlab00", "--level", "a1")
    assert code == 2 and "no lab 'nosuchlab00'" in out
    code, out = serve("--lab", "nosuchlab00", "--level", "a9")
    assert code == 2 and "unknown adapter 'a9'" in out
    code, out = serve("--level", "a1", "--option", "oops")
    assert code == 2 and "--option 'oops': expected KEY=VALUE" in out


# -- mcp is a core dependency; without it the command says how to install it -----------------


def test_mcp_is_a_core_dependency_and_the_extra_an_empty_alias():
    import re
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0] for d in project["dependencies"]]
    assert "mcp" in names
    from ani.mcp.cli import MCP_REQUIREMENT  # what `ani mcp serve` tells to install: the same

    assert MCP_REQUIREMENT in [d.split("#")[0].strip() for d in project["dependencies"]]
    assert project["optional-dependencies"]["mcp"] == []  # `pip install 'ani-sdk[mcp]'` still resolves


def test_serve_without_the_mcp_package_says_how_to_install_it():
    """A fresh interpreter where ``import mcp`` fails: ``ani`` still loads, ``ani mcp serve`` exits 2
    with one line naming the package and the pip command, before looking for a lab."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; sys.modules['mcp'] = None\n"
            "from ani.cli import app\n"
            "app(['mcp', 'serve', '--lab', 'nosuchlab00', '--level', 'a1'], prog_name='ani')\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[2], capture_output=True,
                         text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ani mcp serve needs the official MCP SDK")
    assert "-m pip install 'mcp>=1.24,!=2.0.*,!=2.1.*,!=2.2.*,<3'" in lines[0]
    assert "nosuchlab00" not in res.stderr  # the lab is not looked up


# -- what counts as a timeout of a vtysh session (A1) -----------------------------------------


def test_scrapli_timeouts_are_recognised_and_other_failures_are_not():
    """scrapli 2 reports a read that ran into its bound as an OperationException whose text says
    TimeoutExceeded (seen opening vtysh on a frozen daemon), or as a TimeoutException."""
    from scrapli.exceptions import EOFException, OperationException, TimeoutException

    from ani.adapters.cli_session import is_timeout

    assert is_timeout(OperationException("TimeoutExceeded: session.Session readTimeout: operation timeout exceeded"))
    assert is_timeout(TimeoutException("operation timed out"))
    assert not is_timeout(OperationException("EOF: the vtysh process exited"))
    assert not is_timeout(EOFException("eof"))
    assert str(AniTimeout(2.0, "opening vtysh on r2")) == "timeout after 2 s (opening vtysh on r2)"
