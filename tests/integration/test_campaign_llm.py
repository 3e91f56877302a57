"""A campaign with the LLM agent end to end (issue 5): campaigns/level-sweep-llm.yaml pointed at a
scripted chat-completions server on 127.0.0.1, two cells (a1, a3t), one variant, run by
``python -m ani.cli campaign run`` in a subprocess on real FRR labs with the real ``openai`` client.

The scripted model (:func:`scripted_model`) answers by the tools it is offered (A1 has
``update_config``, A3-T ``apply``) and the number of assistant turns so far, so the process
metrics each run must have are known in advance:

- a1: invalid tool-call JSON (null), a text reply (null), a line A1's allowlist refuses, twice
  (2 error actions, 1 identical repeat), an interface bandwidth and its negation (1 exact
  inverse), submit: 7 turns, 7 actions, error_submission;
- a3t: get_topology + list_services in one reply, the onboard intent of site.yaml through
  ``apply``, wait(1), submit: 4 turns, 5 actions, correct_submission.

Tokens: turn t (0-based) reports usage (1000 + 100 t, 20 + t).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from chat_server import ChatServer, call, reply
from procs import ani_cli, lab_gone

from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LLM_CAMPAIGN = ROOT / "campaigns" / "level-sweep-llm.yaml"
SECRET = "sk-test-h3-never-logged-7f3a"
BAD_LINES = ["interface to-nsite", "ip address 999.1.1.1/24"]
BW = ["interface to-nsite", "bandwidth 1000"]
NO_BW = ["interface to-nsite", "no bandwidth 1000"]  # the exact inverse of BW


def usage(turn: int) -> tuple[int, int]:
    return 1000 + 100 * turn, 20 + turn


def _site(body: dict[str, Any]) -> dict[str, Any]:
    first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    m = re.search(r"Attached file site\.yaml:\n```\n(.*?)\n```", first_user, re.S)
    assert m, "the request carries site.yaml"
    return yaml.safe_load(m.group(1))


def scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    """The reply to one chat-completions request (see the module docstring)."""
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    u = usage(turn)
    if "update_config" in tools:  # A1
        script = [
            reply(call("get_running_config", '{"device": "e3"', "c0"), usage=u),  # invalid JSON
            reply(content="The configuration looks fine to me.", usage=u),  # text, no call
            reply(call("update_config", {"device": "e3", "commands": BAD_LINES}, "c2"), usage=u),
            reply(call("update_config", {"device": "e3", "commands": BAD_LINES}, "c3"), usage=u),
            reply(call("update_config", {"device": "e3", "commands": BW}, "c4"), usage=u),
            reply(call("update_config", {"device": "e3", "commands": NO_BW}, "c5"), usage=u),
            reply(call("submit", {"summary": "could not configure e3"}, "c6"), usage=u),
        ]
    elif "apply" in tools:  # A3-T
        s = _site(body)
        change = {
            "type": "tenant-site", "action": "onboard", "tenant": s["tenant"], "site": s["site"],
            "edge": s["edge"], "interface": f"to-{s['site']}", "prefix": s["prefix"],
            "gateway": s["gateway"],
        }
        script = [
            reply(call("get_topology", {}, "c0"),
                  call("list_services", {"type": "tenant-site"}, "c1"), usage=u),
            reply(call("apply", {"changes": [change]}, "c2"), usage=u),
            reply(call("wait", {"seconds": 1}, "c3"), usage=u),
            reply(call("submit", {"summary": "onboarded"}, "c4"), usage=u),
        ]
    else:
        raise AssertionError(f"unexpected tool list {sorted(tools)}")
    return script[turn] if turn < len(script) else reply(call("submit", {}, "cx"), usage=u)


@pytest.fixture
def server():
    s = ChatServer(responder=scripted_model)
    yield s
    s.close()


def campaign_file(tmp_path: Path, base_url: str) -> Path:
    """campaigns/level-sweep-llm.yaml with only the endpoint, the cells and S changed."""
    data = yaml.safe_load(LLM_CAMPAIGN.read_text())
    assert data["agent"]["kind"] == "llm" and data["agent"]["api_key_env"] == "OPENAI_API_KEY"
    data["name"] = "it-llm-sweep"
    data["scenario"] = str((LLM_CAMPAIGN.parent / data["scenario"]).resolve())
    data["agent"]["base_url"] = base_url
    data["agent"]["model"] = "scripted-test-model"
    data["variants"] = 1
    data["cells"] = [{"name": "a1", "level": "a1"}, {"name": "a3t", "level": "a3t"}]
    path = tmp_path / "llm.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(COLUMNS="200", **extra)
    return env


def test_missing_api_key_fails_before_any_lab_naming_the_variable(server, tmp_path):
    camp = campaign_file(tmp_path, server.url)
    out = tmp_path / "res"
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(), 120)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "OPENAI_API_KEY" in res.stderr and "not set" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr  # one clear line, no traceback
    assert res.stderr.strip() in (ROOT / "docs" / "campaigns.md").read_text()  # as documented
    assert not out.exists()  # nothing started: no results folder, no run, no lab
    assert server.requests == [] and labs == set()


@pytest.mark.timeout(720)  # above the subprocess bound, so its SIGINT teardown can finish
def test_llm_campaign_end_to_end_reports_process_metrics(lab_host, server, tmp_path):
    camp = campaign_file(tmp_path, server.url)
    out = tmp_path / "res"
    res, labs = ani_cli(
        ["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(OPENAI_API_KEY=SECRET), 480
    )
    assert server.responder_errors == []
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # one fresh lab per run, each taken down by the runner
    assert len(labs) == 2 and all(lab_gone(lab_id) for lab_id in labs), labs

    # the real client sent the key, and nothing in the results folder holds it
    assert server.requests
    assert all(h.get("authorization") == f"Bearer {SECRET}" for h in server.headers)
    assert {r["model"] for r in server.requests} == {"scripted-test-model"}
    for f in out.rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_text(errors="replace"), f

    recs = {r.cell: r for r in read_runs(out)}
    assert sorted(recs) == ["a1", "a3t"]
    for r in recs.values():  # every run completed: graded, no crash, the agent submitted
        assert r.label != "infra_error", r.infra_error_reason
        assert r.agent_error is None and r.stop_reason == "submitted" and r.process is not None

    a1 = recs["a1"]
    p = a1.process
    assert a1.label == "clean_failure" and not a1.success and a1.damage_free
    assert (p.turns, p.actions) == (7, 7)
    assert p.action_counts == {
        "retrieval": 0, "update": 4, "validation": 0, "wait": 0, "submit": 1, "null": 2
    }
    assert (p.error_actions, p.repeat_identical, p.repeat_inverse) == (2, 1, 1)
    assert a1.tool_calls == 4 and a1.tool_errors == 2  # the null actions never reached the adapter
    assert a1.changed_calls == 2  # the bandwidth, then its removal
    assert p.completion_mode == "error_submission"
    assert (p.prompt_tokens, p.completion_tokens) == tuple(
        sum(usage(t)[i] for t in range(7)) for i in (0, 1)
    ) == (9100, 161)

    a3t = recs["a3t"]
    q = a3t.process
    failed = [x for x in a3t.tests + a3t.invariants if not x.passed]
    assert a3t.label == "clean_success", failed
    assert (q.turns, q.actions) == (4, 5)
    assert q.action_counts == {
        "retrieval": 2, "update": 1, "validation": 0, "wait": 1, "submit": 1, "null": 0
    }
    assert (q.error_actions, q.repeat_actions) == (0, 0)
    assert q.completion_mode == "correct_submission"
    assert (q.prompt_tokens, q.completion_tokens) == (4600, 86)

    # runs.jsonl lines carry `process` as written (not only after a re-read through the model)
    lines = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]
    assert {ln["cell"]: ln["process"]["completion_mode"] for ln in lines} == {
        "a1": "error_submission", "a3t": "correct_submission"
    }

    # the trajectory holds the agent's start (prompt, request, files) and its turns
    events = [json.loads(x) for x in Path(a3t.trajectory).read_text().splitlines()]
    start = next(e for e in events if e["event"] == "agent_start")
    assert start["model"] == "scripted-test-model" and "site.yaml" in start["files"]
    assert start["system_prompt"] and "onboard" in start["request"]
    assert [e["turn"] for e in events if e["event"] == "agent_turn"] == [1, 2, 3, 4]

    # summary.md: the process-metrics section, one row per cell, values of the scripted model
    md = (out / "summary.md").read_text()
    section = md.split("## Process metrics (NetConfArena; valid runs)", 1)[1].split("\n## ", 1)[0]
    assert "| a1 | 1 | 7 | 7.0 | 0% | 57% | 0% | 0% | 14% | 29% | 29% | 29% |" in section
    assert "| a3t | 1 | 5 | 4.0 | 40% | 20% | 0% | 20% | 20% | 0% | 0% | 0% |" in section
    assert "| a1 | 0 | 0 | 0 | 1 | 0 | 0 | 9100 | 161 |" in section
    assert "| a3t | 0 | 0 | 1 | 0 | 0 | 0 | 4600 | 86 |" in section
    assert "| a1-onboard-site-s1 | a1 | 1 | clean_failure |" in md
    assert "| error_submission |" in md and "| correct_submission |" in md
    # the console tables printed at the end show the process table too
    assert "process: shares" in res.stdout
