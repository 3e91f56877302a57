"""The framework agents of examples/agents/ (docs/frameworks.md) run as ani agents against a real
lab (issue 26): ``make_agent(base_url, model)`` of each framework, driven by the scripted
chat-completions model of tests/fake_model.py (``framework_model``) through the framework's own
OpenAI client, on one lab of the onboard-site variant 0 of scenarios/brownfield-small.yaml.

- each framework at A1: ``get_topology``, ``get_running_config`` and ``list_snapshots`` of the
  site's edge, then the answer: submitted, 3 steps, 4 turns of (100, 10) tokens;
- pydantic-ai at A3-T: the onboard intent through ``apply``, ``list_services``, the answer: the
  site's interface is on its edge (read out of band);
- LangChain at A1 with ``max_steps=2``: the third call is refused (the model's tool message
  says so), never reaches the router, and the run stops with ``max_steps``;
- the page's LangChain line (``create_agent("openai:gpt-4.1", tools(adapter))``) runs as the
  page shows it, with ``OPENAI_BASE_URL`` pointing at a scripted model.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, call, reply
from fake_model import ANSWER, USAGE, framework_model

from ani.agents.base import Budget
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agents"))
FRAMEWORKS = ["langchain", "pydantic_ai", "openai_agents", "smolagents"]


def _variant() -> tuple[Any, Any]:
    from ani.scenario import get_task_class
    from ani.scenario.manifest import load_scenario

    scenario = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")
    return scenario, get_task_class("onboard-site").variant(scenario, 0)


SCENARIO, VARIANT = _variant()
LAB_TOPOLOGY, LAB_PREFIX = VARIANT.lab_topology(SCENARIO), "fwa"
TASK = VARIANT.agent_view()
OPTIONS = {"a1": {"command_timeout_s": 20}, "a3t": {"check_bound_s": 10}}


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(scope="module")
def server():
    s = ChatServer(responder=framework_model)
    yield s
    assert s.responder_errors == []
    s.close()


def events(adapter: Any, name: str) -> list[dict[str, Any]]:
    return [e for e in adapter.trajectory.events if e["event"] == name]


def agent_of(framework: str, server: ChatServer) -> Any:
    return importlib.import_module(f"{framework}_agent").make_agent(server.url, "scripted-fw")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_example_runs_at_a1_with_ani_s_accounting(lab, open_adapter, server, framework):
    adapter = open_adapter(create_adapter("a1", lab, options=OPTIONS["a1"]))
    res = agent_of(framework, server).run(TASK, adapter, Budget(max_steps=10, wall_clock_s=120))
    assert (res.stop_reason, res.submitted, res.error) == ("submitted", True, None)
    calls = events(adapter, "tool_call")
    assert [c["tool"] for c in calls] == ["get_topology", "get_running_config", "list_snapshots"]
    assert all(c["ok"] for c in calls), calls
    assert res.steps == 3
    assert (res.prompt_tokens, res.completion_tokens, res.tokens) == (4 * USAGE[0], 4 * USAGE[1], 440)
    turns = events(adapter, "agent_turn")
    assert [(t["turn"], t["prompt_tokens"], t["completion_tokens"]) for t in turns] == [
        (i, *USAGE) for i in (1, 2, 3, 4)]
    assert [[c["name"] for c in t["tool_calls"]] for t in turns[:3]] == [["get_topology"], ["get_running_config"],
                                                                          ["list_snapshots"]]
    assert events(adapter, "agent_action")[-1]["summary"] == ANSWER


def test_the_pydantic_ai_example_onboards_the_site_at_a3t(lab, open_adapter, server):
    adapter = open_adapter(create_adapter("a3t", lab, options=OPTIONS["a3t"]))
    res = agent_of("pydantic_ai", server).run(TASK, adapter, Budget(max_steps=10, wall_clock_s=120))
    assert (res.stop_reason, res.steps, res.tokens) == ("submitted", 2, 330), res.error
    calls = events(adapter, "tool_call")
    assert [(c["tool"], c["ok"]) for c in calls] == [("apply", True), ("list_services", True)], calls
    site = VARIANT.files["site.yaml"]
    edge = next(line.split(":", 1)[1].strip() for line in site.splitlines() if line.startswith("edge:"))
    name = next(line.split(":", 1)[1].strip() for line in site.splitlines() if line.startswith("site:"))
    assert f"interface to-{name}" in lab.running_config(edge).splitlines()


def test_a_call_past_the_step_budget_is_refused_and_the_run_stops(lab, open_adapter, server):
    adapter = open_adapter(create_adapter("a1", lab, options=OPTIONS["a1"]))
    n = len(server.requests)
    res = agent_of("langchain", server).run(TASK, adapter, Budget(max_steps=2, wall_clock_s=120))
    assert (res.stop_reason, res.submitted, res.steps, res.error) == ("max_steps", False, 2, None)
    assert [c["tool"] for c in events(adapter, "tool_call")] == ["get_topology", "get_running_config"]
    refused = events(adapter, "agent_refused")
    assert [(r["tool"], r["reason"]) for r in refused] == [("list_snapshots", "max_steps")]
    assert len(server.requests) - n == 3  # no model request after the refusal
    stop = events(adapter, "agent_stop")[-1]
    assert (stop["stop_reason"], stop["steps"], stop["prompt_tokens"], stop["completion_tokens"]) == \
        ("max_steps", 2, 3 * USAGE[0], 3 * USAGE[1])


def _topology_model(body: dict[str, Any]) -> dict[str, Any]:
    if not any(m["role"] == "tool" for m in body["messages"]):
        return reply(call("get_topology", {}, "c0"))
    seen = next(m["content"] for m in body["messages"] if m["role"] == "tool")
    return reply(content="routers: " + seen.splitlines()[0].split(":", 1)[1].strip())


def test_the_page_s_langchain_line_runs_with_langchain_openai(lab, monkeypatch, run_doc_example):
    """docs/frameworks.md's ``create_agent("openai:gpt-4.1", tools(adapter))`` after
    ``pip install 'ani-sdk[langchain]'`` (langchain-openai is in the extra)."""
    s = ChatServer(responder=_topology_model)
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", s.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
        monkeypatch.setenv("LAB_ID", lab.id)
        out = run_doc_example("frameworks.md", "langchain-openai", timeout=120)
    finally:
        s.close()
    assert s.responder_errors == [] and {r["model"] for r in s.requests} == {"gpt-4.1"}
    # the model's answer, built from the get_topology result LangGraph's ToolNode sent it
    tool_text = next(m["content"] for m in s.requests[-1]["messages"] if m["role"] == "tool")
    assert tool_text.startswith("nodes: c1, c2, e1") and out.strip() == "routers: " + tool_text.splitlines()[0][7:], out
    assert json.dumps(s.requests[0]["tools"]).count('"name"') >= 6  # A1's tools reached the model
