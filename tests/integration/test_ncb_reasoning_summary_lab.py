"""The reasoning score of a ReAct run, summarised first (issue 15 §3), end to end: ``python -m
ani.cli run --task-file intents/netconfbench/bgp-prefix-list-filter.json --agent llm`` in a
subprocess on a real FRR lab (the runner's own, taken down by it), the real ``openai`` client
against the scripted chat-completions server on 127.0.0.1 (``tests/chat_server.py``).

The scripted model reads r1's configuration, applies the task's expert solution through A1's
``update_config`` (the turn's text says why, in other words than the expert's), checks and
submits: four model turns, so after grading the runner sends one more request to the same
endpoint and model, the summariser's (:data:`SUMMARY_PROMPT`, no tools), whose reply is the
text the reasoning score embeds. The record carries the summary, the summariser's model and
the prompt's sha256 beside the wordllama model id and weight hash, and the command score's
frr-reload cross-check (both diffs agree on this run).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, call, reply
from procs import ani_cli, lab_gone

from ani.netconfbench.reasoning_summary import SUMMARY_PROMPT, transcript
from ani.netconfbench.task import load_task

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TASK_FILE = ROOT / "intents" / "netconfbench" / "bgp-prefix-list-filter.json"
TASK = load_task(TASK_FILE)
SOLUTION = TASK.ground_truth_configs[0]
(DEVICE, COMMANDS), = SOLUTION.configs.items()
KEY_ENV = "ANI_NCB_SUMMARY_TEST_KEY"
SECRET = "sk-test-ncb-summary-never-logged-7c2e"
MODEL = "scripted-react-model"
SUMMARY = ("r1 accepted every prefix from r2. The agent added a prefix-list that permits only "
           "10.2.0.0/24 and applied it inbound to the BGP session with r2, then checked that r1 "
           "learns no other prefix from r2.")


def model(body: dict[str, Any]) -> dict[str, Any]:
    """One chat-completions reply: the summariser's request (its system prompt, no tools) gets
    SUMMARY; the agent's by the number of assistant turns so far."""
    if body["messages"][0]["content"] == SUMMARY_PROMPT:
        assert "tools" not in body, "the summariser request offers no tools"
        return reply(content=SUMMARY, usage=(500, 60))
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if "update_config" not in tools:
        raise AssertionError(f"not an A1 tool list: {sorted(tools)}")
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    script = [
        reply(call("get_running_config", {"device": DEVICE}, "c0"), content="I read r1's configuration first."),
        reply(call("update_config", {"device": DEVICE, "commands": list(COMMANDS)}, "c1"),
              content="r1 takes everything r2 announces: I permit only r2's 10.2.0.0/24 with an inbound prefix-list."),
        reply(call("execute_validation", {"device": DEVICE, "command": "show ip bgp"}, "c2"),
              content="Now I check what r1 learns."),
        reply(call("submit", {"summary": "r1 accepts only 10.2.0.0/24 from r2"}, "c3")),
    ]
    return script[turn] if turn < len(script) else reply(call("submit", {}, "cx"))


@pytest.mark.timeout(660)
def test_ani_run_records_the_summarised_reasoning_score(lab_host, tmp_path):
    server = ChatServer(responder=model)
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    env.update(COLUMNS="200", **{KEY_ENV: SECRET})
    try:
        res, labs = ani_cli(
            ["run", "--task-file", str(TASK_FILE), "--level", "a1", "--agent", "llm",
             "--agent-option", f"base_url={server.url}", "--agent-option", f"model={MODEL}",
             "--agent-option", f"api_key_env={KEY_ENV}", "--agent-option", "retry_backoff_s=0",
             "--agent-option", "seed=5", "--max-steps", "20", "--wall-clock", "240", "--out", str(out)],
            env, 600)
    finally:
        server.close()
    assert server.responder_errors == []
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 1 and all(lab_gone(lab_id) for lab_id in labs), labs
    rec = json.loads((out / "run.json").read_text())
    assert rec["label"] == "clean_success" and rec["task_pass"] is True, rec["tests"]

    # the summariser's request: the last one, to the run's endpoint, model and key, with the
    # run's interleaved steps as recorded in its trajectory
    *agent_requests, summary_request = server.requests
    assert len(agent_requests) == 4 and all(r["messages"][0]["content"] != SUMMARY_PROMPT for r in agent_requests)
    assert summary_request["model"] == MODEL and summary_request["temperature"] == 0 and summary_request["seed"] == 5
    assert server.headers[-1]["authorization"] == f"Bearer {SECRET}"
    events = [json.loads(x) for x in Path(rec["trajectory"]).read_text().splitlines()]
    steps = summary_request["messages"][1]["content"]
    assert steps == transcript(events)
    assert steps.splitlines()[:2] == ["[turn 1] I read r1's configuration first.",
                                      f'  call get_running_config({{"device": "{DEVICE}"}})']
    assert steps.splitlines()[-1] == "[submit] r1 accepts only 10.2.0.0/24 from r2"

    # the record: the summary is the text scored, with how it was made
    ncb = rec["ncb"]
    assert ncb["reasoning_text"] == SUMMARY
    r = ncb["reasoning"]
    s = r["summary"]
    assert (s["method"], s["turns"], s["model"], s["served_model"]) == ("llm", 4, MODEL, "test-model")
    assert s["prompt_sha256"] == hashlib.sha256(SUMMARY_PROMPT.encode()).hexdigest()
    assert (s["prompt_tokens"], s["completion_tokens"]) == (500, 60) and s["base_url"] == server.url
    assert r["model"].startswith("wordllama ") and len(r["weights_sha256"]) == 64
    assert r["solution_id"] == SOLUTION.solution_id and 0 < r["score"] <= 1
    assert "4 model turns summarised by scripted-react-model" in r["note"]
    # the run's own tokens are the agent's four turns only (the summary's are in summary)
    assert rec["process"]["prompt_tokens"] == 4 * 100

    # the command score and its frr-reload cross-check: both diffs agree, router by router
    cmd = ncb["command"]
    assert cmd["f1"] == 1.0 and cmd["crosscheck_note"] == ""
    assert set(cmd["crosscheck"]) == set(TASK.topology.nodes)
    assert all(c["agree"] is True and c["error"] == "" for c in cmd["crosscheck"].values()), cmd["crosscheck"]
    assert sorted(cmd["crosscheck"][DEVICE]["frr"]) == sorted(a.split(": ", 1)[1] for a in cmd["applied"])
    for f in out.rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_text(errors="replace"), f
