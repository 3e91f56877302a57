"""The MCP server under hostile input, with the official MCP client in-process (adversarial pass of
issue 5); the adapters are the real ones over a stand-in lab that only names two routers: every
argument checked here is refused before anything would reach a device.
"""

from __future__ import annotations

import socket
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from ani.mcp.server import build_server, listen_socket
from ani.registry import available, create_adapter

#: a wrong value per JSON Schema type (null is left out: optional fields accept it)
WRONG: dict[str, list[Any]] = {
    "string": [5, ["x"], {"a": 1}, True],
    "array": ["x", 5, {"a": 1}],
    "object": ["x", [1], 5],
    "integer": ["x", 1.5, [1]],
    "number": ["x", [1], {"a": 1}],
    "boolean": ["x", [1]],
}


def stand_in_lab() -> Any:
    return SimpleNamespace(topology=SimpleNamespace(routers={"r1": None, "r2": None}, nodes=[], links=[]),
                           id="fake", routers=["r1", "r2"])


def schema_type(schema: dict[str, Any]) -> str | None:
    if isinstance(schema.get("type"), str):
        return schema["type"]
    for alt in schema.get("anyOf", []):
        if alt.get("type") not in (None, "null"):
            return alt["type"]
    return None


@pytest.mark.parametrize("level", available())
def test_every_argument_of_every_tool_with_a_wrong_json_type_is_an_invalid_arguments_result(level):
    adapter = create_adapter(level, stand_in_lab())

    async def main() -> tuple[int, list[Any]]:
        wrong, n = [], 0
        async with Client(build_server(adapter)) as client:
            for tool in (await client.list_tools()).tools:
                for prop, schema in tool.input_schema.get("properties", {}).items():
                    for value in WRONG.get(schema_type(schema) or "", [[["deep"]]]):
                        n += 1
                        res = await client.call_tool(tool.name, {prop: value})
                        code = ((res.structured_content or {}).get("error") or {}).get("code")
                        if not (res.is_error and code == "invalid_arguments"):
                            wrong.append((tool.name, prop, value, res.is_error, code))
                res = await client.call_tool(tool.name, {"no_such_argument": 1})
                code = ((res.structured_content or {}).get("error") or {}).get("code")
                if not (res.is_error and code == "invalid_arguments"):
                    wrong.append((tool.name, "no_such_argument", 1, res.is_error, code))
        return n, wrong

    n, wrong = anyio.run(main)
    assert n > 0 and wrong == []
    assert [e["ok"] for e in adapter.trajectory.events if e["event"] == "tool_call"] == [False] * len(
        [e for e in adapter.trajectory.events if e["event"] == "tool_call"])


def test_concurrent_calls_from_one_client_each_get_their_own_answer():
    adapter = create_adapter("a1", stand_in_lab())

    async def main() -> dict[int, types.CallToolResult]:
        out: dict[int, types.CallToolResult] = {}
        async with Client(build_server(adapter)) as client:

            async def one(i: int) -> None:
                out[i] = await client.call_tool("get_running_config", {"device": f"r{i}"})

            async with anyio.create_task_group() as tg:
                for i in range(3, 33):
                    tg.start_soon(one, i)
        return out

    out = anyio.run(main)
    assert len(out) == 30
    for i, res in out.items():
        assert res.is_error and f"unknown device 'r{i}'" in res.content[0].text


def test_a_huge_unknown_tool_name_is_not_echoed_whole():
    """The protocol error used to repeat the whole name (megabytes back for megabytes in)."""
    adapter = create_adapter("a1", stand_in_lab())

    async def main() -> MCPError:
        async with Client(build_server(adapter)) as client:
            with pytest.raises(MCPError) as ei:
                await client.call_tool("x" * 200_000, {})
            return ei.value

    err = anyio.run(main)
    assert err.code == types.INVALID_PARAMS
    assert "(200000 characters)" in err.message and len(err.message) < 1000
    assert "get_running_config" in err.message


def test_listen_socket_on_a_port_in_use_raises_and_port_0_picks_one():
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        with pytest.raises(OSError) as ei:
            listen_socket("127.0.0.1", busy.getsockname()[1])
        assert "in use" in str(ei.value).lower()
        free = listen_socket("127.0.0.1", 0)
        assert free.getsockname()[1] > 0
        free.close()
    finally:
        busy.close()


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_is_one_line_exit_2(port):
    """Not click's usage box: one ``error: --port N: out of range`` line, like a port in use."""
    from typer.testing import CliRunner

    from ani.cli import app

    res = CliRunner().invoke(app, ["mcp", "serve", "--level", "a1", "--lab", "nolab", "--http", "--port", port])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"error: --port {port}: out of range (0-65535; 0 picks a free port)"]
