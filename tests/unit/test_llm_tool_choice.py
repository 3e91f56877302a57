"""``tool_choice`` is sent explicitly, as configured, and the first turn's prompt tokens tell
whether the endpoint gave the model the tools (issue 16). The real ``openai`` client against the
fake chat-completions server on 127.0.0.1 (tests/chat_server.py); the server here counts prompt
tokens the way llama-cpp-python's ``chatml-function-calling`` handler behaves: the tools are in
the prompt only when the request carries a ``tool_choice`` other than ``none``. The real server
is exercised by ``make llm-smoke``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from chat_server import call, reply
from test_llm_agent import KEY_ENV, TASK, FakeAdapter

from ani.agents import Budget, create_agent
from ani.agents.llm_tools_check import CHARS_PER_TOKEN_MAX, tools_check
from ani.campaign.live import event_line, live_view_logging
from ani.errors import ConfigError


def events(run: Any, name: str) -> list[dict[str, Any]]:
    return [e for e in run.trajectory.events if e["event"] == name]


def llama_cpp_like_tokens(body: dict[str, Any]) -> int:
    """Prompt tokens as a server that renders the tools only with a tool_choice would count
    them, at 4 characters a token."""
    chars = sum(len(m.get("content") or "") for m in body["messages"])
    if body.get("tools") and body.get("tool_choice") not in (None, "none"):
        chars += len(json.dumps(body["tools"]))
    return max(1, chars // 4)


@pytest.fixture
def llama_like(server):
    """The server answers get_topology, then submit, with llama-cpp-like prompt tokens."""

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
        pt = llama_cpp_like_tokens(body)
        if body.get("tool_choice") == "none":
            return reply(content="1. get_topology\n2. submit", usage=(pt, 8))
        return reply(call("get_topology" if turns == 0 else "submit", {}), usage=(pt, 8))

    server.responder = responder
    return server


@pytest.fixture
def agent_for(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-tool-choice")

    def make(**options: Any) -> Any:
        opts = {"kind": "llm", "base_url": server.url, "model": "m", "api_key_env": KEY_ENV,
                "retry_backoff_s": 0, **options}
        agent = create_agent(opts)
        agent.sleep = lambda _s: None
        return agent

    return make


def test_auto_is_sent_by_default_on_every_request(llama_like, agent_for):
    run = agent_for().run(TASK, FakeAdapter(), Budget())
    assert run.stop_reason == "submitted" and len(llama_like.requests) == 2
    assert [r["tool_choice"] for r in llama_like.requests] == ["auto", "auto"]
    assert events(run, "agent_start")[0]["tool_choice"] == "auto"


@pytest.mark.parametrize("choice", ["auto", "required", "none"])
def test_the_configured_tool_choice_is_sent(server, agent_for, choice):
    server.script = [reply(call("submit", {}))]
    agent_for(tool_choice=choice).run(TASK, FakeAdapter(), Budget())
    assert server.requests[0]["tool_choice"] == choice
    assert len(server.requests[0]["tools"]) == 5  # the tools are always listed


def test_omit_leaves_the_field_out_of_every_request_plans_included(llama_like, agent_for):
    run = agent_for(tool_choice="omit", mode="planner-executor").run(TASK, FakeAdapter(), Budget())
    assert run.stop_reason == "submitted" and len(llama_like.requests) == 3  # plan, get_topology, submit
    assert llama_like.requests and all("tool_choice" not in r for r in llama_like.requests)


def test_planner_executor_plans_with_none_and_executes_with_the_configured_choice(llama_like, agent_for):
    run = agent_for(tool_choice="required", mode="planner-executor").run(TASK, FakeAdapter(), Budget())
    assert run.stop_reason == "submitted"
    assert [r["tool_choice"] for r in llama_like.requests] == ["none", "required", "required"]
    # the check is made on the first turn whose tools were callable: turn 2, not the plan
    (check,) = events(run, "agent_tools_check")
    assert check["turn"] == 2 and check["seen"] is True and check["tool_choice"] == "required"


def test_tools_seen_no_warning(llama_like, agent_for, caplog):
    caplog.set_level(logging.WARNING, logger="ani.agents.llm")
    run = agent_for().run(TASK, FakeAdapter(), Budget())
    (check,) = events(run, "agent_tools_check")
    assert check["seen"] is True and check["prompt_tokens"] >= check["min_tokens"]
    assert check["tool_chars"] > 0 and check["message_chars"] > 0
    assert not [r for r in caplog.records if r.name == "ani.agents.llm"]
    assert event_line(check) is None  # nothing printed when all is well


def test_tools_dropped_by_the_endpoint_warn_in_the_trajectory_and_the_log(llama_like, agent_for, caplog):
    """The issue's case: ``tools`` without ``tool_choice`` reach a server that then renders none."""
    caplog.set_level(logging.WARNING, logger="ani.agents.llm")
    run = agent_for(tool_choice="omit").run(TASK, FakeAdapter(), Budget())
    (check,) = events(run, "agent_tools_check")
    assert check["turn"] == 1 and check["seen"] is False and check["tool_choice"] is None
    assert check["prompt_tokens"] < check["min_tokens"]
    (warning,) = [r for r in caplog.records if r.name == "ani.agents.llm"]
    text = warning.getMessage()
    assert f"{check['prompt_tokens']} prompt tokens" in text and "tool_choice sent: omitted" in text
    assert "/chat/completions" in text and "sk-test" not in text
    line = event_line(check)
    assert line is not None and "did not give the model the tools" in line and "omitted" in line
    # only once per run, however many turns follow
    assert len(events(run, "agent_turn")) == 2


