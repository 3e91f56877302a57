"""ani.agents.framework: the four framework agents of examples/agents/ run as ani agents, driven
by a scripted chat-completions server (tests/chat_server.py) over an adapter on a fake lab
(logic only; against a real lab: tests/integration/test_framework_agents.py).

The scripted model calls ``get_topology`` on each of its first ``CALLS`` turns, then answers
(a text reply, or smolagents' ``final_answer``); turn t reports usage (100 + t, 10 + t).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_server import HANG, ChatServer, call, reply

from ani.adapters.base import BaseAdapter
from ani.agents.base import AgentTask, Budget
from ani.agents.framework import FrameworkAgent, FrameworkSession
from ani.errors import ConfigError
from ani.protocol import Level
from ani.testing import FakeLab
from ani.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agents"))
FRAMEWORKS = ["langchain", "pydantic_ai", "openai_agents", "smolagents"]
CALLS = 3
TASK = AgentTask(task_class="onboard-site", variant_id="onboard-site-s1", request="Onboard the site.",
                 files={"site.yaml": "tenant: blue\n"})


class Topo(BaseAdapter):
    level = Level.A1  # get_topology only (inherited)


def usage(turn: int) -> tuple[int, int]:
    return 100 + turn, 10 + turn


def model(body: dict[str, Any]) -> dict[str, Any]:
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if turn < CALLS:
        return reply(call("get_topology", {}, f"c{turn}"), usage=usage(turn))
    if "final_answer" in tools:
        return reply(call("final_answer", {"answer": "done"}, "cf"), usage=usage(turn))
    return reply(content="done", usage=usage(turn))


@pytest.fixture(scope="module")
def server():
    s = ChatServer(responder=model)
    yield s
    s.close()


def make(framework: str, server: ChatServer) -> FrameworkAgent:
    return importlib.import_module(f"{framework}_agent").make_agent(server.url, "scripted")


def events(traj: Trajectory, name: str) -> list[dict[str, Any]]:
    return [e for e in traj.events if e["event"] == name]


def run(framework: str, server: ChatServer, budget: Budget) -> tuple[Any, Topo]:
    adapter = Topo(FakeLab(), trajectory=Trajectory(level="a1"))
    with adapter:
        return make(framework, server).run(TASK, adapter, budget), adapter


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_run_that_answers_is_submitted_with_its_steps_tokens_and_turns(framework, server):
    res, adapter = run(framework, server, Budget(max_steps=10))
    assert server.responder_errors == []
    assert (res.stop_reason, res.submitted, res.error) == ("submitted", True, None)
    assert res.steps == CALLS == len(events(adapter.trajectory, "tool_call"))
    turns = events(adapter.trajectory, "agent_turn")
    assert [t["turn"] for t in turns] == list(range(1, CALLS + 2))  # the calls' turns, then the answer
    assert [(t["prompt_tokens"], t["completion_tokens"]) for t in turns] == [usage(t) for t in range(CALLS + 1)]
    assert [c["name"] for t in turns[:CALLS] for c in t["tool_calls"]] == ["get_topology"] * CALLS
    assert res.prompt_tokens == sum(usage(t)[0] for t in range(CALLS + 1)) == 406
    assert res.completion_tokens == 46 and res.tokens == 452
    stop = events(adapter.trajectory, "agent_stop")[-1]
    assert (stop["stop_reason"], stop["steps"], stop["prompt_tokens"], stop["total_tokens"]) == (
        "submitted", 3, 406, 452)
    submit = events(adapter.trajectory, "agent_action")[-1]
    assert (submit["action"], submit["summary"]) == ("submit", "done")
    start = events(adapter.trajectory, "agent_start")[0]
    assert start["framework"] == framework and "Attached file site.yaml:" in start["request"]
    assert start["tools"] == ["get_topology"]
    # the model read the request and the attached file as the shipped LLM agent sends them
    sent = json.dumps(server.requests[-(CALLS + 1)]["messages"])
    assert json.dumps("Onboard the site.\n\nAttached file site.yaml:\n```\ntenant: blue\n```")[1:-1] in sent


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_call_past_max_steps_is_refused_and_the_run_stops(framework, server):
    res, adapter = run(framework, server, Budget(max_steps=2))
    assert (res.stop_reason, res.submitted, res.steps, res.error) == ("max_steps", False, 2, None)
    assert len(events(adapter.trajectory, "tool_call")) == 2  # the third call never reached the adapter
    refused = events(adapter.trajectory, "agent_refused")
    assert [(r["tool"], r["reason"]) for r in refused] == [("get_topology", "max_steps")]
    assert "2 of 2 tool calls made" in refused[0]["message"] and "not run" in refused[0]["message"]
    assert len(events(adapter.trajectory, "agent_turn")) == 3  # no model turn after the refusal
    assert events(adapter.trajectory, "agent_stop")[-1]["stop_reason"] == "max_steps"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_token_budget_stops_the_run_after_the_turn_that_spent_it(framework, server):
    res, adapter = run(framework, server, Budget(max_steps=10, max_tokens=200))  # 110 + 112 >= 200
    assert (res.stop_reason, res.tokens) == ("max_tokens", 222)
    assert len(events(adapter.trajectory, "agent_turn")) == 2


def test_turns_without_usage_are_unknown_not_free():
    traj = Trajectory(level="a1")
    s = FrameworkSession(Budget(), traj)
    s.turn(0, 0, 0)  # a framework's zeros: nothing reported
    s.turn(None, None, 50)  # a total without a split counts
    assert [(e["prompt_tokens"], e["completion_tokens"], e["total_tokens"]) for e in traj.events] == [
        (None, None, None), (None, None, 50)]
    assert (s.split_reported, s.tokens()) == (False, 50)


def test_a_turn_with_a_split_and_no_total_gets_the_sum_as_the_llm_agent_s_turns_do():
    """pydantic-ai reports input and output tokens only: its turns had total_tokens None where
    the shipped LLM agent's (and the other frameworks') have the total (docs/frameworks.md:
    agent_turn "as the shipped LLM agent writes it")."""
    traj = Trajectory(level="a1")
    s = FrameworkSession(Budget(), traj)
    s.turn(100, 10)
    s.turn(100, 12, 115)  # a reported total stays as reported
    assert [e["total_tokens"] for e in traj.events] == [110, 115]
    assert s.tokens() == 222


def test_a_spent_wall_clock_refuses_the_call():
    now = [0.0]
    s = FrameworkSession(Budget(wall_clock_s=5), Trajectory(level="a1"), clock=lambda: now[0])
    assert s.take_step("x") is None
    now[0] = 5.0
    refusal = s.take_step("x")
    assert refusal is not None and refusal.error.code.value == "not_allowed" and "wall_clock" in refusal.error.message
    assert (s.steps, s.stop) == (1, "wall_clock")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_endpoint_that_refuses_connections_is_an_infrastructure_error(framework):
    agent = importlib.import_module(f"{framework}_agent").make_agent("http://127.0.0.1:9/v1", "m")
    with Topo(FakeLab(), trajectory=Trajectory(level="a1")) as adapter:
        res = agent.run(TASK, adapter, Budget(max_steps=3))
    assert res.stop_reason == "error" and res.infra_error == res.error and res.error.startswith(framework)


@pytest.mark.parametrize("framework", ["langchain", "pydantic_ai", "openai_agents"])
def test_a_model_request_past_the_wall_clock_is_cut(framework):
    """The async loops are cancelled when the wall clock runs out mid-request (the request hangs)."""
    s = ChatServer()
    s.script = [HANG]
    try:
        with Topo(FakeLab(), trajectory=Trajectory(level="a1")) as adapter:
            res = make(framework, s).run(TASK, adapter, Budget(wall_clock_s=1))
    finally:
        s.close()
    assert (res.stop_reason, res.steps, res.error) == ("wall_clock", 0, None)


def test_a_run_from_a_running_event_loop_works():
    async def inside() -> Any:
        s = ChatServer(responder=model)
        try:
            with Topo(FakeLab(), trajectory=Trajectory(level="a1")) as adapter:
                return make("pydantic_ai", s).run(TASK, adapter, Budget())
        finally:
            s.close()

    import asyncio

    assert asyncio.run(inside()).stop_reason == "submitted"


def test_a_build_that_raises_is_the_agent_s_error():
    def build(tools: Any, task: Any) -> Any:
        raise ValueError("no model")

    with Topo(FakeLab(), trajectory=Trajectory(level="a1")) as adapter:
        res = FrameworkAgent("pydantic_ai", build).run(TASK, adapter, Budget())
    assert (res.stop_reason, res.error, res.infra_error) == ("error", "pydantic_ai: ValueError: no model", None)


def test_an_unknown_framework_names_the_known_ones():
    with pytest.raises(ConfigError, match="langchain, pydantic_ai, openai_agents, smolagents; got 'crewai'"):
        FrameworkAgent("crewai", lambda tools, task: None)
