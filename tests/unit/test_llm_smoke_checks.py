"""The plumbing checks of ``make llm-smoke`` (scripts/llm_smoke_checks.py) hold on a consistent
run and each fails on the inconsistency it is there for. The run: the LLM agent (real ``openai``
client) against the fake chat-completions server on 127.0.0.1 with the fake adapter of
test_llm_agent; its record is made the way the runner makes it (process metrics by
:func:`ani.campaign.metrics.compute_metrics`)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_server import call, reply
from test_llm_agent import KEY_ENV, TASK, FakeAdapter

from ani.agents import Budget, create_agent
from ani.campaign.metrics import compute_metrics
from ani.campaign.results import label_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from llm_smoke_checks import run_checks  # noqa: E402

TESTS = [{"name": "reach", "passed": False}, {"name": "isolated", "passed": True}]
INVARIANTS = [{"name": "inv1", "passed": True}]
USAGE = (2000, 10)  # prompt tokens enough for the messages and the tools


@pytest.fixture
def run(server, monkeypatch) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run with a good call, a refused call, invalid JSON, a reply without a call, a submit."""
    monkeypatch.setenv(KEY_ENV, "sk-test-smoke-checks")
    server.script = [
        reply(call("get_topology", {}, "a"), call("update_config", {"device": "r9", "commands": ["x"]}, "b"),
              usage=USAGE),
        reply(call("get_running_config", '{"device": ', "c"), usage=USAGE),
        reply(content="looks fine", usage=USAGE),
        reply(call("submit", {"summary": "done"}, "d"), usage=USAGE),
    ]
    agent = create_agent({"kind": "llm", "base_url": server.url, "model": "m", "api_key_env": KEY_ENV,
                          "retry_backoff_s": 0})
    adapter = FakeAdapter()
    result = agent.run(TASK, adapter, Budget())
    events = [dict(e) for e in adapter.trajectory.events]
    success = all(t["passed"] for t in TESTS)
    process = compute_metrics(events, "a1", stop_reason=result.stop_reason, submitted=result.submitted,
                              success=success, tools=adapter.tools())
    calls = [e for e in events if e["event"] == "tool_call"]
    record = {
        "label": label_for(success, True), "success": success, "damage_free": True,
        "tests": TESTS, "invariants": INVARIANTS, "steps": result.steps,
        "tool_calls": len(calls), "tool_errors": sum(1 for c in calls if not c["ok"]),
        "stop_reason": result.stop_reason, "process": process.model_dump(),
    }
    return record, events


def failed(record: dict[str, Any], events: list[dict[str, Any]]) -> set[str]:
    return {c.name for c in run_checks(record, events) if not c.ok}


def test_a_consistent_run_passes_every_check(run):
    record, events = run
    checks = run_checks(record, events)
    assert [c.name for c in checks] == ["turns", "tokens", "tools_seen", "tool_calls", "errors_answered",
                                        "verdict", "process"]
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    by = {c.name: c.detail for c in checks}
    assert "1 refused calls, 2 null actions" in by["errors_answered"]
    assert "4 calls asked, 4 answered; 2 reached the adapter, 1 refused" in by["tool_calls"]


def _drop_first(events, pred):
    i = next(i for i, e in enumerate(events) if pred(e))
    return events[:i] + events[i + 1:]


BREAKS = {
    "turns": lambda r, e: (r["process"].__setitem__("turns", 9), e)[1],
    "tokens": lambda r, e: (r["process"].__setitem__("prompt_tokens", 1), e)[1],
    "tools_seen": lambda r, e: [dict(x, seen=False) if x["event"] == "agent_tools_check" else x for x in e],
    "tool_calls": lambda r, e: _drop_first(e, lambda x: x["event"] == "agent_observation"),
    "errors_answered": lambda r, e: [
        dict(x, text="fine") if x["event"] == "agent_observation" and x["tool"] == "update_config" else x for x in e],
    "verdict": lambda r, e: (r.__setitem__("success", True), e)[1],
    "process": lambda r, e: (r["process"].__setitem__("completion_mode", "correct_submission"), e)[1],
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_each_check_fails_on_its_inconsistency(run, name):
    record, events = copy.deepcopy(run)
    events = BREAKS[name](record, events)
    assert name in failed(record, events)


def test_a_record_it_cannot_read_fails_instead_of_raising(run):
    record, events = copy.deepcopy(run)
    record["process"] = "garbage"
    bad = failed(record, events)
    assert {"turns", "tokens", "process"} <= bad


def test_a_budget_may_cut_the_last_replys_calls_but_no_other(run):
    record, events = copy.deepcopy(run)
    last = max(i for i, e in enumerate(events) if e["event"] == "agent_turn")
    # the last reply (submit) answered: cutting its observation is allowed
    cut_last = _drop_first(events[last:], lambda x: x["event"] == "agent_observation")
    assert "tool_calls" not in failed(record, events[:last] + cut_last)
