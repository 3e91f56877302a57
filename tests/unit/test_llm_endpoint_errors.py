"""Endpoint failures of the LLM agent (issue 5, new-user pass): the run's error names the URL,
the cause and the bound, never the key; with the real ``openai`` client against
tests/chat_server.py or a closed port on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest
from chat_server import HANG, status

from ani.agents import AgentTask, Budget, create_agent
from ani.protocol import ToolResult, ToolSpec
from ani.trajectory import Trajectory

KEY_ENV = "ANI_TEST_ENDPOINT_KEY"
KEY = "sk-endpoint-secret-91c2"
TASK = AgentTask(task_class="t", variant_id="t-s1", request="Do it.")


class Adapter:
    level = "a1"

    def __init__(self) -> None:
        self.trajectory = Trajectory(level="a1")

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="get_topology", description="d", input_schema={"type": "object"})]

    def call(self, name, arguments):  # pragma: no cover - never reached here
        return ToolResult.success("ok")


def agent(base_url: str, **opts):
    return create_agent({"kind": "llm", "base_url": base_url, "model": "m", "api_key_env": KEY_ENV,
                         "retry_backoff_s": 0, **opts})


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def test_a_404_says_which_url_and_hints_at_v1(server):
    root = server.url[: -len("/v1")]  # base_url without /v1: the server answers 404
    server.script = [status(404)]
    run = agent(root, max_retries=4).run(TASK, Adapter(), Budget())
    assert run.stop_reason == "error"
    assert run.error == (f"chat-completions endpoint: POST {root}/chat/completions: HTTP 404 "
                         "(is base_url up to /v1? is the model name right?): scripted 404 (after 1 attempt)")


def test_a_401_names_the_key_variable_never_the_key(server):
    server.script = [(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})]
    run = agent(server.url, max_retries=2).run(TASK, Adapter(), Budget())
    assert run.error == (f"chat-completions endpoint: POST {server.url}/chat/completions: HTTP 401 "
                         f"(check the API key in ${KEY_ENV}): Incorrect API key provided: sk-*** "
                         "(after 1 attempt)")
    assert KEY not in run.error and KEY[-6:] not in str(run.trajectory.events)


def test_a_timeout_names_the_bound(server):
    server.script = [HANG, HANG]
    run = agent(server.url, max_retries=1, request_timeout_s=0.5).run(TASK, Adapter(), Budget())
    assert run.error == (f"chat-completions endpoint: POST {server.url}/chat/completions: "
                         "timeout after 0.5 s (after 2 attempts)")


def test_an_unknown_host_says_host_not_found():
    run = agent("http://no-such-host.invalid/v1", max_retries=0).run(TASK, Adapter(), Budget())
    assert run.error == ("chat-completions endpoint: POST http://no-such-host.invalid/v1/chat/completions: "
                         "host not found (no-such-host.invalid) (after 1 attempt)")


def test_a_refused_connection_counts_every_attempt():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = agent(f"http://127.0.0.1:{port}/v1", max_retries=4).run(TASK, Adapter(), Budget())
    assert run.error == (f"chat-completions endpoint: POST http://127.0.0.1:{port}/v1/chat/completions: "
                         "connection refused (after 5 attempts)")
