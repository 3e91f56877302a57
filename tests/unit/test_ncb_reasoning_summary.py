"""The reasoning score's text (ani.netconfbench.reasoning_summary): one model turn as is, a
multi-turn run summarised by one chat-completions request (the real ``openai`` client against
the fake server on 127.0.0.1, ``tests/chat_server.py``), the extractive fallback and its notes,
and the configuration."""

from __future__ import annotations

import hashlib
import json

import pytest
from chat_server import reply, status

from ani.errors import ConfigError
from ani.netconfbench import reasoning_summary as rs
from ani.netconfbench.reasoning_summary import (
    SUMMARY_PROMPT,
    SummaryConfig,
    extractive_summary,
    reasoning_for_score,
    transcript,
)
from ani.netconfbench.scoring import score_run

KEY_ENV = "ANI_TEST_SUMMARY_KEY"
EXPERT = ("Set local preference 200 on routes learned from r3 with an inbound route-map so that r1 "
          "prefers the exit through r3 for 203.0.113.0/24.")


def turn(content, *calls, plan=False):
    return {"event": "agent_turn", "content": content, "plan": plan,
            "tool_calls": [{"id": f"c{i}", "name": n, "arguments": json.dumps(a)} for i, (n, a) in enumerate(calls)]}


def observation(text):
    return {"event": "agent_observation", "tool": "get_running_config", "text": text}


def submit(summary):
    return {"event": "agent_action", "action": "submit", "summary": summary}


REACT = [
    {"event": "agent_start", "mode": "react", "model": "m"},
    turn("First I read r1's configuration.", ("get_running_config", {"device": "r1"})),
    observation("router bgp 65001\n neighbor 10.0.13.3 remote-as 65003"),
    turn("r1 has no policy towards r3.\n neighbor 10.0.13.3 remote-as 65003\nI add a route-map that sets "
         "local preference 200 inbound from r3.",
         ("update_config", {"device": "r1", "commands": ["route-map RM-FROM-R3 permit 10", "set local-preference 200"]})),
    turn("```\nroute-map RM-FROM-R3 permit 10\n```\nI add a route-map that sets local preference 200 inbound "
         "from r3.", ("execute_validation", {"device": "r1", "command": "show ip bgp"})),
    submit("r1 prefers the exit through r3."),
]


def test_transcript_interleaves_turns_calls_and_submit():
    text = transcript(REACT)
    lines = text.splitlines()
    assert lines[0] == "[turn 1] First I read r1's configuration."
    assert lines[1] == '  call get_running_config({"device": "r1"})'
    assert lines[-1] == "[submit] r1 prefers the exit through r3."
    assert "remote-as 65003" in text  # the model's own text, echo included: the summariser reads it all
    assert not any(ln.startswith("router bgp") for ln in lines)  # tool results are not sent
    plan = transcript([turn("1. read r1 2. add the route-map", plan=True), turn("ok", ("submit", {}))])
    assert plan.splitlines() == ["[plan] 1. read r1 2. add the route-map", "[turn 2] ok"]  # submit: no call line
    long = transcript([turn("x" * 5000, ("update_config", {"commands": ["y" * 500]}))])
    first, call = long.splitlines()
    assert len(first) == len("[turn 1] ") + rs.TURN_CHARS and first.endswith("…")
    assert len(call) <= len("  call update_config()") + rs.CALL_CHARS


def test_extractive_summary_drops_echoes_code_and_near_duplicates():
    text = extractive_summary(REACT)
    assert text == ("First I read r1's configuration. r1 has no policy towards r3. I add a route-map that sets "
                    "local preference 200 inbound from r3. r1 prefers the exit through r3.")
    assert extractive_summary(REACT) == text  # deterministic
    # a near duplicate (the same words in another order) goes, a different fact stays
    evs = [turn("I read the configuration of r1."), turn("I read r1's configuration."), turn("OSPF area 0 is up.")]
    assert extractive_summary(evs) == "I read the configuration of r1. OSPF area 0 is up."
    assert extractive_summary([turn("", ("get_topology", {}))]) is None


def test_one_model_turn_is_embedded_as_is(server):
    evs = [turn("Static route via 192.0.2.2 and a backup at distance 100.", ("update_config", {})), submit("done")]
    got = reasoning_for_score(evs, SummaryConfig(), {"kind": "llm", "base_url": server.url, "model": "m"})
    assert got.text == "Static route via 192.0.2.2 and a backup at distance 100.\ndone"
    assert got.summary.method == "as-is" and got.summary.turns == 1 and server.requests == []
    assert reasoning_for_score([{"event": "tool_call"}]).text is None  # a scripted agent: nothing, no summary
    assert reasoning_for_score([{"event": "tool_call"}]).summary is None


