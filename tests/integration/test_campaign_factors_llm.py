"""Campaigns with the agent mode and the model as the factor (issue 14, section 3), run by
``python -m ani.cli campaign run`` in a subprocess on real FRR labs with the real ``openai``
client against the fake chat-completions server (``tests/chat_server.py``) and its scripted
model (``tests/fake_model.py``): ``campaigns/agent-modes.yaml`` and ``campaigns/models.yaml``
with the endpoint, S = 1 and a few cells changed. Every run is labelled with its factor
(``agent_mode``, ``model``) and its cost; the matched-budget check refuses a second differing
field before any lab starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from chat_server import ChatServer, call, reply
from fake_model import USAGE, onboard_model
from procs import ani_cli, lab_gone
from test_campaign_llm import _env

from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-factors"
PER_TURN = sum(USAGE)


def campaign_file(tmp_path: Path, shipped: str, name: str, cells: list[dict[str, Any]], base_url: str) -> Path:
    """The shipped campaign file ``shipped`` with the endpoint, the cells and S changed."""
    src = ROOT / "campaigns" / shipped
    data = yaml.safe_load(src.read_text())
    assert data["agent"]["kind"] == "llm"
    data["name"] = name
    data["scenario"] = str((src.parent / data["scenario"]).resolve())
    data["agent"]["base_url"] = base_url
    data["variants"] = 1
    data["cells"] = cells
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def server():
    s = ChatServer(responder=onboard_model)
    yield s
    s.close()


@pytest.mark.timeout(900)
def test_agent_mode_as_the_factor_against_the_fake_server(lab_host, server, tmp_path):
    cells = [
        {"name": "react", "agent_mode": "react"},
        {"name": "single-turn", "agent_mode": "single-turn"},
        {"name": "pe+recovery", "agent_mode": "planner-executor+recovery"},
    ]
    camp = campaign_file(tmp_path, "agent-modes.yaml", "it-agent-modes", cells, server.url)
    out = tmp_path / "res"
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(OPENAI_API_KEY=KEY), 720)
    assert server.responder_errors == []
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 3 and all(lab_gone(lab) for lab in labs), labs

    recs = {r.cell: r for r in read_runs(out)}
    assert sorted(recs) == ["pe+recovery", "react", "single-turn"]
    for r in recs.values():
        failed = [x for x in r.tests + r.invariants if not x.passed]
        assert r.label == "clean_success", (r.cell, r.infra_error_reason, r.agent_error, failed)
        assert r.model == "Qwen/Qwen2.5-7B-Instruct" and r.level == "a3t" and r.form == "intent"
    assert {c: r.agent_mode for c, r in recs.items()} == {
        "react": "react", "single-turn": "single-turn", "pe+recovery": "planner-executor+recovery"}
    # cost: react apply + submit (2 turns), single-turn one reply, planner-executor a plan first
    turns = {"react": 2, "single-turn": 1, "pe+recovery": 3}
    for cell, n in turns.items():
        cost = recs[cell].cost
        assert (cost["turns"], cost["tokens"]) == (n, n * PER_TURN), (cell, cost)
        assert cost["prompt_tokens"] == n * USAGE[0] and cost["tool_calls"] == 1
        assert cost["agent_s"] == recs[cell].agent_s and cost["wall_s"] == recs[cell].wall_s
    # each run's agent was started in its cell's mode (the trajectory's agent_start)
    import json

    for cell, mode in (("react", "react"), ("single-turn", "single-turn"), ("pe+recovery", "planner-executor")):
        events = [json.loads(x) for x in Path(recs[cell].trajectory).read_text().splitlines()]
        assert next(e for e in events if e["event"] == "agent_start")["mode"] == mode
    assert any(r.get("tool_choice") == "none" for r in server.requests)  # the plan was asked for
    md = (out / "summary.md").read_text()
    assert "| pe+recovery | a3t | - | onboard-site | intent | Qwen/Qwen2.5-7B-Instruct | planner-executor+recovery |" in md
    assert f"| single-turn | 1 | {PER_TURN} | 1.0 |" in md  # the cost section


def lazy_model(body: dict[str, Any]) -> dict[str, Any]:
    """A model that submits at once without changing anything."""
    return reply(call("submit", {"summary": "nothing to do"}, "c0"), usage=USAGE)


@pytest.mark.timeout(900)
def test_model_as_the_factor_on_two_endpoints(lab_host, server, tmp_path):
    other = ChatServer(responder=lazy_model)
    try:
        cells = [
            {"name": "good", "model": "m-good"},
            {"name": "lazy", "model": "m-lazy", "agent": {"base_url": other.url}},
        ]
        camp = campaign_file(tmp_path, "models.yaml", "it-models", cells, server.url)
        out = tmp_path / "res"
        res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(OPENAI_API_KEY=KEY), 600)
    finally:
        other.close()
    assert server.responder_errors == [] and other.responder_errors == []
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 2 and all(lab_gone(lab) for lab in labs), labs
    # each cell's agent asked its own endpoint for its own model
    assert {r["model"] for r in server.requests} == {"m-good"}
    assert {r["model"] for r in other.requests} == {"m-lazy"}
    recs = {r.cell: r for r in read_runs(out)}
    assert (recs["good"].model, recs["good"].label) == ("m-good", "clean_success")
    assert (recs["lazy"].model, recs["lazy"].label) == ("m-lazy", "clean_failure")
    assert recs["good"].agent_mode == recs["lazy"].agent_mode == "react"
    assert recs["lazy"].cost["turns"] == 1 and recs["lazy"].cost["tool_calls"] == 0
    md = (out / "summary.md").read_text()
    assert "| lazy | a3t | - | onboard-site | intent | m-lazy | react |" in md
    # the paired comparison of the two models on the same seed
    assert "| lazy | 1 | 1 | 0 |" in md


def test_the_matched_budget_check_refuses_a_second_field_before_any_lab(server, tmp_path):
    cells = [{"name": "react", "agent_mode": "react"},
             {"name": "single-turn", "agent_mode": "single-turn", "agent": {"max_retries": 0}}]
    camp = campaign_file(tmp_path, "agent-modes.yaml", "it-unmatched", cells, server.url)
    out = tmp_path / "res"
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(OPENAI_API_KEY=KEY), 120)
    assert res.returncode == 2, res.stdout + res.stderr
    line = " ".join(res.stderr.split())
    assert (f"error: {camp}: invalid campaign: cells[1](single-turn).agent.max_retries: differs from cell 'react' "
            "(4 vs 0) but the factor is 'agent_mode': a matched budget holds the retry policy fixed "
            "(only mode, recovery may differ)") in line, res.stderr
    assert not out.exists() and labs == set() and server.requests == []
