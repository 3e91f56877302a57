"""Each framework's own agent loop issues ANI calls against a real lab (issue 16, section 1):
LangChain ``create_agent`` (LangGraph underneath) with a fake chat model, pydantic-ai ``Agent``
with ``FunctionModel``, openai-agents ``Runner`` with a fake ``Model``, smolagents
``ToolCallingAgent`` with a fake ``Model``, at three levels (a1, a2, a3t), tools from
``ani.integrations.<framework>.tools(adapter)``.

Each fake model plays the same script of turns against the tools it was given: a turn of two
parallel calls (a change and a read whose optional arguments are left out), at A2 a commit, then a
change on a router that does not exist. The model builds its calls from the schemas the framework
handed it (openai-agents: strict, every property present, optionals null, free-form objects as
JSON text; checked against the schema). The test then asserts that the change reached the router
(its running configuration, read out of band), that the read answered, and that the failure came
back through the framework's own error channel with its code.

Then smolagents with ``errors="return"``: a parallel step with a failing call keeps the other
call's result (smolagents drops it when a call raises).

One lab of scenarios/brownfield-small.yaml (with NETCONF) for the module; each framework and level
writes its own static route (203.0.113.<n>/32 to Null0).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ani.registry import create_adapter
from ani.strict_schema import check_strict_schema

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "fwl"  # conftest's module_lab
NS = "urn:ani:yang:ani-frr"
FRAMEWORKS = ["langchain", "pydantic_ai", "openai_agents", "smolagents"]
LEVELS = ["a1", "a2", "a3t"]
OPTIONS = {"a1": {"command_timeout_s": 20}, "a2": {}, "a3t": {"check_bound_s": 10}}


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@dataclass
class Call:
    name: str
    args: dict[str, Any]


@dataclass
class Outcome:
    """What the framework's loop gave back for one call."""

    name: str
    error: bool  # it came through the framework's error channel
    content: str  # what the model read


def prefix(framework: str, level: str) -> str:
    return f"203.0.113.{1 + 10 * FRAMEWORKS.index(framework) + LEVELS.index(level)}/32"


def script(level: str, pfx: str) -> list[list[Call]]:
    """The turns of calls (in each tool's own argument form); the last call fails."""
    if level == "a1":
        return [[Call("update_config", {"device": "e1", "commands": [f"ip route {pfx} Null0"]}),
                 Call("get_topology", {})],
                [Call("update_config", {"device": "e9", "commands": [f"ip route {pfx} Null0"]})]]
    if level == "a2":
        xml = f'<frr xmlns="{NS}"><static-route><prefix>{pfx}</prefix><next-hop>Null0</next-hop></static-route></frr>'
        return [[Call("edit_config", {"device": "e1", "config": xml}), Call("get_config", {"device": "e2"})],
                [Call("commit", {"devices": ["e1"], "confirmed": False})],
                [Call("edit_config", {"device": "e9", "config": xml})]]
    change = {"type": "static-route", "action": "add", "router": "e1", "prefix": pfx, "next_hop": "Null0"}
    return [[Call("apply", {"changes": [change]}), Call("list_services", {})],
            [Call("apply", {"changes": [{**change, "router": "e9"}]})]]


#: the code of the failing call, per level
FAIL_CODE = {"a1": "unknown_device", "a2": "unknown_device", "a3t": "invalid_intent"}
#: what the read of the first turn must show
READ_SHOWS = {"a1": "e1", "a2": "<frr", "a3t": "static-route"}


def check(lab: Any, level: str, pfx: str, turns: list[list[Call]], outcomes: list[Outcome]) -> None:
    calls = [c for turn in turns for c in turn]
    assert sorted(o.name for o in outcomes) == sorted(c.name for c in calls), outcomes
    *good, bad = outcomes if outcomes[-1].error else sorted(outcomes, key=lambda o: o.error)
    for o in good:
        assert not o.error, o
    assert bad.error, bad
    payload = error_payload_in(bad.content)
    assert payload["ok"] is False and payload["code"] == FAIL_CODE[level], payload
    assert payload["retriable"] is False and "e9" in payload["message"], payload
    read = next(o for o in outcomes if o.name == turns[0][1].name)
    assert READ_SHOWS[level] in read.content, read.content[:500]
    # out of band: the change is on e1 and nowhere else
    line = f"ip route {pfx} Null0"
    configs = {r: lab.running_config(r) for r in lab.routers}
    assert [r for r, cfg in configs.items() if line in cfg.splitlines()] == ["e1"], line


def error_payload_in(content: str) -> dict[str, Any]:
    """The error payload in what the model read: the whole text, inside pydantic-ai's
    ``{"error": <content>}`` wrapper, or after smolagents' ``Error executing tool ...:`` line."""
    try:
        outer = json.loads(content)
    except ValueError:
        start = content.index('{"ok": false')
        return json.JSONDecoder().raw_decode(content[start:])[0]
    return json.loads(outer["error"]) if isinstance(outer.get("error"), str) else outer