def test_under_the_live_view_the_warning_is_printed_once_not_logged_again(llama_like, agent_for, caplog):
    """``ani run`` prints the event's own line; the log record that repeats it is dropped while
    the live view runs, other records of that logger pass, and the filter goes at exit."""
    caplog.set_level(logging.WARNING, logger="ani.agents.llm")
    with live_view_logging():
        run = agent_for(tool_choice="omit").run(TASK, FakeAdapter(), Budget())
        logging.getLogger("ani.agents.llm").warning("an unrelated warning")
    (check,) = events(run, "agent_tools_check")
    assert check["seen"] is False and event_line(check) is not None
    assert [r.getMessage() for r in caplog.records if r.name == "ani.agents.llm"] == ["an unrelated warning"]
    caplog.clear()
    agent_for(tool_choice="omit").run(TASK, FakeAdapter(), Budget())
    assert len([r for r in caplog.records if r.name == "ani.agents.llm"]) == 1


def test_no_usage_gives_no_verdict_and_no_warning(server, agent_for, caplog):
    caplog.set_level(logging.WARNING, logger="ani.agents.llm")
    server.script = [reply(call("submit", {}), usage=None)]
    run = agent_for().run(TASK, FakeAdapter(), Budget())
    (check,) = events(run, "agent_tools_check")
    assert check["seen"] is None and check["prompt_tokens"] is None
    assert not [r for r in caplog.records if r.name == "ani.agents.llm"]


def test_tool_choice_none_is_not_checked(server, agent_for):
    server.script = [reply(call("submit", {}), usage=(1, 1))]
    run = agent_for(tool_choice="none").run(TASK, FakeAdapter(), Budget())
    assert events(run, "agent_tools_check") == []


def test_an_unknown_tool_choice_is_refused_naming_the_field(agent_for):
    with pytest.raises(ConfigError) as ei:
        agent_for(tool_choice="any")
    assert "agent.tool_choice" in str(ei.value) and "'auto'" in str(ei.value)


# -- the check itself -------------------------------------------------------------------------

MESSAGES = [{"role": "system", "content": "s" * 600}, {"role": "user", "content": "u" * 600}]
TOOLS = [{"type": "function", "function": {"name": "t", "description": "d" * 900,
                                            "parameters": {"type": "object", "properties": {}}}}]


def test_the_floor_is_the_text_over_the_most_chars_a_token_covers():
    tool_chars = len(json.dumps(TOOLS, separators=(",", ":")))
    c = tools_check(10_000, MESSAGES, TOOLS)
    assert (c.message_chars, c.tool_chars) == (1200, tool_chars)
    assert c.min_tokens == int((1200 + tool_chars) / CHARS_PER_TOKEN_MAX)
    assert tools_check(c.min_tokens, MESSAGES, TOOLS).seen is True
    assert tools_check(c.min_tokens - 1, MESSAGES, TOOLS).seen is False
    assert tools_check(None, MESSAGES, TOOLS).seen is None


def test_tool_calls_in_the_history_count_as_message_text():
    history = MESSAGES + [{"role": "assistant", "content": None,
                           "tool_calls": [{"id": "a", "function": {"name": "x", "arguments": "{}"}}]}]
    assert tools_check(1, history, TOOLS).message_chars > 1200


def test_a_tool_call_reply_without_text_goes_back_with_empty_content_not_null(llama_like, agent_for):
    """llama-cpp-python's server refuses ``content: null`` (HTTP 500) and a missing content
    next to tool_calls; the API allows ``""`` there too."""
    agent_for().run(TASK, FakeAdapter(), Budget())
    (assistant,) = [m for m in llama_like.requests[1]["messages"] if m["role"] == "assistant"]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["function"]["name"] == "get_topology"