def test_a_multi_turn_run_is_summarised_by_the_runs_own_endpoint(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-summary-5b1d")
    server.script = [reply(content=f"<think>hmm</think> {EXPERT}", usage=(321, 45))]
    agent = {"kind": "llm", "mode": "react", "base_url": server.url, "model": "agent-model",
             "api_key_env": KEY_ENV, "seed": 11}
    got = reasoning_for_score(REACT, None, agent)
    assert got.text == EXPERT  # the think block is not the summary
    s = got.summary
    assert (s.method, s.turns, s.model, s.served_model) == ("llm", 3, "agent-model", "test-model")
    assert s.base_url == server.url and s.prompt_sha256 == hashlib.sha256(SUMMARY_PROMPT.encode()).hexdigest()
    assert (s.prompt_tokens, s.completion_tokens) == (321, 45) and s.source_chars == len(transcript(REACT))
    assert "3 model turns summarised by agent-model" in s.note
    (req,) = server.requests
    assert req["model"] == "agent-model" and req["temperature"] == 0 and req["seed"] == 11
    assert "tools" not in req and req["max_tokens"] == 400
    assert req["messages"] == [{"role": "system", "content": SUMMARY_PROMPT},
                               {"role": "user", "content": transcript(REACT)}]
    assert server.headers[0]["authorization"] == "Bearer sk-test-summary-5b1d"


def test_another_summariser_endpoint_and_model(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-agent-key-not-for-the-summariser")
    server.script = [reply(content="summary")]
    cfg = SummaryConfig.parse({"base_url": server.url, "model": "small-summariser", "max_tokens": 64})
    got = reasoning_for_score(REACT, cfg, {"kind": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "agent-model"})
    assert got.summary.method == "llm" and got.summary.model == "small-summariser"
    assert server.requests[0]["model"] == "small-summariser" and server.requests[0]["max_tokens"] == 64
    assert server.headers[0]["authorization"] == "Bearer no-key"  # another endpoint: not the agent's key


@pytest.mark.parametrize("setup, why", [
    ("down", "the summariser request to http://127.0.0.1:9/v1 failed: connection refused"),
    ("500", "failed: HTTP 500"),
    ("empty", "failed: the summariser's reply has no text"),
    ("nokey", f"failed: environment variable {KEY_ENV} (the summariser's api_key_env) is not set"),
    ("off", "the summariser is off (reasoning_summary: off)"),
    ("scripted", "no summariser endpoint (the agent, kind scripted, has no base_url and model)"),
])
def test_fallback_is_the_extractive_summary_and_says_why(server, monkeypatch, setup, why):
    monkeypatch.setenv(KEY_ENV, "k")
    agent = {"kind": "llm", "base_url": server.url, "model": "m", "api_key_env": KEY_ENV}
    cfg = SummaryConfig(max_retries=0)
    if setup == "down":
        agent["base_url"] = "http://127.0.0.1:9/v1"
    elif setup == "500":
        server.script = [status(500)]
    elif setup == "empty":
        server.script = [reply(content="  ")]
    elif setup == "nokey":
        monkeypatch.delenv(KEY_ENV)
    elif setup == "off":
        cfg = SummaryConfig.parse("off")
    elif setup == "scripted":
        agent = {"kind": "scripted"}
    got = reasoning_for_score(REACT, cfg, agent)
    assert got.summary.method == "extractive" and got.text == extractive_summary(REACT)
    assert got.summary.prompt_sha256 is None and got.summary.model is None
    assert got.summary.note.startswith("3 model turns, extractive summary: ") and why in got.summary.note, got.summary.note
    assert "sk-" not in got.summary.note


def test_config_shorthands_and_errors():
    assert SummaryConfig.parse(None) == SummaryConfig() and SummaryConfig.parse(True).enabled
    assert not SummaryConfig.parse("off").enabled and not SummaryConfig.parse(False).enabled  # YAML's off is False
    with pytest.raises(ConfigError, match=r"reasoning_summary\.modle: unknown option"):
        SummaryConfig.parse({"modle": "x"})
    with pytest.raises(ConfigError, match=r"reasoning_summary\.request_timeout_s: "):
        SummaryConfig.parse({"request_timeout_s": 0})
    agent = {"kind": "llm", "base_url": "http://h/v1", "model": "m", "seed": 3}
    assert SummaryConfig().endpoint(agent) == (
        {"base_url": "http://h/v1", "model": "m", "api_key_env": "OPENAI_API_KEY", "seed": 3}, "")
    assert SummaryConfig().endpoint({**agent, "api_key_env": None})[0]["api_key_env"] is None
    assert SummaryConfig(model="x").endpoint(agent)[0]["model"] == "x"
    assert SummaryConfig(base_url="http://o/v1").endpoint(agent)[0]["api_key_env"] is None
    assert SummaryConfig(base_url="http://o/v1", api_key_env="K").endpoint(agent)[0]["api_key_env"] == "K"
    # the spec value round-trips (a resumed campaign compares its stored spec)
    cfg = SummaryConfig.parse({"model": "x"})
    assert SummaryConfig.model_validate_json(cfg.model_dump_json()) == cfg


def test_score_run_scores_the_summary_and_records_how(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k")
    server.script = [reply(content=EXPERT)]
    params = {"solutions": [{"solution_id": "expert-0001", "configs": {}, "reasoning": EXPERT}]}
    agent = {"kind": "llm", "base_url": server.url, "model": "agent-model", "api_key_env": KEY_ENV}
    s = score_run(params, None, None, REACT, agent_config=agent, crosscheck=False)
    assert s.reasoning_text == EXPERT and s.reasoning.score == pytest.approx(1.0, abs=1e-5)
    assert s.reasoning.summary.method == "llm" and "summarised by agent-model" in s.reasoning.note
    assert len(s.reasoning.weights_sha256) == 64 and s.reasoning.model.startswith("wordllama")
    off = score_run(params, None, None, REACT, agent_config=agent, summary="off", crosscheck=False)
    assert off.reasoning.summary.method == "extractive" and off.reasoning_text == extractive_summary(REACT)
    assert off.reasoning.score is not None and off.reasoning.score < s.reasoning.score
    assert len(server.requests) == 1  # off: no request