def strict_args(schema: dict[str, Any], value: Any) -> Any:
    """``value`` as a model held to the strict ``schema`` sends it: every property present (null if
    not given), free-form values as JSON text."""
    if "anyOf" in schema:
        if value is None:
            return None
        real = [b for b in schema["anyOf"] if b.get("type") != "null"]
        return strict_args(real[0], value) if len(real) == 1 else value
    t = schema.get("type")
    types = t if isinstance(t, list) else [t]
    if "object" in types and isinstance(value, dict):
        return {k: strict_args(s, value[k]) if k in value else None for k, s in schema["properties"].items()}
    if "array" in types and isinstance(value, list):
        return [strict_args(schema["items"], v) for v in value]
    if "string" in types and value is not None and not isinstance(value, str):
        return json.dumps(value)
    return value


# -- the four loops ---------------------------------------------------------------------------------


def run_langchain(adapter: Any, turns: list[list[Call]], asynchronous: bool) -> list[Outcome]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from ani.integrations.langchain import tools

    class ScriptedChat(GenericFakeChatModel):
        seen: list[Any] = []

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # what a chat model is given
            self.seen = [convert_to_openai_tool(t) for t in tools]
            return self

    msgs = [AIMessage(content="", tool_calls=[{"name": c.name, "args": c.args, "id": f"c{i}{j}", "type": "tool_call"}
                                              for j, c in enumerate(turn)]) for i, turn in enumerate(turns)]
    model = ScriptedChat(messages=iter([*msgs, AIMessage(content="done")]))
    ts = tools(adapter)
    agent = create_agent(model, ts)
    request = {"messages": [HumanMessage("add the route")]}
    out = asyncio.run(agent.ainvoke(request)) if asynchronous else agent.invoke(request)
    seen = {t["function"]["name"]: t["function"]["parameters"] for t in model.seen}
    assert set(seen) == {t.name for t in adapter.tools()}
    for t in ts:  # the hints are in the tool's metadata and tags
        assert t.metadata["destructive"] == ("destructive" in t.tags)
    if "get_topology" in seen:
        assert "devices" not in seen["get_topology"].get("required", [])
    assert out["messages"][-1].content == "done"
    return [Outcome(m.name, m.status == "error", m.content) for m in out["messages"] if isinstance(m, ToolMessage)]


def run_pydantic_ai(adapter: Any, turns: list[list[Call]]) -> list[Outcome]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from ani.integrations.pydantic_ai import tools

    seen: dict[str, Any] = {}

    def play(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.update({t.name: t.parameters_json_schema for t in info.function_tools})
        i = sum(isinstance(m, ModelResponse) for m in messages)
        if i >= len(turns):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(c.name, c.args, f"c{i}{j}") for j, c in enumerate(turns[i])])

    agent = Agent(FunctionModel(play), tools=tools(adapter))
    result = agent.run_sync("add the route")
    assert result.output == "done"
    assert set(seen) == {t.name for t in adapter.tools()}
    return [Outcome(p.tool_name, p.outcome == "failed", p.model_response_str())
            for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]


def run_openai_agents(adapter: Any, turns: list[list[Call]]) -> list[Outcome]:
    from agents import Agent, ModelResponse, RunConfig, Runner, Usage
    from agents.items import ToolCallOutputItem
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from ani.integrations.openai_agents import tools

    class ScriptedModel(Model):
        def __init__(self) -> None:
            self.turn = 0
            self.seen: dict[str, Any] = {}

        async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                               *args: Any, **kwargs: Any) -> Any:
            self.seen = {t.name: t for t in tools}
            i, self.turn = self.turn, self.turn + 1
            if i >= len(turns):
                text = ResponseOutputText(text="done", type="output_text", annotations=[])
                out: list[Any] = [ResponseOutputMessage(id="m", content=[text], role="assistant",
                                                        status="completed", type="message")]
            else:
                out = []
                for j, c in enumerate(turns[i]):
                    schema = self.seen[c.name].params_json_schema
                    args = strict_args(schema, c.args)
                    jsonschema.validate(args, schema)  # what a strict-mode model could send
                    out.append(ResponseFunctionToolCall(arguments=json.dumps(args), call_id=f"c{i}{j}",
                                                        name=c.name, type="function_call", id=f"f{i}{j}"))
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    model = ScriptedModel()
    agent = Agent(name="netops", instructions="configure", tools=tools(adapter), model=model)
    result = asyncio.run(Runner.run(agent, "add the route", run_config=RunConfig(tracing_disabled=True)))
    assert result.final_output == "done"
    assert set(model.seen) == {t.name for t in adapter.tools()}
    for t in model.seen.values():  # strict everywhere, and in the strict form
        assert t.strict_json_schema
        check_strict_schema(t.params_json_schema)
    names = {f"c{i}{j}": c.name for i, turn in enumerate(turns) for j, c in enumerate(turn)}
    outs = []
    for item in result.new_items:
        if isinstance(item, ToolCallOutputItem):
            text = str(item.output)
            failed = text.startswith("{") and json.loads(text).get("ok") is False
            outs.append(Outcome(names[item.raw_item["call_id"]], failed, text))
    return outs


