"""One observation per tool result, whatever the path (issue 26 §2, must-show 3), on a real lab.

The same successful calls (A1 ``get_running_config`` of r1, ``get_topology``) are made through
pydantic-ai's own agent loop (``ani.integrations.pydantic_ai`` tools, a ``FunctionModel`` that
records the tool returns it is given), through the three other integrations' tools, and through
an MCP client session (the official ``mcp`` client, JSON-RPC to ``ani.mcp.server``, in-process
and over stdio to ``ani mcp serve``): the text
the model reads is the same everywhere, equal to :meth:`ToolResult.observation`, and the
adapter's trajectory records it whole in each ``tool_call`` event. A refused call (an unknown
router) gives the same JSON error payload through MCP's text content and the integrations whose
error channel is the text (openai-agents, smolagents ``errors="return"``).

One lab of tests/data/a1_pair.yaml for the module; nothing is changed on it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from ani.adapters.a1 import A1Adapter
from ani.mcp.server import build_server

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_mcp_server_left")]

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "obs", False

CALLS = [("get_running_config", {"device": "r1"}), ("get_topology", {})]
REFUSED = ("get_running_config", {"device": "r9"})


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture
def adapter(lab):
    a = A1Adapter(lab)
    a.open()
    yield a
    a.close()


def through_mcp(adapter: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[types.CallToolResult]:
    async def main() -> list[types.CallToolResult]:
        async with Client(build_server(adapter), mode="legacy") as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


def text_of(res: types.CallToolResult) -> str:
    assert len(res.content) == 1 and isinstance(res.content[0], types.TextContent), res.content
    return res.content[0].text


def through_pydantic_ai(adapter: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """What pydantic-ai's loop handed the model for each call (``ToolReturnPart``)."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from ani.integrations.pydantic_ai import tools

    def play(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if any(isinstance(m, ModelResponse) for m in messages):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(n, a, f"c{i}") for i, (n, a) in enumerate(calls)])

    result = Agent(FunctionModel(play), tools=tools(adapter)).run_sync("read r1")
    parts = {p.tool_call_id: p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)}
    return [parts[f"c{i}"].model_response_str() for i in range(len(calls))]


def through_the_others(adapter: Any, name: str, args: dict[str, Any]) -> dict[str, str]:
    """The text each other integration's tool gives the framework (langchain: the ToolMessage
    content; openai-agents: the returned text; smolagents: the observation)."""
    from ani.integrations import langchain, openai_agents, smolagents

    lc = next(t for t in langchain.tools(adapter) if t.name == name)
    msg = lc.invoke({"type": "tool_call", "name": name, "args": args, "id": "x"})
    oa = next(t for t in openai_agents.tools(adapter, strict=False) if t.name == name)
    sm = next(t for t in smolagents.tools(adapter, errors="return") if t.name == name)
    return {"langchain": msg.content,
            "openai_agents": asyncio.run(oa.on_invoke_tool(None, json.dumps(args))),
            "smolagents": sm.forward(**args)}


def test_a_successful_call_reads_the_same_through_pydantic_ai_and_mcp(adapter, lab):
    """Must-show 3: the model reads the same text through the native integration and MCP."""
    native = through_pydantic_ai(adapter, CALLS)
    mcp = through_mcp(adapter, CALLS)
    assert [r.is_error for r in mcp] == [False, False]
    assert [text_of(r) for r in mcp] == native
    assert "hostname r1" in native[0] and "router bgp 64501" in native[0]  # the config itself
    assert "r1" in native[1] and "r2" in native[1]
    # the trajectory recorded exactly that text for every call, by whichever path
    # (pydantic-ai runs a turn's calls concurrently: the first two events come in either order)
    calls = adapter.trajectory.calls
    expected = [(n, text) for (n, _), text in zip(CALLS, native, strict=True)]
    assert sorted((c["tool"], c["observation"]) for c in calls) == sorted(expected * 2)
    assert all(c["observation_truncated"] is False and c["observation_chars"] == len(c["observation"])
               for c in calls)
    for name, args in CALLS:
        assert set(through_the_others(adapter, name, args).values()) == {native[CALLS.index((name, args))]}


def test_a_refused_call_reads_the_same_error_payload_through_mcp_and_the_text_channels(adapter):
    [mcp] = through_mcp(adapter, [REFUSED])
    assert mcp.is_error is True
    payload = json.loads(text_of(mcp))
    assert payload["ok"] is False and payload["code"] == "unknown_device" and "r9" in payload["message"]
    assert payload["retriable"] is False and payload["changed"] is False
    others = through_the_others(adapter, *REFUSED)
    assert others["openai_agents"] == others["smolagents"] == text_of(mcp)
    assert adapter.trajectory.calls[-1]["observation"] == text_of(mcp)
    # structuredContent (what a client reading it gets instead): the result as data
    assert mcp.structured_content["error"]["code"] == "unknown_device"


def test_the_same_text_over_stdio_to_ani_mcp_serve(adapter, lab, tmp_path):
    """Over the wire (``python -m ani.cli mcp serve --lab ID --level a1``, its own adapter on the
    same lab): the text content is the observation the native integration gives, and the
    server's trajectory records it."""
    native = through_pydantic_ai(adapter, CALLS)
    traj = tmp_path / "mcp.jsonl"
    params = StdioServerParameters(
        command=sys.executable, cwd=str(ROOT), env={**os.environ},
        args=["-m", "ani.cli", "mcp", "serve", "--lab", lab.id, "--level", "a1", "--trajectory", str(traj)])

    async def main() -> list[types.CallToolResult]:
        async with Client(params) as client:
            return [await client.call_tool(name, args) for name, args in CALLS]

    assert [text_of(r) for r in anyio.run(main)] == native
    recorded = [json.loads(line) for line in traj.read_text().splitlines() if '"tool_call"' in line]
    assert [e["observation"] for e in recorded] == native
