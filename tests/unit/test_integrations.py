"""ani.integrations.<framework>.tools(adapter), logic only (an adapter on a fake lab): what each
framework's tool objects carry (names, schemas, hints), how arguments are cleaned, how an
``ok=False`` result reaches each framework's error channel with its code, and the ImportError
that names the extra. The loops against a real lab: tests/integration/test_framework_loops.py."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from importlib.metadata import version
from typing import Any, Literal

import pytest
from pydantic import Field

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, tool
from ani.errors import ErrorCode, ToolCallError
from ani.integrations._common import error_payload
from ani.protocol import Level, ToolResult
from test_base_adapter import FakeLab


class EditArgs(DeviceArgs):
    config: str = Field(description="XML")  # a name LangChain's StructuredTool takes for itself


class ReadArgs(DeviceArgs):
    source: Literal["running", "candidate"] = Field(default="running", description="datastore")
    filter: str | None = Field(default=None, description="subtree")


class PlanArgs(Args):
    changes: list[dict[str, Any]] = Field(min_length=1, description="service changes")


class Fake(BaseAdapter):
    level = Level.A2

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.got: list[tuple[str, Any]] = []

    @tool(args=EditArgs, description="Edit the candidate")
    def edit_config(self, args: EditArgs) -> ToolResult:
        self.got.append(("edit_config", args.model_dump()))
        return ToolResult.success(f"edited {args.device}", {"device": args.device})

    @tool(args=ReadArgs, read_only=True, description="Read a datastore")
    def get_config(self, args: ReadArgs) -> ToolResult:
        self.got.append(("get_config", args.model_dump()))
        return ToolResult.success(f"{args.source} of {args.device}")

    @tool(args=PlanArgs, destructive=True, description="Apply changes", name="apply-changes")
    def apply(self, args: PlanArgs) -> ToolResult:
        self.got.append(("apply-changes", args.model_dump()))
        return ToolResult.failure(ErrorCode.LOCKED, "r2 is locked by session 7", retriable=True,
                                  text="error [locked]: r2 is locked by session 7\nnothing was applied")


@pytest.fixture
def adapter() -> Fake:
    return Fake(FakeLab())


def schema_of(adapter: Any, name: str) -> dict[str, Any]:
    return next(s.input_schema for s in adapter.tools() if s.name == name)


def test_error_payload_keeps_code_and_retriable_and_any_extra_text():
    r = ToolResult.failure(ErrorCode.UNKNOWN_DEVICE, "unknown device 'e9'")
    assert json.loads(error_payload(r)) == {"ok": False, "code": "unknown_device", "message": "unknown device 'e9'",
                                            "retriable": False, "changed": False}
    r = ToolResult.failure(ErrorCode.ROLLED_BACK, "line 2 failed", text="1. ok\n2. failed", changed=False)
    assert json.loads(error_payload(r))["text"] == "1. ok\n2. failed"


def test_every_framework_is_installed_next_to_ani_s_own_mcp():
    """The test extra installs the four frameworks into the environment that runs ``ani mcp serve``
    (the MCP tests run in it too): mcp 2.x and all four, side by side."""
    assert int(version("mcp").split(".")[0]) >= 2
    for dist in ("langchain-core", "langchain", "pydantic-ai-slim", "openai-agents", "smolagents"):
        assert version(dist)


@pytest.mark.parametrize("module,extra", [("langchain", "langchain"), ("pydantic_ai", "pydantic-ai"),
                                          ("openai_agents", "openai-agents"), ("smolagents", "smolagents")])
def test_importing_without_the_framework_names_the_extra(monkeypatch, module, extra):
    framework_module = {"langchain": "langchain_core.tools", "pydantic_ai": "pydantic_ai",
                        "openai_agents": "agents", "smolagents": "smolagents"}[module]
    monkeypatch.setitem(sys.modules, framework_module, None)  # import of it now fails
    monkeypatch.delitem(sys.modules, f"ani.integrations.{module}", raising=False)
    with pytest.raises(ImportError) as exc:
        importlib.import_module(f"ani.integrations.{module}")
    assert f"pip install 'ani-sdk[{extra}]'" in str(exc.value) and f"ani.integrations.{module}" in str(exc.value)
    monkeypatch.delitem(sys.modules, f"ani.integrations.{module}", raising=False)


# -- LangChain ---------------------------------------------------------------------------------------


def test_langchain_tools(adapter):
    from langchain_core.messages import ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from ani.integrations.langchain import LangChainToolError, tools

    ts = {t.name: t for t in tools(adapter)}
    assert list(ts) == ["apply-changes", "edit_config", "get_config", "get_topology"]
    assert ts["apply-changes"].tags == ["ani", "ani:a2", "destructive"]
    assert ts["get_config"].metadata == {"ani_level": "a2", "read_only": True, "destructive": False}
    params = convert_to_openai_tool(ts["get_config"])["function"]["parameters"]
    assert params == schema_of(adapter, "get_config") and params["required"] == ["device"]
    # an argument named "config" reaches the adapter (StructuredTool would take it for its RunnableConfig)
    msg = ts["edit_config"].invoke({"type": "tool_call", "id": "1", "name": "edit_config",
                                    "args": {"device": "r1", "config": "<frr/>"}})
    assert isinstance(msg, ToolMessage) and msg.content == "edited r1" and msg.artifact["data"] == {"device": "r1"}
    assert adapter.got[-1] == ("edit_config", {"device": "r1", "config": "<frr/>"})
    # a null for an optional argument is "not given"; ainvoke runs the call in a worker thread
    msg = asyncio.run(ts["get_config"].ainvoke({"type": "tool_call", "id": "2", "name": "get_config",
                                                "args": {"device": "r1", "source": None}}))
    assert msg.content == "running of r1"
    # the error channel: a ToolMessage with status "error", the payload as content
    msg = ts["apply-changes"].invoke({"type": "tool_call", "id": "3", "name": "apply-changes",
                                      "args": {"changes": [{"type": "x"}]}})
    assert msg.status == "error"
    assert json.loads(msg.content) == {"ok": False, "code": "locked", "message": "r2 is locked by session 7",
                                       "retriable": True, "changed": False,
                                       "text": "error [locked]: r2 is locked by session 7\nnothing was applied"}
    # called outside a tool call, the exception carries the result
    ts["apply-changes"].handle_tool_error = False
    with pytest.raises(LangChainToolError) as exc:
        ts["apply-changes"].invoke({"changes": [{"type": "x"}]})
    assert isinstance(exc.value, ToolCallError) and exc.value.code == "locked" and exc.value.retriable


def test_langchain_strict_form(adapter):
    from ani.integrations.langchain import tools

    t = {t.name: t for t in tools(adapter, strict=True)}["apply-changes"]
    assert t.args_schema["properties"]["changes"]["items"]["type"] == "string"
    t.invoke({"type": "tool_call", "id": "1", "name": "apply-changes", "args": {"changes": ['{"type": "x"}']}})
    assert adapter.got[-1] == ("apply-changes", {"changes": [{"type": "x"}]})


# -- pydantic-ai -------------------------------------------------------------------------------------


def test_pydantic_ai_tools(adapter):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ToolReturnPart

    from ani.integrations.pydantic_ai import tools

    ts = {t.name: t for t in tools(adapter, approve_destructive=True)}
    assert ts["apply-changes"].requires_approval and not ts["edit_config"].requires_approval
    assert ts["get_config"].metadata == {"ani_level": "a2", "read_only": True, "destructive": False}
    assert ts["get_config"].tool_def.parameters_json_schema == schema_of(adapter, "get_config")
    assert not any(t.requires_approval for t in tools(adapter))
    # pydantic-ai's own loop, with a FunctionModel: a read, then a call that fails
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def play(messages: list[Any], info: Any) -> ModelResponse:
        i = sum(isinstance(m, ModelResponse) for m in messages)
        calls = [[ToolCallPart("get_config", {"device": "r1", "source": None}, "a")],
                 [ToolCallPart("apply-changes", {"changes": [{"type": "x"}]}, "b")]]
        return ModelResponse(parts=calls[i] if i < 2 else [TextPart("done")])

    result = Agent(FunctionModel(play), tools=tools(adapter)).run_sync("read it")
    assert result.output == "done"
    read, failed = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert read.outcome == "success" and read.content == "running of r1" and read.metadata["ok"] is True
    # the error channel: ToolFailed, a failed return the model sees, and the run went on
    assert failed.outcome == "failed"
    assert json.loads(failed.model_response_str(wrap_if_error=False))["code"] == "locked"


# -- openai-agents -----------------------------------------------------------------------------------


def test_openai_agents_tools(adapter):
    from agents.tool_context import ToolContext

    from ani.integrations.openai_agents import tools

    ts = {t.name: t for t in tools(adapter, approve_destructive=True)}
    assert all(t.strict_json_schema for t in ts.values())
    assert ts["apply-changes"].needs_approval is True and ts["edit_config"].needs_approval is False
    params = ts["get_config"].params_json_schema
    assert params["required"] == ["device", "source", "filter"]

    def invoke(t: Any, args: dict[str, Any]) -> str:
        ctx = ToolContext(context=None, tool_name=t.name, tool_call_id="1", tool_arguments=json.dumps(args))
        return asyncio.run(t.on_invoke_tool(ctx, json.dumps(args)))

    assert invoke(ts["get_config"], {"device": "r1", "source": None, "filter": None}) == "running of r1"
    assert adapter.got[-1] == ("get_config", {"device": "r1", "source": "running", "filter": None})
    out = json.loads(invoke(ts["apply-changes"], {"changes": ['{"type": "static-route"}']}))
    assert adapter.got[-1] == ("apply-changes", {"changes": [{"type": "static-route"}]})
    assert out["ok"] is False and out["code"] == "locked" and out["retriable"] is True
    # not strict: the tool's own schema
    plain = {t.name: t for t in tools(adapter, strict=False)}["get_config"]
    assert not plain.strict_json_schema and plain.params_json_schema == schema_of(adapter, "get_config")


# -- smolagents --------------------------------------------------------------------------------------


def test_smolagents_tools(adapter):
    from smolagents.models import get_tool_json_schema

    from ani.integrations.smolagents import inputs_of, tools

    ts = {t.name: t for t in tools(adapter)}
    assert list(ts) == ["apply_changes", "edit_config", "get_config", "get_topology"]  # Python identifiers
    inputs = ts["get_config"].inputs
    assert inputs["device"] == {"type": "string", "description": "Device name (a router of the topology)"}
    assert inputs["source"]["nullable"] is True and inputs["source"]["enum"] == ["running", "candidate"]
    assert inputs["filter"] == {"type": "string", "description": "subtree", "default": None, "nullable": True}
    # what the model is shown: the optional ones not required
    assert get_tool_json_schema(ts["get_config"])["function"]["parameters"]["required"] == ["device"]
    assert ts["get_config"](device="r1", source=None) == "running of r1"
    assert ts["apply_changes"].inputs["changes"]["type"] == "array"
    with pytest.raises(ToolCallError) as exc:
        ts["apply_changes"](changes=[{"type": "x"}])
    assert json.loads(str(exc.value))["code"] == "locked" and exc.value.retriable
    assert adapter.got[-1] == ("apply-changes", {"changes": [{"type": "x"}]})  # the adapter's own name
    returned = {t.name: t for t in tools(adapter, errors="return")}["apply_changes"]
    assert json.loads(returned(changes=[{"type": "x"}]))["code"] == "locked"
    with pytest.raises(ValueError, match="errors must be"):
        tools(adapter, errors="ignore")  # type: ignore[arg-type]
    assert inputs_of({"type": "object", "properties": {"x": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                                                        "y": {}}, "required": ["x", "y"]}) == {
        "x": {"type": ["integer", "string"], "description": ""}, "y": {"type": "any", "description": ""}}


def test_langchain_missing_arguments_are_the_adapter_s_invalid_arguments(adapter):
    from ani.integrations.langchain import tools

    t = {t.name: t for t in tools(adapter)}["get_config"]
    msg = t.invoke({"type": "tool_call", "id": "1", "name": "get_config", "args": {}})
    assert msg.status == "error" and json.loads(msg.content)["code"] == "invalid_arguments"
    assert "device" in json.loads(msg.content)["message"]
