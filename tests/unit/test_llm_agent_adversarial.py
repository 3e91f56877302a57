"""The LLM agent against odd endpoints and odd model output (adversarial pass of issue 5): the
real ``openai`` client against tests/chat_server.py on 127.0.0.1; the tools are a small fake
adapter (logic only, no lab).

The rule: a run never crashes on model or endpoint output. Malformed tool calls are null actions
(counted, answered with an error observation); usage numbers that are not token counts are "not
reported"; a 200 body that is not a chat completion ends the run with an error naming it.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import pytest
from chat_server import call, reply

from ani.agents import AgentRun, AgentTask, Budget, create_agent
from ani.agents.llm import message_text, parse_arguments, redact_url, token_count
from ani.campaign.live import event_line
from ani.errors import ConfigError, ErrorCode
from ani.protocol import ToolResult, ToolSpec
from ani.trajectory import Trajectory

KEY_ENV = "ANI_TEST_ADV_KEY"
TASK = AgentTask(task_class="onboard-site", variant_id="onboard-site-s1", request="Onboard the site.")


class Adapter:
    """get_topology and update_config(device, commands); records the calls it runs."""

    level = "a1"

    def __init__(self) -> None:
        self.trajectory = Trajectory(level="a1")
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def tools(self) -> list[ToolSpec]:
        dev = {"type": "object", "properties": {"device": {"type": "string"}}}
        return [ToolSpec(name="get_topology", description="topology"),
                ToolSpec(name="update_config", description="change", input_schema=dev)]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, arguments))
        if name == "update_config" and not isinstance(arguments.get("device"), str):
            res = ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, "update_config: device must be a string")
        else:
            res = ToolResult.success(f"{name} done")
        self.trajectory.log_call(name, arguments, res)
        return res


@pytest.fixture
def go(server, monkeypatch):
    """``go(script, budget=None, **options) -> (AgentRun, adapter)``, no real sleeping."""
    monkeypatch.setenv(KEY_ENV, "sk-adv")

    def run(script: list[Any], budget: Budget | None = None, **options: Any) -> tuple[AgentRun, Adapter]:
        server.script = list(script)
        agent = create_agent({"kind": "llm", "base_url": server.url, "model": "m", "api_key_env": KEY_ENV,
                              "retry_backoff_s": 0, "max_retries": 1, **options})
        agent.sleep = lambda _s: None
        ad = Adapter()
        return agent.run(TASK, ad, budget or Budget()), ad

    return run


def nulls(run: AgentRun) -> list[str]:
    return [e["reason"] for e in run.trajectory.events if e["event"] == "agent_action" and e["action"] == "null"]


def tool_messages(server: ChatServer) -> list[dict[str, Any]]:
    return [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]


SUBMIT = reply(call("submit", {"summary": "done"}))


def raw_call(function: Any, call_id: str | None = "c1") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "function": function}
    if call_id is not None:
        out["id"] = call_id
    return out


def body(message: Any, usage: Any = None) -> dict[str, Any]:
    out = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
           "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if usage is not None:
        out["usage"] = usage
    return out


# -- tool-call arguments in every shape -----------------------------------------------------


def test_arguments_sent_as_a_json_value_not_a_string(server, go):
    """Some endpoints send ``arguments`` as a JSON object instead of its text: it used to end the
    run with AttributeError ('dict' object has no attribute 'strip'); a list or a number did too."""
    run, ad = go([
        reply(raw_call({"name": "update_config", "arguments": {"device": "r1"}}, "a"),
              raw_call({"name": "update_config", "arguments": ["r1"]}, "b"),
              raw_call({"name": "update_config", "arguments": 5}, "c")),
        SUBMIT,
    ])
    assert run.stop_reason == "submitted" and run.error is None
    assert ad.calls == [("update_config", {"device": "r1"})]
    assert nulls(run) == ["not_an_object", "not_an_object"] and run.null_actions == 2 and run.steps == 3
    answers = tool_messages(server)
    assert [m["tool_call_id"] for m in answers] == ["a", "b", "c"]
    assert "must be a JSON object, got: [\"r1\"]" in answers[1]["content"]


def test_arguments_null_is_no_arguments(go):
    run, ad = go([reply(raw_call({"name": "get_topology", "arguments": None})), SUBMIT])
    assert run.stop_reason == "submitted" and ad.calls == [("get_topology", {})] and run.null_actions == 0


@pytest.mark.parametrize("raw", ['{"seconds": NaN}', '{"seconds": Infinity}', '{"seconds": -Infinity}',
                                 '{"seconds": 1e999}'])
def test_nan_and_infinite_numbers_are_invalid_json(go, raw):
    """Python's json accepts NaN/Infinity (and 1e999 as inf): a wait(NaN) used to "succeed" having
    waited 0 s, and the trajectory file got a bare NaN (not JSON)."""
    run, _ = go([reply(call("wait", raw)), SUBMIT])
    assert run.stop_reason == "submitted" and nulls(run) == ["invalid_json"]
    assert not [e for e in run.trajectory.events if e["event"] == "agent_action" and e["action"] == "wait"]
    for ev in run.trajectory.events:
        json.dumps(ev, allow_nan=False)  # every event is strict JSON


def test_parse_arguments_values():
    assert parse_arguments("") == {} and parse_arguments("  ") == {}
    assert parse_arguments('{"a": 1.5, "b": [1e3]}') == {"a": 1.5, "b": [1000.0]}
    for bad in ('{"a": NaN}', "[Infinity]", '{"a": 1e400}', "{", "[" * 100_000):
        with pytest.raises((ValueError, RecursionError)):
            parse_arguments(bad)


def test_deeply_nested_arguments_are_a_null_action(go):
    run, ad = go([reply(call("update_config", "[" * 100_000 + "]" * 100_000)), SUBMIT])
    assert run.stop_reason == "submitted" and nulls(run) == ["invalid_json"] and ad.calls == []


def test_duplicate_and_missing_call_ids_get_answers_of_their_own(server, go):
    """Two calls with the same id (or none) in one reply: each tool message must answer its own call."""
    run, ad = go([
        reply(call("get_topology", {}, "same"), call("get_topology", {}, "same"),
              raw_call({"name": "get_topology", "arguments": "{}"}, None)),
        SUBMIT,
    ])
    assert run.stop_reason == "submitted" and len(ad.calls) == 3
    sent = server.requests[1]["messages"]
    ids = [c["id"] for m in sent if m["role"] == "assistant" and m.get("tool_calls") for c in m["tool_calls"]]
    assert len(ids) == 3 and len(set(ids)) == 3 and ids[0] == "same"
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ids


def test_submit_summary_of_odd_types(go):
    run, _ = go([reply(call("submit", {"summary": None}))])
    sub = [e for e in run.trajectory.events if e["event"] == "agent_action" and e["action"] == "submit"]
    assert run.stop_reason == "submitted" and sub[0]["summary"] == ""  # not the text "None"
    run, _ = go([reply(call("submit", {"summary": ["a", 1]}))])
    sub = [e for e in run.trajectory.events if e["event"] == "agent_action" and e["action"] == "submit"]
    assert sub[0]["summary"] == '["a", 1]'


# -- odd message content ---------------------------------------------------------------------


def test_content_of_odd_types_is_text(go):
    """content as a list of parts, or a number: the number used to end the run with TypeError."""
    run, _ = go([body({"role": "assistant", "content": 5}),
                 body({"role": "assistant", "content": [{"type": "text", "text": "I think"}, {"type": "image"}]}),
                 body({"role": "assistant", "content": None, "refusal": "I cannot do that"}),
                 SUBMIT])
    assert run.stop_reason == "submitted" and run.error is None
    assert nulls(run) == ["no_tool_call"] * 3
    raws = [e["raw"] for e in run.trajectory.events if e["event"] == "agent_action" and e["action"] == "null"]
    assert raws == ["5", 'I think\n{"type": "image"}', "I cannot do that"]
    assert message_text(None) is None


@pytest.mark.parametrize("choices", [[], [{"index": 0, "message": None, "finish_reason": "stop"}]])
def test_no_message_is_a_null_action(go, choices):
    r = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": choices}
    run, _ = go([r, SUBMIT])
    assert run.stop_reason == "submitted" and nulls(run) == ["no_tool_call"]


@pytest.mark.parametrize("payload", [{"id": "x", "object": "chat.completion", "choices": None}, {"foo": 1}])
def test_a_body_without_a_choices_list_is_not_charged_to_the_model(go, payload):
    """Used to be a null action (no_tool_call) of the model."""
    run, _ = go([payload])
    assert run.stop_reason == "error" and run.null_actions == 0 and run.steps == 0
    assert "HTTP 200 with a body that has no choices list" in run.error


def test_tool_calls_not_a_list_is_no_call(go):
    run, _ = go([body({"role": "assistant", "tool_calls": {"name": "submit"}}), SUBMIT])
    assert run.stop_reason == "submitted" and nulls(run) == ["no_tool_call"]


# -- usage numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": -1000, "completion_tokens": -5},
    {"prompt_tokens": "abc", "completion_tokens": "1"},
    {"prompt_tokens": 1.5, "completion_tokens": 1e300},
    {"prompt_tokens": True, "completion_tokens": None},
    {},
])
def test_usage_that_is_not_a_token_count_is_not_reported(go, usage):
    """A float used to make AgentRun raise a ValidationError out of run() (a crash); a string
    ended the run with TypeError; negative numbers lowered the count under the token budget."""
    run, ad = go([body({"role": "assistant", "tool_calls": [call("get_topology", {})]}, usage), SUBMIT],
                 budget=Budget(max_tokens=10_000))
    assert run.stop_reason == "submitted" and ad.calls == [("get_topology", {})]
    assert (run.prompt_tokens, run.completion_tokens) == (100, 10)  # only SUBMIT's usage counts
    turn = [e for e in run.trajectory.events if e["event"] == "agent_turn"][0]
    assert (turn["prompt_tokens"], turn["completion_tokens"]) == (None, None)


def test_integral_float_and_huge_usage_count(go):
    run, _ = go([body({"role": "assistant", "tool_calls": [call("get_topology", {})]},
                      {"prompt_tokens": 300.0, "completion_tokens": 10**12}), SUBMIT],
                budget=Budget(max_tokens=10**9))
    assert run.stop_reason == "max_tokens" and run.prompt_tokens == 300
    assert run.completion_tokens == 10**12
    assert token_count(-1) is None and token_count(2**70) is None and token_count(7) == 7


# -- bodies that are not chat completions, error bodies, refused connections -------------------


@pytest.mark.parametrize("payload", ["<html><body>502 Bad Gateway</body></html>", [1, 2], None])
def test_a_200_body_that_is_not_a_chat_completion_ends_the_run_naming_it(go, payload):
    run, _ = go([(200, payload)])
    assert run.stop_reason == "error" and run.steps == 0
    assert "HTTP 200 with a body that is not a chat completion" in run.error
    assert "AttributeError" not in run.error
    if isinstance(payload, str):
        assert "502 Bad Gateway" in run.error


def test_an_error_status_with_a_non_json_body_shows_the_body(go):
    run, _ = go([(401, "<html><body>Unauthorized by the proxy</body></html>")])
    assert run.stop_reason == "error" and "HTTP 401" in run.error
    assert "Unauthorized by the proxy" in run.error


def test_a_refused_connection_says_refused(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-adv")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    agent = create_agent({"kind": "llm", "base_url": f"http://127.0.0.1:{port}/v1", "model": "m",
                          "api_key_env": KEY_ENV, "retry_backoff_s": 0, "max_retries": 0})
    run = agent.run(TASK, Adapter(), Budget())
    assert run.stop_reason == "error"
    assert run.error.endswith(f"POST http://127.0.0.1:{port}/v1/chat/completions: connection refused (after 1 attempt)")


# -- config values that can only fail later ------------------------------------------------------


@pytest.mark.parametrize("key, value, says", [
    ("base_url", "not-a-url", "agent.base_url"),
    ("base_url", "ftp://127.0.0.1/v1", "agent.base_url"),
    ("base_url", "http:///v1", "agent.base_url"),
    ("model", "", "agent.model"),
    ("request_timeout_s", float("inf"), "agent.request_timeout_s"),
    ("wait_max_s", float("inf"), "agent.wait_max_s"),
    ("retry_after_max_s", float("nan"), "agent.retry_after_max_s"),
])
def test_config_values_refused_up_front(key, value, says):
    opts = {"kind": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": None, key: value}
    with pytest.raises(ConfigError) as err:
        create_agent(opts)
    assert says in str(err.value)


@pytest.mark.parametrize("kind", [["llm"], {"a": 1}, 5, None])
def test_an_agent_kind_that_is_not_a_name_is_a_config_error(kind):
    with pytest.raises(ConfigError) as err:
        create_agent({"kind": kind})
    assert "agent.kind" in str(err.value) and "llm" in str(err.value)


def test_a_plan_whose_content_is_not_a_string(go):
    """planner-executor: a plan reply with content as a list of parts (or a number) used to end the
    run with AttributeError ('list' object has no attribute 'strip')."""
    run, ad = go([body({"role": "assistant", "content": [{"type": "text", "text": "1. get_topology"}]}),
                  reply(call("get_topology", {})), SUBMIT], mode="planner-executor")
    assert run.stop_reason == "submitted" and run.error is None and ad.calls == [("get_topology", {})]
    plans = [e["plan"] for e in run.trajectory.events if e["event"] == "agent_plan"]
    assert plans == ["1. get_topology"]
    run, _ = go([body({"role": "assistant", "content": 42}), SUBMIT], mode="planner-executor")
    assert run.stop_reason == "submitted" and [e["plan"] for e in run.trajectory.events if e["event"] == "agent_plan"] == ["42"]


# -- an endpoint that never finishes its response ------------------------------------------------


class DripServer:
    """A loopback HTTP server that answers 200 with a long Content-Length and then sends one blank
    every 0.2 s, forever: every read succeeds, so the HTTP client's read timeout never fires.
    (tests/chat_server.py has no such entry: its HANG sends nothing, which the client does time out.)"""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.stop = threading.Event()
        self.requests = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
                while not self.stop.wait(0.2):
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_an_endpoint_that_drips_bytes_is_bounded_by_the_request_timeout(monkeypatch):
    """The run used to hang for as long as the endpoint kept sending (past request_timeout_s and
    the wall clock): the client's timeout bounds each read, not the response."""
    drip = DripServer()
    try:
        agent = create_agent({"kind": "llm", "base_url": drip.url, "model": "m", "api_key_env": None,
                              "retry_backoff_s": 0, "max_retries": 1, "request_timeout_s": 1})
        run = agent.run(TASK, Adapter(), Budget(wall_clock_s=600))
    finally:
        drip.close()
    assert run.stop_reason == "error" and drip.requests == 2  # the first attempt and one retry
    assert f"POST {drip.url}/chat/completions: timeout after 1 s (no complete response; abandoned)" in run.error
    assert "after 2 attempts" in run.error
    retries = [e for e in run.trajectory.events if e["event"] == "llm_retry"]
    assert len(retries) == 1 and "AniTimeout" in retries[0]["error"]


