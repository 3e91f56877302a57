"""``ani run`` with the LLM agent end to end (issue 5): ``python -m ani.cli run --level a1
--agent-config f.yaml --agent-option ...`` in a subprocess, on a real FRR lab (the runner's own,
taken down by it), with the real ``openai`` client against the scripted chat-completions server
on 127.0.0.1.

The scripted model looks at the topology, sends invalid tool-call JSON, answers with text, is
rate-limited once (HTTP 429 with ``retry-after-ms``), configures a router that does not exist,
waits and submits: nothing is onboarded, so the verdict is a failure (exit 1) with two null
actions and an error submission.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from chat_server import ChatServer, call, reply, status
from procs import ani_cli

from ani.agents.llm_config import system_prompt

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "ANI_H1_RUN_TEST_KEY"
SECRET = "sk-test-h1-run-never-stored-93bd"
USAGE = [(1000 + 100 * t, 20 + t) for t in range(6)]  # turn t (0-based): prompt, completion


@pytest.fixture
def server():
    s = ChatServer()
    s.script = [
        reply(call("get_topology", {}, "c0"), content="Let me look at the network first.", usage=USAGE[0]),
        reply(call("get_running_config", '{"device": "e1"', "c1"), usage=USAGE[1]),  # invalid JSON
        reply(content="The configuration looks fine to me.", usage=USAGE[2]),  # text, no call
        status(429, {"retry-after-ms": "300"}),
        reply(call("update_config", {"device": "zz9", "commands": ["ip route 10.99.0.0/24 Null0"]}, "c3"), usage=USAGE[3]),
        reply(call("wait", {"seconds": 1}, "c4"), usage=USAGE[4]),
        reply(call("submit", {"summary": "nothing to change"}, "c5"), usage=USAGE[5]),
    ]
    yield s
    s.close()


def test_ani_run_with_an_llm_agent_config(lab_host, server, tmp_path):
    cfg = tmp_path / "agent.yaml"
    cfg.write_text(f"kind: llm\nbase_url: {server.url}\nmodel: scripted-h1\napi_key_env: {KEY_ENV}\n"
                   "retry_backoff_s: 0\ntemperature: 0.0\n")
    out = tmp_path / "run"
    env = {**os.environ, KEY_ENV: SECRET, "COLUMNS": "200"}
    res, labs = ani_cli(
        ["run", "--level", "a1", "--agent-config", str(cfg), "--agent-option", "temperature=0.3",
         "--agent-option", "seed=11", "--max-tokens", "100000", "--wall-clock", "240",
         "--out", str(out)], env, 600)
    text = res.stdout
    assert res.returncode == 1, text[-3000:] + res.stderr[-3000:]  # graded a failure

    # the agent options reached the model: the file, then the two --agent-option overrides
    assert len(server.requests) == 7 and all(r["model"] == "scripted-h1" for r in server.requests)
    assert server.requests[0]["temperature"] == 0.3 and server.requests[0]["seed"] == 11
    assert all(h.get("authorization") == f"Bearer {SECRET}" for h in server.headers)

    # the trajectory printed as it went, in order: turns, calls, null actions, retry, wait, submit
    lines = [ln.rstrip() for ln in text.splitlines()]
    expected_in_order = [
        "run a1 onboard-site seed 1, agent llm: starting the lab ...",
        f"  agent llm: mode react; model scripted-h1 at {server.url};",
        '  turn 1: 1000+20 tokens -> get_topology "Let me look at the network first."',
        "  get_topology({}) -> ok",
        "  turn 2: 1100+21 tokens -> get_running_config",
        '  null action (invalid_json) get_running_config: {"device": "e1"',
        '  turn 3: 1200+22 tokens -> no tool call "The configuration looks fine to me."',
        "  null action (no_tool_call): The configuration looks fine to me.",
        "  retry 1: RateLimitError (HTTP 429)",
        "  turn 4: 1300+23 tokens after 2 attempts -> update_config",
        '  update_config({"device": "zz9", "commands": ["ip route 10.99.0.0/24 Null0"]}) -> error unknown_device',
        "  turn 5: 1400+24 tokens -> wait",
        "  wait 1 s",
        "  turn 6: 1500+25 tokens -> submit",
        '  submit: "nothing to change"',
        "  agent stop: submitted; 5 steps, 2 null actions, 7500+135 tokens",
        "verdict: clean_failure",
        "process: 6 turns;",
    ]
    at = 0
    for want in expected_in_order:
        hits = [i for i in range(at, len(lines)) if lines[i].startswith(want)]
        assert hits, f"no line starting {want!r} after line {at}:\n" + "\n".join(lines)
        at = hits[0] + 1
    retry = next(ln for ln in lines if ln.startswith("  retry 1:"))
    assert retry.endswith("next attempt in 0.3 s (Retry-After 0.3 s)")

    # run.json: the verdict and the process metrics of the scripted model
    rec = json.loads((out / "run.json").read_text())
    assert rec["label"] == "clean_failure" and rec["success"] is False and rec["stop_reason"] == "submitted"
    assert rec["tool_calls"] == 2 and rec["tool_errors"] == 1  # the null actions never reached the adapter
    p = rec["process"]
    assert (p["turns"], p["actions"]) == (6, 6)
    assert p["action_counts"] == {"retrieval": 1, "update": 1, "validation": 0, "wait": 1, "submit": 1, "null": 2}
    assert p["completion_mode"] == "error_submission"
    assert p["error_actions"] == 1  # the refused update_config; null actions are counted apart
    assert (p["prompt_tokens"], p["completion_tokens"]) == (7500, 135)

    # the trajectory holds the prompt, the request and its file, and never the key
    traj = Path(rec["trajectory"])
    events = [json.loads(x) for x in traj.read_text().splitlines()]
    start = next(e for e in events if e["event"] == "agent_start")
    assert start["system_prompt"] == system_prompt("react")
    assert start["files"] and "site.yaml" in start["files"]
    assert start["request"] == server.requests[0]["messages"][1]["content"]
    assert "Attached file site.yaml:" in start["request"] and start["files"]["site.yaml"].strip() in start["request"]
    assert start["seed"] == 11 and start["temperature"] == 0.3
    for f in out.rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_text(errors="replace"), f
    assert SECRET not in res.stdout + res.stderr

    # the runner took its lab down: no namespace, no lab folder left
    assert len(labs) == 1, labs
    (lab_id,) = labs
    from ani.lab.state import lab_dir, ns_prefix

    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert ns_prefix(lab_id) not in netns and not lab_dir(lab_id).exists()


def test_the_ani_run_example_of_docs_llm_md(lab_host, tmp_path):
    """The ```sh command after ``<!-- example:ani-run -->`` in docs/llm.md, exactly as written,
    plus ``--agent-option base_url=...`` (a later option wins) pointing it at the scripted server
    and ``--out``; no key variable is set (the example sets api_key_env to null)."""
    doc = (ROOT / "docs" / "llm.md").read_text()
    m = re.search(r"<!-- example:ani-run -->\s*```sh\n(.*?)\n```", doc, re.S)
    assert m, "no example:ani-run block in docs/llm.md"
    argv = shlex.split(m.group(1))
    assert argv[:2] == [".venv/bin/ani", "run"], argv
    s = ChatServer()
    s.script = [
        reply(content="1. get_topology\n2. submit"),  # the plan (planner-executor)
        reply(call("get_topology", {}, "c0")),
        reply(call("submit", {"summary": "looked only"}, "c1")),
    ]
    try:
        out = tmp_path / "run"
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        res, labs = ani_cli(["run", *argv[2:], "--agent-option", f"base_url={s.url}", "--out", str(out)],
                            {**env, "COLUMNS": "200"}, 600)
    finally:
        s.close()
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]  # nothing onboarded
    lines = res.stdout.splitlines()
    assert any(ln.startswith("  agent llm: mode planner-executor; model Qwen/Qwen2.5-7B-Instruct at " + s.url) for ln in lines)
    assert "  turn 1 (plan): 100+10 tokens -> plan text \"1. get_topology (+1 line)\"" in lines
    assert "  plan: 1. get_topology (+1 line)" in lines and '  submit: "looked only"' in lines
    assert s.requests[0]["tool_choice"] == "none"  # the planning request
    assert s.headers[0].get("authorization") == "Bearer no-key"  # api_key_env=null: no key read
    rec = json.loads((out / "run.json").read_text())
    assert rec["label"] == "clean_failure"
    assert rec["process"]["completion_mode"] == "early_submission"  # submitted without an update
    assert len(labs) == 1
    (lab_id,) = labs
    from ani.lab.state import lab_dir, ns_prefix

    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert ns_prefix(lab_id) not in netns and not lab_dir(lab_id).exists()
