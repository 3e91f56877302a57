"""An endpoint that reports only ``usage.total_tokens`` (no prompt/completion split) still counts
against the token budget (issue 5, adversarial pass: it used to be ignored, so max_tokens never
ended the run). Real openai client against tests/chat_server.py."""

from __future__ import annotations

from chat_server import ChatServer, call, reply

from ani.agents import AgentTask, Budget, create_agent
from ani.campaign.live import event_line
from ani.protocol import ToolResult, ToolSpec
from ani.trajectory import Trajectory

TASK = AgentTask(task_class="t", variant_id="t-s1", request="Do it.")


class Adapter:
    level = "a1"

    def __init__(self) -> None:
        self.trajectory = Trajectory(level="a1")

    def tools(self):
        return [ToolSpec(name="get_topology", description="d", input_schema={"type": "object"})]

    def call(self, name, arguments):
        res = ToolResult.success("r1 r2")
        self.trajectory.log_call(name, arguments, res)
        return res


def total_only(*calls, total: int):
    body = reply(*calls, usage=None)
    body["usage"] = {"total_tokens": total}
    return body


def test_total_only_usage_counts_against_the_budget():
    s = ChatServer()
    try:
        s.script = [total_only(call("get_topology", {}), total=600), total_only(call("get_topology", {}), total=600),
                    reply(call("submit", {}))]
        agent = create_agent({"kind": "llm", "base_url": s.url, "model": "m", "api_key_env": None})
        run = agent.run(TASK, Adapter(), Budget(max_tokens=1000))
    finally:
        s.close()
    # 600 + 600 >= 1000 before the third request: the run ends on its token budget
    assert run.stop_reason == "max_tokens" and len(s.requests) == 2
    assert run.tokens == 1200 and (run.prompt_tokens, run.completion_tokens) == (0, 0)
    turns = [e for e in run.trajectory.events if e["event"] == "agent_turn"]
    assert [(t["prompt_tokens"], t["completion_tokens"], t["total_tokens"]) for t in turns] == [(None, None, 600)] * 2
    stop = [e for e in run.trajectory.events if e["event"] == "agent_stop"][0]
    assert (stop["prompt_tokens"], stop["completion_tokens"], stop["total_tokens"]) == (None, None, 1200)
    assert "600 tokens (total only)" in event_line(turns[0])
    assert event_line(stop).endswith("1200 tokens (total only)[/bold]")


def test_a_half_split_counts_the_total_and_a_full_split_is_unchanged():
    s = ChatServer()
    try:
        half = reply(call("get_topology", {}), usage=None)
        half["usage"] = {"prompt_tokens": 400, "total_tokens": 700}
        s.script = [half, reply(call("get_topology", {}), usage=(200, 20)), reply(call("submit", {}))]
        agent = create_agent({"kind": "llm", "base_url": s.url, "model": "m", "api_key_env": None})
        run = agent.run(TASK, Adapter(), Budget(max_tokens=10_000))
    finally:
        s.close()
    assert run.stop_reason == "submitted"
    # 400 prompt (reported) + 300 of the first total without a split + 200 + 20 + 100 + 10
    assert (run.prompt_tokens, run.completion_tokens) == (700, 30)
    assert run.tokens == 1030