def smolagents_model(turns: list[list[Call]]) -> Any:
    """A smolagents ``Model`` that plays ``turns``, then calls ``final_answer("done")``;
    ``seen``: the tools it was last given, by name."""
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model

    class ScriptedModel(Model):
        def __init__(self) -> None:
            super().__init__(model_id="scripted")
            self.turn = 0
            self.seen: dict[str, Any] = {}

        def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                     tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
            self.seen = {t.name: t for t in tools_to_call_from or []}
            i, self.turn = self.turn, self.turn + 1
            calls = turns[i] if i < len(turns) else [Call("final_answer", {"answer": "done"})]
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[
                ChatMessageToolCall(function=ChatMessageToolCallFunction(name=c.name, arguments=c.args),
                                    id=f"c{i}{j}", type="function") for j, c in enumerate(calls)])

    return ScriptedModel()


def run_smolagents(adapter: Any, turns: list[list[Call]]) -> list[Outcome]:
    from smolagents import ToolCallingAgent
    from smolagents.memory import ActionStep

    from ani.integrations.smolagents import tools

    model = smolagents_model(turns)
    agent = ToolCallingAgent(tools=tools(adapter), model=model, max_steps=len(turns) + 2, verbosity_level=-1)
    assert agent.run("add the route") == "done"
    assert set(model.seen) - {"final_answer"} == {t.name for t in adapter.tools()}
    if "get_topology" in model.seen:
        assert model.seen["get_topology"].inputs["devices"]["nullable"] is True
    outs = []
    steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
    assert len(steps) == len(turns) + 1  # one per turn, then the final answer
    for step, turn in zip(steps, turns, strict=False):
        if step.error is not None:  # a call raised: smolagents' error channel, the step's error
            # (smolagents then keeps neither the step's tool calls nor its other observations)
            assert len(turn) == 1 and step.tool_calls is None, (turn, step.tool_calls)
            outs.append(Outcome(turn[0].name, True, str(step.error)))
        else:
            assert [tc.name for tc in step.tool_calls] == [c.name for c in turn]
            outs.extend(Outcome(c.name, False, step.observations or "") for c in turn)
    return outs


RUNNERS: dict[str, Callable[..., list[Outcome]]] = {  # (adapter, turns, level) -> outcomes
    # LangChain: invoke (ToolNode's thread pool) at A1, ainvoke (asyncio.to_thread) at the others
    "langchain": lambda a, t, level: run_langchain(a, t, asynchronous=level != "a1"),
    "pydantic_ai": lambda a, t, level: run_pydantic_ai(a, t),
    "openai_agents": lambda a, t, level: run_openai_agents(a, t),
    "smolagents": lambda a, t, level: run_smolagents(a, t),
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_framework_loop_drives_the_lab(lab, open_adapter, framework, level):
    adapter = open_adapter(create_adapter(level, lab, options=OPTIONS[level]))
    pfx = prefix(framework, level)
    turns = script(level, pfx)
    outcomes = RUNNERS[framework](adapter, turns, level)
    check(lab, level, pfx, turns, outcomes)


def test_smolagents_errors_returned_keep_every_result_of_a_parallel_step(lab, open_adapter):
    """smolagents drops the other observations of a step whose call raised; with
    ``errors="return"`` the failure is an observation, and the change made beside it is seen."""
    from smolagents import ToolCallingAgent
    from smolagents.memory import ActionStep

    from ani.integrations.smolagents import tools

    line = "ip route 203.0.113.200/32 Null0"
    turn = [Call("update_config", {"device": "e9", "commands": [line]}),
            Call("update_config", {"device": "e2", "commands": [line]})]
    adapter = open_adapter(create_adapter("a1", lab, options=OPTIONS["a1"]))
    agent = ToolCallingAgent(tools=tools(adapter, errors="return"), model=smolagents_model([turn]), max_steps=3,
                             verbosity_level=-1)
    assert agent.run("add the route") == "done"
    step = next(s for s in agent.memory.steps if isinstance(s, ActionStep))
    assert step.error is None and [tc.name for tc in step.tool_calls] == ["update_config", "update_config"]
    assert "[success] " + line in step.observations, step.observations
    assert error_payload_in(step.observations)["code"] == "unknown_device"
    assert line in lab.running_config("e2").splitlines()
