"""A campaign cell's adapter options end to end on a real lab: an a1 cell with
``options: {apply_config_shape: netconfarena, extra_tools: [check_device_status]}`` and the LLM
agent against a scripted chat-completions server (tests/chat_server.py). The model is offered
``apply_config`` and ``check_device_status`` and not ``update_config``; it checks e1's status,
applies a prefix-list through ``apply_config`` (the dict of newline-separated lines) and
submits. The record carries the options, the trajectory the calls (the change measured:
``changed``), the process metrics their kinds. The task is not solved (the change is not the task's), so the run is graded a failure: what is asserted is
the path, not the verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, call, reply

from ani.campaign.runner import run_one
from ani.campaign.spec import parse_spec
from ani.trajectory import Trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LINE = "ip prefix-list PL-ARENA seq 5 permit 192.0.2.0/24"
SEEN: list[set[str]] = []


def scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    SEEN.append(tools)
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    script = [
        reply(call("check_device_status", {"devices": ["e1"], "metrics": ["interface"]}, "c0")),
        reply(call("apply_config", {"configs": {"e1": f"configure terminal\n{LINE}\nend\n"}}, "c1")),
        reply(call("submit", {"summary": "added PL-ARENA"}, "c2")),
    ]
    return script[min(turn, len(script) - 1)]


@pytest.fixture
def server():
    s = ChatServer(responder=scripted_model)
    yield s
    s.close()


@pytest.mark.timeout(600)
def test_a_cells_options_shape_its_tools_on_a_real_run(lab_host, server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cell-options")
    spec = parse_spec({
        "name": "cell-options", "scenario": str(ROOT / "scenarios" / "brownfield-small.yaml"),
        "task": "onboard-site", "variants": 1, "seed": 1, "factor": "level",
        "agent": {"kind": "llm", "mode": "react", "base_url": server.url, "model": "scripted-test-model",
                  "api_key_env": "OPENAI_API_KEY", "max_retries": 0},
        "budget": {"max_steps": 10, "max_tokens": 100000, "wall_clock_s": 300},
        "cells": [{"name": "a1-arena", "level": "a1",
                   "options": {"apply_config_shape": "netconfarena", "extra_tools": ["check_device_status"]}}],
    }, "test", tmp_path)
    rec = run_one(spec, "a1-arena", 1, tmp_path / "out")
    assert server.responder_errors == []
    assert rec.label not in ("infra_error", "environment_invalid"), rec.infra_error_reason
    assert rec.adapter_options == {"apply_config_shape": "netconfarena", "extra_tools": ["check_device_status"]}
    assert SEEN and all("apply_config" in t and "check_device_status" in t and "update_config" not in t
                        for t in SEEN)

    calls = [e for e in Trajectory.read(rec.trajectory) if e.get("event") == "tool_call"]
    assert [c["tool"] for c in calls] == ["check_device_status", "apply_config"]
    status, apply = calls
    assert status["ok"] is True and status["changed"] is False
    assert "e1: up (reachable)" in status["summary"]
    assert apply["ok"] is True and apply["changed"] is True, json.dumps(apply)[:2000]
    assert f"2. [success] {LINE}" in apply["summary"]
    assert rec.process.action_counts["validation"] == 1 and rec.process.action_counts["update"] == 1