def test_an_endpoint_that_drips_bytes_ends_at_the_wall_clock(monkeypatch):
    drip = DripServer()
    try:
        agent = create_agent({"kind": "llm", "base_url": drip.url, "model": "m", "api_key_env": None,
                              "retry_backoff_s": 0, "max_retries": 100, "request_timeout_s": 1})
        run = agent.run(TASK, Adapter(), Budget(wall_clock_s=3))
    finally:
        drip.close()
    # no model turn was ever received: an endpoint failure (an infrastructure error of the run),
    # not the model's wall clock
    assert run.stop_reason == "error" and drip.requests >= 1
    assert run.infra_error == run.error and f"POST {drip.url}/chat/completions: timeout after" in run.error
    assert run.error.endswith("the wall clock of 3 s spent)")


def test_a_secret_in_the_base_url_is_not_logged(server, monkeypatch):
    """A gateway password in the URL (user:password@host) used to be written verbatim in
    agent_start (the trajectory file) and printed live by ani run; so was a key in the query."""
    monkeypatch.setenv(KEY_ENV, "sk-adv")
    host = server.url.split("//", 1)[1]
    server.script = [SUBMIT]
    agent = create_agent({"kind": "llm", "base_url": f"http://bob:s3cr3t-pw@{host}", "model": "m",
                          "api_key_env": KEY_ENV})
    run = agent.run(TASK, Adapter(), Budget())
    assert run.stop_reason == "submitted", run.error
    start = [e for e in run.trajectory.events if e["event"] == "agent_start"][0]
    assert start["base_url"] == f"http://bob:***@{host}"
    text = json.dumps(run.trajectory.events) + repr(agent) + (event_line(start) or "")
    assert "s3cr3t" not in text and "sk-adv" not in text
    assert redact_url("https://gw.example/v1?api-key=s3cr3t&x=1") == "https://gw.example/v1?api-key=***&x=***"
    assert redact_url("http://tok@h/v1") == "http://***@h/v1"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_a_200_body_holding_an_error_is_retried_not_charged_to_the_model(go):
    """Gateways answer some upstream failures with HTTP 200 and {"error": ...}: that used to be a
    null action (no_tool_call) charged to the model."""
    err = {"error": {"message": "upstream overloaded", "code": 502}}
    run, ad = go([err, reply(call("get_topology", {})), SUBMIT])
    assert run.stop_reason == "submitted" and run.null_actions == 0 and ad.calls == [("get_topology", {})]
    retries = [e for e in run.trajectory.events if e["event"] == "llm_retry"]
    assert len(retries) == 1 and "upstream overloaded" in retries[0]["error"]
    run, _ = go([err, err])  # max_retries 1: two attempts, then the run ends naming it
    assert run.stop_reason == "error" and run.null_actions == 0
    assert "HTTP 200 with an error: upstream overloaded" in run.error and "after 2 attempts" in run.error


def test_a_failure_whose_text_omits_the_cause_still_names_it_to_the_model(server, go, monkeypatch):
    """An adapter failure with its own text ('rolled back') used to reach the model without the
    error message; an MCP client was shown it (result_text), the LLM agent was not. Now both read
    the one observation, the JSON error payload."""

    def failing_call(self: Adapter, name: str, arguments: dict[str, Any]) -> ToolResult:
        res = ToolResult.failure(ErrorCode.ROLLED_BACK, "command 2 'bogus' failed: % Unknown command",
                                 text="rolled back")
        self.trajectory.log_call(name, arguments, res)
        return res

    monkeypatch.setattr(Adapter, "call", failing_call)
    run, _ = go([reply(call("update_config", {"device": "r1"})), SUBMIT])
    assert run.stop_reason == "submitted"
    answer = tool_messages(server)[0]["content"]
    assert json.loads(answer) == {"ok": False, "code": "rolled_back", "retriable": False, "changed": False,
                                  "message": "command 2 'bogus' failed: % Unknown command", "text": "rolled back"}
