"""Issue 26's first must-show: a pydantic-ai agent named in a campaign file by ``module:factory``
runs a two-cell campaign (a1, a3t) from the CLI (``python -m ani.cli campaign run`` in a
subprocess, on real FRR labs), driven by the scripted chat-completions model of
tests/fake_model.py (``framework_model``) through pydantic-ai's own OpenAI client.

The campaign file sits in its own folder beside a copy of examples/agents/pydantic_ai_agent.py
(``agent: {kind: "pydantic_ai_agent:make_agent", base_url, model}``), as a user would place it.
Budget ``max_steps: 2``: at a1 the model makes three calls, so the third is refused and the run
stops with ``max_steps``; at a3t it makes two (``apply``, ``list_services``) and answers: the
run is submitted and the site is onboarded. Each record carries steps, tokens and the stop
reason as the shipped LLM agent's do (``stop_reason``, ``steps``, ``cost``, ``process``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from chat_server import ChatServer
from fake_model import USAGE, framework_model
from procs import ani_cli, lab_gone

from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server():
    s = ChatServer(responder=framework_model)
    yield s
    s.close()


def campaign(folder: Path, base_url: str) -> Path:
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "agents" / "pydantic_ai_agent.py", folder)
    path = folder / "framework.yaml"
    path.write_text(yaml.safe_dump({
        "name": "it-framework-agent",
        "scenario": str(ROOT / "scenarios" / "brownfield-small.yaml"),
        "task": "onboard-site", "variants": 1, "seed": 1, "factor": "level",
        "agent": {"kind": "pydantic_ai_agent:make_agent", "base_url": base_url, "model": "scripted-pai"},
        "budget": {"max_steps": 2, "wall_clock_s": 300},
        "cells": [{"name": "a1", "level": "a1"}, {"name": "a3t", "level": "a3t"}],
    }, sort_keys=False))
    return path


@pytest.mark.timeout(720)  # above the subprocess bound, so its SIGINT teardown can finish
def test_a_pydantic_ai_agent_named_by_module_factory_runs_a_campaign(lab_host, server, tmp_path):
    camp = campaign(tmp_path / "mine", server.url)
    out = tmp_path / "res"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"COLUMNS": "200"}
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], env, 480)
    assert server.responder_errors == []
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 2 and all(lab_gone(lab_id) for lab_id in labs), labs
    assert {r["model"] for r in server.requests} == {"scripted-pai"}

    recs = {r.cell: r for r in read_runs(out)}
    assert sorted(recs) == ["a1", "a3t"]
    a1, a3t = recs["a1"], recs["a3t"]
    for r in recs.values():
        assert r.label != "infra_error" and r.agent_error is None, (r.infra_error_reason, r.agent_error)
        assert r.model == "scripted-pai"

    # a1: three calls asked, the third refused; the run stopped with the budget's reason
    assert (a1.stop_reason, a1.steps, a1.tool_calls) == ("max_steps", 2, 2)
    assert a1.budget_exhausted and not a1.success
    assert (a1.process.turns, a1.process.prompt_tokens, a1.process.completion_tokens) == (3, 300, 30)
    assert (a1.cost["tokens"], a1.cost["steps"], a1.cost["turns"]) == (330, 2, 3)
    events = [json.loads(x) for x in Path(a1.trajectory).read_text().splitlines()]
    refused = [e for e in events if e["event"] == "agent_refused"]
    assert [(e["tool"], e["reason"]) for e in refused] == [("list_snapshots", "max_steps")]
    assert "2 of 2 tool calls made" in refused[0]["message"]
    assert [e["tool"] for e in events if e["event"] == "tool_call"] == ["get_topology", "get_running_config"]

    # a3t: two calls and the answer: submitted, onboarded
    assert (a3t.stop_reason, a3t.steps, a3t.tool_calls) == ("submitted", 2, 2)
    assert a3t.success and a3t.label == "clean_success", [x for x in a3t.tests + a3t.invariants if not x.passed]
    assert (a3t.process.turns, a3t.process.prompt_tokens, a3t.process.completion_tokens) == (
        3, 3 * USAGE[0], 3 * USAGE[1])
    assert a3t.process.completion_mode == "correct_submission"
    events = [json.loads(x) for x in Path(a3t.trajectory).read_text().splitlines()]
    start = next(e for e in events if e["event"] == "agent_start")
    assert start["framework"] == "pydantic_ai" and "site.yaml" in start["files"]
    assert [e["turn"] for e in events if e["event"] == "agent_turn"] == [1, 2, 3]

    # runs.jsonl as written carries them too
    lines = {ln["cell"]: ln for ln in map(json.loads, (out / "runs.jsonl").read_text().splitlines()) if ln}
    assert {c: (ln["stop_reason"], ln["steps"], ln["cost"]["tokens"]) for c, ln in lines.items()} == {
        "a1": ("max_steps", 2, 330), "a3t": ("submitted", 2, 330)}
